// One [[rule]] table -> config::Rule (DESIGN.md §1), in two steps: parse_rule()
// reads what the table itself says; finish_rule() applies the defaults of
// the merged [settings] (which may come from another file) and checks what
// depends on them.
//
// Internal to src/config/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/rules.h"
#include "config/toml_walk.h"

namespace swthrottle::config {

inline const std::vector<std::string> kRuleKeys{"name", "kind", "threshold", "window", "when", "key", "message",
                                                "cooldown", "resolve", "exec", "ignore", "mode", "buckets", "max_keys",
                                                "event", "resolve_when", "fleet", "webhook", "alertmanager",
                                                // what delivery adds to an alert
                                                "labels", "annotations", "generator_url",
                                                // distinct values and first-seen values
                                                "distinct", "new", "remember", "learn", "max_values",
                                                // conditions that last, silence and sequences
                                                "for", "forget", "then", "within"};

// A rule with `distinct` has at most this many buckets: each may hold a
// 4 KiB sketch per key (window/distinct_count.h).
inline constexpr uint32_t kMaxDistinctBuckets = 60;

// A rule as its table gives it; the settings' defaults are not applied yet.
struct PendingRule {
  Rule rule;
  Pos name_pos;
  Pos window_pos;  // the value the window came from (threshold or window)
  std::optional<uint32_t> buckets;
  Pos buckets_pos;
  std::optional<Mode> mode;
  std::optional<uint64_t> max_keys;
  bool cooldown_set = false;
  Pos fleet_pos;  // where `fleet` was given (for the checks that need [fleet])
};

// The rule table t, the index-th [[rule]] of its file.
MaybeError parse_rule(const TomlReader& in, const toml::table& t, std::size_t index, PendingRule& out);

// Applies the settings' defaults, checks that the window divides into the
// buckets, and computes the fingerprint.
Result<Rule> finish_rule(PendingRule&& p, const Settings& s);

}  // namespace swthrottle::config
