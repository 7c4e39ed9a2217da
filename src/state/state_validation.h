// What a run could have written into a --state file (DESIGN.md §7: never a crash,
// never a silent wrong answer). The codec (state_codec.h) checks the JSON's
// shape; this checks its values, in two steps:
//
//  out_of_range()        values no run of any rules writes: times outside
//    the years a timestamp can give (now_ms near INT64_MAX overflowed the
//    boundary arithmetic), times out of their order (a suppressed line's
//    first_ms after its last_ms, or either after the window's now_ms; an
//    alert after now_ms), counts beyond what any log could hold, an alert
//    state the state machine never reaches. The file is not ours or was
//    damaged: from_json() fails with the member path, and the state file
//    is moved aside whole (state_file.h), as a file that is not JSON.
//
//  drop_inconsistent()   values that only the rule's window can judge: a
//    bucket outside the window at its own now, counts for more events than
//    the rule has, a second window for a rule without `key`, a throttle
//    with an alert's state. A saved rule whose fingerprint equals the rule
//    loaded now has exactly that window, events and kind, so these too are
//    damage, but to one rule's entry: it is dropped and the rule starts
//    fresh, said on stderr; the other rules keep theirs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/rules.h"
#include "engine/engine_state.h"
#include "util/result.h"

namespace swthrottle::state {

// Times: 0000-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z, the years a
// timestamp can give (%Y reads 4 digits, epoch numbers end in 2286); -1, the
// "none" of EngineState, is inside. Bucket numbers are times divided by a
// width of at least 1 ms, so they have the same bound.
inline constexpr int64_t kMinTimeMs = -62'167'219'200'000;
inline constexpr int64_t kMaxTimeMs = 253'402'300'799'999;

// Lines counted in one bucket of one key, for one event: 2^40, twelve days
// of a million lines a second into one bucket. The efficient window's cells
// hold 32 bits each (2^32 - 1 at most per stripe, 64 stripes at most).
inline constexpr uint64_t kMaxBucketCount = uint64_t{1} << 40;
// Lines held back since the last summary or alert (a flood can go on for
// long): 2^48, nine years of a million lines a second.
inline constexpr uint64_t kMaxTally = uint64_t{1} << 48;

// The first value of `st` that no run writes: Error{what = "PATH: why"},
// PATH the member path as from_json() names it ("rules[0].windows[2].now_ms").
std::optional<Error> out_of_range(const engine::EngineState& st);

// Removes from `st` the entries of rules that `rules` has with the same
// fingerprint and whose windows that rule could not have written; returns
// one message per entry removed: "PATH: why; rule \"NAME\" starts fresh".
// Entries of other rules are left alone: a rule that is gone or changed is
// not loaded anyway (engine::Engine::load_state). Run it before anything
// else edits `st`, so that the paths are those of the file.
std::vector<std::string> drop_inconsistent(engine::EngineState& st, const config::RuleSet& rules);

}  // namespace swthrottle::state
