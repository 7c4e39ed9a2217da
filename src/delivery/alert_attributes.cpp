#include "delivery/alert_attributes.h"

#include "config/delivery_fields.h"
#include "util/json.h"

namespace swthrottle::delivery {
namespace {

std::string repaired(std::string_view s) {
  std::string out;
  append_utf8_repaired(out, s);
  return out;
}

std::string rendered(const config::Template& t, std::span<const std::string> fields) {
  const std::vector<std::string_view> values(fields.begin(), fields.end());
  std::string out;
  t.render(out, values);
  return repaired(out);
}

}  // namespace

Attributes alert_labels(const engine::Record& r, const std::vector<std::pair<std::string, std::string>>& extra) {
  const config::Rule& rule = *r.rule;
  Attributes labels;
  for (const auto& [name, value] : extra) labels[name] = repaired(value);
  for (const auto& [name, value] : rule.labels) labels[name] = repaired(value);
  // Ours last, so that they win over an extra label of the same name.
  labels["alertname"] = repaired(rule.name);
  // Even an empty key is ours: an extra "key" label must not make the alert
  // of a rule without key look like one of its keys.
  if (!r.key.empty()) {
    labels["key"] = repaired(r.key);
  } else {
    labels.erase("key");
  }
  labels["kind"] = std::string(to_string(rule.kind));
  return labels;
}

Attributes alert_annotations(const engine::Record& r, std::span<const std::string> fields) {
  const config::Rule& rule = *r.rule;
  Attributes a;
  a["summary"] = repaired(fields[config::kDfSummary]);
  a["count"] = std::to_string(r.count);
  if (rule.threshold) {
    a["threshold"] = std::to_string(*rule.threshold);
  } else if (!rule.when_text.empty()) {
    a["when"] = repaired(rule.when_text);
  }
  a["window"] = rule.window_text;
  a["suppressed"] = std::to_string(r.suppressed);
  if (rule.event_names.size() > 1 && r.counts.size() == rule.event_names.size())
    a["counts"] = repaired(fields[config::kDfCounts]);
  for (const auto& [name, tpl] : rule.annotations) a[name] = rendered(tpl, fields);
  return a;
}

std::string generator_url(const engine::Record& r, std::span<const std::string> fields) {
  if (r.rule == nullptr || !r.rule->generator_url) return "";
  return rendered(*r.rule->generator_url, fields);
}

}  // namespace swthrottle::delivery
