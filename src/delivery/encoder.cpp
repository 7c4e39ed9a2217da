#include "delivery/encoder.h"

#include <nlohmann/json.hpp>

#include "config/delivery_fields.h"
#include "delivery/chat_bodies.h"
#include "delivery/pager_bodies.h"
#include "delivery/record_body.h"
#include "delivery/record_fields.h"
#include "delivery/record_view.h"
#include "util/json.h"

namespace swthrottle::delivery {
namespace {

using nlohmann::ordered_json;

std::vector<std::string> repaired(std::vector<std::string> fields) {
  for (std::string& f : fields) {
    std::string out;
    append_utf8_repaired(out, f);
    f = std::move(out);
  }
  return fields;
}

// The user's body for v, with what the preset cannot do without added
// where the body left it out.
std::string from_template(const Destination& d, const RecordView& v) {
  const bool slack = d.preset == Preset::Slack;
  std::vector<std::string> fields(v.fields.begin(), v.fields.end());
  if (slack)
    for (std::string& f : fields) f = slack_escaped(f);
  auto attribute = [&](std::string_view name) -> std::string {
    const bool label = name.starts_with("labels.");
    const Attributes& from = label ? v.labels : v.annotations;
    auto it = from.find(std::string(name.substr(name.find('.') + 1)));
    if (it == from.end()) return "";
    return slack ? slack_escaped(it->second) : it->second;
  };
  const std::string text = d.body->render(fields, attribute);
  ordered_json body = ordered_json::parse(text);
  if (!body.is_object()) return text;
  auto fill = [&](const char* key, ordered_json value) {
    if (!body.contains(key)) body[key] = std::move(value);
  };
  if (d.preset == Preset::Discord) fill("allowed_mentions", {{"parse", ordered_json::array()}});
  if (d.preset == Preset::PagerDuty) {
    fill("event_action", "trigger");
    fill("dedup_key", v.fields[config::kDfDedupKey]);
  }
  if (d.preset == Preset::Opsgenie) fill("alias", v.fields[config::kDfDedupKey]);
  return body.dump();
}

// The preset's own body of a record v, and its path.
Encoded preset_body(const Destination& d, const RecordView& v, const std::string& id) {
  switch (d.preset) {
    case Preset::Slack: return {slack_body(v), ""};
    case Preset::Discord: return {discord_body(v), ""};
    case Preset::Teams: return {teams_body(v), ""};
    case Preset::PagerDuty: return {pagerduty_body(v), ""};
    case Preset::Opsgenie:
      if (v.record.type == engine::RecordType::Resolved) return {opsgenie_close_body(v), opsgenie_close_path(v)};
      return {opsgenie_create_body(v), "/v2/alerts"};
    case Preset::Webhook:
    case Preset::Alertmanager: break;
  }
  return {webhook_body(v.record, id), ""};
}

}  // namespace

std::optional<Encoded> encode(const Destination& d, const engine::Record& r, const std::string& id,
                              const EncodeContext& ctx) {
  if (d.preset == Preset::Alertmanager || r.rule == nullptr || !takes(d.preset, r.type)) return std::nullopt;
  // A webhook without a template gets the record itself, as --format json
  // writes it: nothing else to compute.
  if (d.preset == Preset::Webhook && !d.body) return Encoded{webhook_body(r, id), ""};
  const std::vector<std::string> fields = repaired(record_fields(r, id, ctx.host));
  const RecordView v{r, fields, alert_labels(r, ctx.labels), alert_annotations(r, fields), generator_url(r, fields)};
  Encoded preset = preset_body(d, v, id);
  // A PagerDuty resolve and an Opsgenie close say nothing a template could
  // add to: they stay the preset's.
  const bool closes =
      r.type == engine::RecordType::Resolved && (d.preset == Preset::PagerDuty || d.preset == Preset::Opsgenie);
  if (d.body && !closes) preset.body = from_template(d, v);
  return preset;
}

}  // namespace swthrottle::delivery
