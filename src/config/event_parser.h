// The events of one [[rule]] ([[rule.event]] tables, with `match` and
// `fields`) -> the rule's events, event names and capture names (DESIGN.md §1).
//
// Internal to src/config/.
#pragma once

#include <string>
#include <vector>

#include "config/rules.h"
#include "config/toml_walk.h"

namespace swthrottle::config {

// Indexed by Field: the template names of the built-in fields, which no
// capture group may take.
inline const std::vector<std::string> kBuiltinFields{"rule",   "event", "count", "threshold",
                                                     "window", "key",   "line",  "suppressed"};

// The rule's `event` node (null when the table has none) -> rule.events,
// rule.event_names and rule.capture_names. `label` names the rule in errors.
MaybeError parse_events(const TomlReader& in, const toml::node* events_node, const toml::table& rule_table,
                        const std::string& label, Rule& rule);

}  // namespace swthrottle::config
