#include "delivery/pager_bodies.h"

#include <nlohmann/json.hpp>

#include "config/delivery_fields.h"

namespace swthrottle::delivery {
namespace {

using nlohmann::ordered_json;

// The services' limits (characters): PagerDuty's summary; Opsgenie's
// message, description, source and each detail.
constexpr std::size_t kPagerDutySummary = 1024;
constexpr std::size_t kOpsgenieMessage = 130;
constexpr std::size_t kOpsgenieDescription = 15000;
constexpr std::size_t kOpsgenieSource = 100;
constexpr std::size_t kDetail = 1000;

const std::string& field(const RecordView& v, config::DeliveryField f) { return v.fields[static_cast<std::size_t>(f)]; }

std::string dump(const ordered_json& j) { return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

std::string severity(const RecordView& v) {
  auto it = v.labels.find("severity");
  if (it != v.labels.end())
    for (const char* s : {"critical", "error", "warning", "info"})
      if (it->second == s) return s;
  return "error";
}

ordered_json details(const RecordView& v) {
  ordered_json out = ordered_json::object();
  for (const auto& [name, value] : record_facts(v)) out[name] = cut_text(value, kDetail);
  return out;
}

std::string headline(const RecordView& v) { return record_title(v) + ": " + record_text(v); }

}  // namespace

std::string pagerduty_body(const RecordView& v) {
  ordered_json body = ordered_json::object();
  if (v.record.type != engine::RecordType::Alert) {
    body["event_action"] = "resolve";
    body["dedup_key"] = field(v, config::kDfDedupKey);
    return dump(body);
  }
  body["event_action"] = "trigger";
  body["dedup_key"] = field(v, config::kDfDedupKey);
  ordered_json payload = ordered_json::object();
  payload["summary"] = cut_text(headline(v), kPagerDutySummary);
  payload["source"] = field(v, config::kDfHost);
  payload["severity"] = severity(v);
  if (!field(v, config::kDfTime).empty()) payload["timestamp"] = field(v, config::kDfTime);
  payload["component"] = field(v, config::kDfRule);
  payload["custom_details"] = details(v);
  body["payload"] = std::move(payload);
  body["client"] = "swthrottle";
  if (!v.generator_url.empty()) body["links"] = ordered_json::array({{{"href", v.generator_url}, {"text", "source"}}});
  return dump(body);
}

std::string opsgenie_create_body(const RecordView& v) {
  ordered_json body = ordered_json::object();
  body["message"] = cut_text(headline(v), kOpsgenieMessage);
  body["alias"] = field(v, config::kDfDedupKey);
  body["description"] = cut_text(record_text(v), kOpsgenieDescription);
  body["details"] = details(v);
  body["entity"] = field(v, config::kDfRule);
  body["source"] = cut_text("swthrottle on " + field(v, config::kDfHost), kOpsgenieSource);
  return dump(body);
}

std::string opsgenie_close_body(const RecordView& v) {
  ordered_json body = ordered_json::object();
  body["source"] = cut_text("swthrottle on " + field(v, config::kDfHost), kOpsgenieSource);
  body["note"] = cut_text("resolved: " + record_text(v), kOpsgenieDescription);
  return dump(body);
}

std::string opsgenie_close_path(const RecordView& v) {
  // The alias is hex digits: nothing in it needs escaping in a path.
  return "/v2/alerts/" + field(v, config::kDfDedupKey) + "/close?identifierType=alias";
}

}  // namespace swthrottle::delivery
