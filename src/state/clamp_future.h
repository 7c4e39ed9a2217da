// A --state saved ahead of the wall clock (DESIGN.md §4, trusted time): a run
// that trusted a future stamp (before max_future, or with it off) saved a
// "now" that would make every later line late. It is clamped at load.
#pragma once

#include <cstdint>
#include <string>

#include "engine/engine_state.h"

namespace swthrottle::state {

// When the state's "now" or last log time is more than bound_ms ahead of
// wall_ms, clamps both to wall_ms, drops the windows dated ahead of it (their
// buckets and alert state belong to the untrusted time; they start fresh)
// and returns what it did, for stderr; else returns "" and changes nothing.
// bound_ms < 0: off.
std::string clamp_future(engine::EngineState& st, int64_t wall_ms, int64_t bound_ms);

}  // namespace swthrottle::state
