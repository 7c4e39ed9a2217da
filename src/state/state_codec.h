// The text of a --state file (DESIGN.md §6, §7): engine::EngineState <-> JSON,
// written and read with nlohmann-json.
//
// Format (version 1), one JSON object; the writer puts each window on a line
// of its own so that a file can be read and grepped by key:
//
//   {"swthrottle_state":1,"saved_at":"2026-11-21T10:00:05.000Z","now_ms":N,"last_log_ms":N,"rules":[
//   {"rule":"ssh","fingerprint":"...","windows":[
//   {"key":"10.0.0.1","now_ms":N,"buckets":[[B,[c0,c1]],...],
//    "pending":{"suppressed":N,"first_ms":N,"last_ms":N},"firing":false,"announced":false,
//    "alerted":false,"last_alert_ms":N,"alert_suppressed":N}]}]}
//
// A window of a rule with `distinct` adds "distinct":{"exact":[[HASH,B],...]}
// and, while it estimates, "overflow_bucket":B,"sketches":[[B,"BASE64"],...]
// (4096 HyperLogLog registers each); a rule with `new` adds, before its
// "windows", "seen":{"learn_until_ms":N,"values":[[HASH,MS],...]} (least
// recently seen first). HASH: a value's hash, 16 hex digits.
//
// Strings (rule names, fingerprints, keys) are arbitrary bytes, keys being
// built from log captures. A string that is valid UTF-8 (util/utf8.h) is
// written as a JSON string (NUL and control bytes escaped as JSON does, the
// rest raw); any other is written as {"base64":"..."} (RFC 4648, padded), so
// every byte sequence round-trips exactly while ordinary keys stay readable.
// "saved_at" is for people only; the reader ignores it and any member it
// does not know.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/engine_state.h"
#include "util/result.h"

namespace swthrottle::state {

inline constexpr int kVersion = engine::EngineState::kVersion;

// The state as the file's text (ends with "\n"). saved_at_ms: wall clock, UTC.
std::string to_json(const engine::EngineState& s, int64_t saved_at_ms);

// Parses a state file's text. Errors name the place: `line`/`col` for text
// that is not JSON, a member path such as "rules[0].windows[2].now_ms" in
// `what` for a value of the wrong type or a missing member. A file of a newer
// version is an error naming both versions. So is a value no run writes
// (state_validation.h's out_of_range(): a time past 9999, a count past
// 2^40, an alert state the state machine never reaches), with its member
// path. `file` is left empty.
Result<engine::EngineState> from_json(std::string_view text);

}  // namespace swthrottle::state
