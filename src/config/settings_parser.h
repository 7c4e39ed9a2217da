// Reading settings (DESIGN.md §1): one file's [settings] table -> Settings. The
// readers of mode and buckets are public because a [[rule]] may set its own.
//
// Internal to src/config/.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/rules.h"
#include "config/toml_walk.h"

namespace swthrottle::config {

inline constexpr int64_t kMaxBuckets = 3600;

inline const std::vector<std::string> kSettingsKeys{"mode",  "buckets",  "time",       "timestamp", "timezone",
                                                    "year",  "max_keys", "max_future", "max_jump",  "quiet_after",
                                                    "input", "format",   "multiline"};

// A setting as one file gives it, to compare it with the other files'.
struct GivenSetting {
  std::string canon;  // compared across files
  std::string shown;  // as written, for messages
  Pos pos;
};

// Reads the table into s; `given` gets every key the table sets.
MaybeError parse_settings(const TomlReader& in, const toml::table& t, Settings& s,
                          std::map<std::string, GivenSetting>& given);

// mode = "efficient" | "accurate", in [settings] or a [[rule]].
Result<Mode> read_mode(const TomlReader& in, const toml::node& v);
// buckets = 1 .. kMaxBuckets, in [settings] or a [[rule]].
Result<uint32_t> read_buckets(const TomlReader& in, const toml::node& v);

}  // namespace swthrottle::config
