// Reading [[delivery.destination]] tables (man page: DELIVERY) ->
// DestinationSpec, and the checks that need every rules file: the rules a
// destination names, the labels and annotations its body names.
//
// Internal to src/config/.
#pragma once

#include <string>
#include <vector>

#include "config/rules.h"
#include "config/toml_walk.h"

namespace swthrottle::config {

inline const std::vector<std::string> kDestinationKeys{"name",     "preset", "url",  "url_file",
                                                       "key_file", "rules",  "body", "headers"};

// `destination` of [delivery]: an array of tables, appended to `out`.
MaybeError parse_destinations(const TomlReader& in, const toml::node& v, std::vector<DestinationSpec>& out);

// After every file is read: each destination's `rules` names a rule of the
// set, and each "{labels.X}" and "{annotations.X}" of a body is a label or
// annotation some alert has.
MaybeError check_destinations(const RuleSet& set);

}  // namespace swthrottle::config
