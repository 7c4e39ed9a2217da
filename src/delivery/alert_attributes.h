// The labels and annotations of a record's alert (man page: DELIVERY,
// "Alertmanager"), which Alertmanager gets and the presets show: one
// definition for both. Values are UTF-8, invalid bytes repaired to U+FFFD.
//
// Labels: [delivery] labels, the rule's `labels` over them, then ours over
// both: alertname = the rule's name, key = the record's key (only when it
// is not empty: Alertmanager drops a label whose value is "", so sending
// one would only hide that it is gone; an extra "key" is dropped then too),
// kind = the rule's kind.
//
// Annotations: summary (the {summary} field), count, threshold (or when),
// window, suppressed, and for a rule of more than one event counts
// ("failed=5, invalid=2"); then the rule's `annotations`, rendered over the
// delivery fields, over them.
#pragma once

#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/record.h"

namespace swthrottle::delivery {

using Attributes = std::map<std::string, std::string>;

Attributes alert_labels(const engine::Record& r, const std::vector<std::pair<std::string, std::string>>& extra);

// `fields`: record_fields() of r.
Attributes alert_annotations(const engine::Record& r, std::span<const std::string> fields);

// The rule's generator_url rendered ("" without one).
std::string generator_url(const engine::Record& r, std::span<const std::string> fields);

}  // namespace swthrottle::delivery
