// Reading the [delivery] table (man page: DELIVERY) -> DeliverySettings, and
// a rule's `webhook` and `alertmanager` keys: where alert, resolved and
// summary records are delivered, and how hard to try.
//
// Internal to src/config/.
#pragma once

#include <string>
#include <vector>

#include "config/rules.h"
#include "config/toml_walk.h"

namespace swthrottle::config {

inline const std::vector<std::string> kDeliveryKeys{"webhook", "alertmanager", "timeout",         "retry_for",
                                                    "batch",   "token_file",   "basic_auth_file", "labels",
                                                    "repost",  "outbox_max",   "outbox_full",     "drain"};

// The table t of one file into d (d.given set, d.file/line/col where it is).
MaybeError parse_delivery(const TomlReader& in, const toml::node& t, DeliverySettings& d);

// A `webhook` or `alertmanager` value: one URL or an array of them.
MaybeError read_urls(const TomlReader& in, const toml::node& v, std::string_view key, std::vector<std::string>& out);

}  // namespace swthrottle::config
