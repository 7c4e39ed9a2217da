// Reading the [fleet] table (man page: FLEET) -> FleetSettings, and a
// rule's `fleet` key. Where the Redis is, what a host is called, how long a
// line may wait, and what happens when Redis cannot be reached.
//
// Internal to src/config/.
#pragma once

#include <string>
#include <vector>

#include "config/rules.h"
#include "config/toml_walk.h"

namespace swthrottle::config {

inline const std::vector<std::string> kFleetKeys{"redis",   "namespace",      "host",          "sync",
                                                 "timeout", "on_unreachable", "allow_eviction"};

// The table t of one file into f (f.given set, f.file/line/col where it is).
MaybeError parse_fleet(const TomlReader& in, const toml::node& t, FleetSettings& f);

// A rule's fleet = "exact" | "batched".
Result<FleetMode> read_fleet_mode(const TomlReader& in, const toml::node& v);

// The limits of a fleet rule that depend on the rest of it (buckets at most
// kMaxFleetBuckets, buckets x events at most kMaxFleetCounters): "" when fine, else what is wrong.
inline constexpr uint32_t kMaxFleetBuckets = 600;
inline constexpr uint32_t kMaxFleetCounters = 4800;
std::string fleet_rule_problem(const Rule& r);

}  // namespace swthrottle::config
