// A record's stable id (man page: DELIVERY): 32 hex digits from what the
// record says, so that a receiver (a webhook, an exec action) can drop a
// record it got twice.
#pragma once

#include <string>

#include "engine/record.h"

namespace swthrottle::output {

// From the record's type, rule, key, time, counts, suppressed tally and its
// first and last times: the same record decided again (a restart that
// replays, another host with the same log) gets the same id.
std::string record_id(const engine::Record& r);

}  // namespace swthrottle::output
