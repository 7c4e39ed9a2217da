// Checks of the RE2 patterns a rules file gives (event match, ignore,
// timestamp match): Perl syntax RE2 lacks, with what to write instead; RE2's
// own compile errors; an event's named capture groups. Errors point at the
// place in the pattern, inside the file.
//
// Internal to src/config/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <re2/re2.h>

#include "config/toml_walk.h"

namespace swthrottle::config {

// Where a pattern is used: the advice for a negative lookaround differs.
enum class RegexUse { Event, Ignore, Timestamp };

// The pattern in the string value v, compiled; or why it cannot be.
Result<std::unique_ptr<RE2>> compile_regex(const TomlReader& in, const toml::node& v, RegexUse use);

// The named capture groups of the event pattern `match` (compiled as re), in
// group order. A name may not appear twice in one pattern, nor be one of
// `builtin_fields` (template fields are looked up by name).
Result<std::vector<std::string>> event_captures(const TomlReader& in, const toml::node& match, const RE2& re,
                                                const std::vector<std::string>& builtin_fields);

}  // namespace swthrottle::config
