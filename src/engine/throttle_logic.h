// The throttle kind (DESIGN.md §3): a line passes while its key's window
// holds fewer than Y passed lines, else it is held back and tallied; the
// tally is reported as a summary. Internal to src/engine/.
#pragma once

#include <cstdint>

#include "engine/rule_logic.h"

namespace swthrottle::engine {

// Counts the hit's line against `limit` passed lines in its window (a fleet
// rule's limit is what the fleet said): passes or holds it back, and adds
// the summary a passing line reports first.
Decision decide_throttle(RuleState& rs, Hit& hit, uint64_t limit);

}  // namespace swthrottle::engine
