// The alert kind's decision, shared by the kinds that decide as an alert
// rule does once their window has counted a line (distinct_logic.cpp).
// Internal to src/engine/.
#pragma once

#include "engine/rule_logic.h"
#include "window/window.h"

namespace swthrottle::engine {

// What the window's outcome `o` for the hit's line means: the verdict, the
// stats, and the alert or resolved record (with the counts the window left
// in hit.counts, RuleState::counts_width of them).
Decision alert_decision(RuleState& rs, Hit& hit, const window::AlertOutcome& o);

}  // namespace swthrottle::engine
