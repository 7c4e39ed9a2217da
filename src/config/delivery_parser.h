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

inline const std::vector<std::string> kDeliveryKeys{
    "webhook", "alertmanager", "timeout",    "retry_for",   "batch", "token_file", "basic_auth_file",
    "labels",  "repost",       "outbox_max", "outbox_full", "drain", "destination"};

// The table t of one file into d (d.given set, d.file/line/col where it is).
MaybeError parse_delivery(const TomlReader& in, const toml::node& t, DeliverySettings& d);

// "" when `name` is a label (or annotation) name Alertmanager takes, else why not.
std::string label_name_problem(std::string_view name);

// A table of Alertmanager labels (`labels` of [delivery] and of a rule):
// names [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__", string values.
// `where` names it in messages ("delivery label", "label").
MaybeError read_labels(const TomlReader& in, const toml::node& v, std::string_view where,
                       std::vector<std::pair<std::string, std::string>>& out);

// A `webhook` or `alertmanager` value: one URL or an array of them.
MaybeError read_urls(const TomlReader& in, const toml::node& v, std::string_view key, std::vector<std::string>& out);

}  // namespace swthrottle::config
