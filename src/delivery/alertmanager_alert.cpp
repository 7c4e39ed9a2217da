#include "delivery/alertmanager_alert.h"

#include <algorithm>
#include <string_view>

#include <nlohmann/json.hpp>

#include "delivery/alert_attributes.h"
#include "util/json.h"

namespace swthrottle::delivery {

namespace {

std::string rfc3339(int64_t ms) {
  std::string out;
  append_rfc3339_ms(out, ms);
  return out;
}

// The record's time, or now for one written before any log time was seen.
int64_t record_time(const engine::Record& r, int64_t now_ms) { return r.has_time ? r.time_ms : now_ms; }

}  // namespace

bool valid_label_name(std::string_view name) {
  if (name.empty()) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(name[0])) return false;
  return std::all_of(name.begin() + 1, name.end(), [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

namespace {

nlohmann::ordered_json alert_json(const AmAlert& a) {
  using nlohmann::ordered_json;
  // Every string is repaired when the alert is made (alert_attributes.h),
  // so the strict serializer takes them all.
  ordered_json j = ordered_json::object();
  j["labels"] = ordered_json::object();
  for (const auto& [name, value] : a.labels) j["labels"][name] = value;
  j["annotations"] = ordered_json::object();
  for (const auto& [name, value] : a.annotations) j["annotations"][name] = value;
  j["startsAt"] = rfc3339(a.starts_ms);
  if (a.ends_ms != 0) j["endsAt"] = rfc3339(a.ends_ms);
  if (!a.generator_url.empty()) j["generatorURL"] = a.generator_url;
  return j;
}

}  // namespace

std::string alertmanager_alert_body(const AmAlert& a) { return alert_json(a).dump(); }

std::string alertmanager_body(const std::vector<AmAlert>& alerts) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const AmAlert& a : alerts) all.push_back(alert_json(a));
  return all.dump();
}

AmAlert FiringAlerts::make_alert(const engine::Record& r, std::span<const std::string> fields) const {
  AmAlert a;
  a.labels = alert_labels(r, options_.labels);
  a.annotations = alert_annotations(r, fields);
  a.generator_url = generator_url(r, fields);
  return a;
}

int64_t FiringAlerts::firing_end(int64_t starts_ms, int64_t now_ms) const {
  return std::max(now_ms, starts_ms) + 3 * options_.repost_ms;
}

bool FiringAlerts::on_record(const engine::Record& r, std::span<const std::string> fields, int64_t now_ms,
                             AmAlert& out) {
  if (r.rule == nullptr || (r.type != engine::RecordType::Alert && r.type != engine::RecordType::Resolved))
    return false;
  const int64_t t = record_time(r, now_ms);
  auto id = std::make_pair(r.rule->name, r.key);
  auto it = firing_.find(id);

  if (r.type == engine::RecordType::Resolved) {
    out = make_alert(r, fields);
    out.starts_ms = it != firing_.end() ? it->second.alert.starts_ms : t;
    out.ends_ms = std::max(t, out.starts_ms);
    if (it != firing_.end()) firing_.erase(it);
    return true;
  }

  AmAlert a = make_alert(r, fields);
  a.starts_ms = it != firing_.end() ? it->second.alert.starts_ms : t;
  a.ends_ms = firing_end(a.starts_ms, now_ms);
  Firing& f = firing_[std::move(id)];
  f.alert = a;
  f.last_post_ms = now_ms;
  f.natural_end_ms = r.rule->resolve ? 0 : t + r.rule->cooldown_ms;
  out = std::move(a);
  return true;
}

std::vector<AmAlert> FiringAlerts::due(int64_t now_ms) {
  std::vector<AmAlert> out;
  for (auto it = firing_.begin(); it != firing_.end();) {
    Firing& f = it->second;
    if (f.natural_end_ms != 0 && now_ms >= f.natural_end_ms) {
      f.alert.ends_ms = std::max(f.natural_end_ms, f.alert.starts_ms);
      out.push_back(std::move(f.alert));
      it = firing_.erase(it);
      continue;
    }
    if (now_ms - f.last_post_ms >= options_.repost_ms) {
      f.alert.ends_ms = firing_end(f.alert.starts_ms, now_ms);
      f.last_post_ms = now_ms;
      out.push_back(f.alert);
    }
    ++it;
  }
  return out;
}

}  // namespace swthrottle::delivery
