#include "delivery/request_builder.h"

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "delivery/record_body.h"

namespace swthrottle::delivery {
namespace {

using nlohmann::ordered_json;

// A body as a member of an array (see build_request).
ordered_json parsed(const std::string& body) {
  ordered_json j = ordered_json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return ordered_json(body);
  return j;
}

// `replace`: a body the outbox kept with invalid UTF-8 still makes valid JSON.
std::string dump(const ordered_json& j) { return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

std::string alertmanager_array(std::span<const Delivery> batch) {
  ordered_json all = ordered_json::array();
  for (const Delivery& d : batch) {
    ordered_json alert = parsed(d.body);
    if (alert.is_array()) {
      for (auto& a : alert) all.push_back(std::move(a));
    } else {
      all.push_back(std::move(alert));
    }
  }
  return dump(all);
}

std::string webhook_array(std::span<const Delivery> batch) {
  ordered_json all = ordered_json::array();
  for (const Delivery& d : batch) all.push_back(parsed(d.body));
  return dump(all);
}

// PagerDuty's routing key, first, over what the outbox kept: the key is a
// secret, so it is put in only here, on its way out.
std::string with_routing_key(const std::string& body, const std::string& key) {
  const ordered_json stored = parsed(body);
  ordered_json out = ordered_json::object();
  out["routing_key"] = key;
  if (stored.is_object())
    for (const auto& [name, value] : stored.items())
      if (name != "routing_key") out[name] = value;
  return dump(out);
}

}  // namespace

HttpRequest build_request(const Destination& d, std::span<const Delivery> batch, const RequestOptions& o) {
  HttpRequest req;
  req.url = d.endpoint(batch.front().path);
  req.timeout = o.timeout;
  req.basic_auth = d.basic_auth;
  req.headers = d.headers;
  req.headers.push_back("Content-Type: application/json");
  if (d.preset == Preset::Alertmanager) {
    req.body = alertmanager_array(batch);
    return req;
  }
  if (d.preset == Preset::Webhook) {
    req.body = o.webhook_arrays ? webhook_array(batch) : batch.front().body;
    std::vector<std::string_view> ids;
    for (const Delivery& x : batch) ids.push_back(x.id);
    req.headers.push_back("Idempotency-Key: " + batch_key(ids));
    return req;
  }
  // The other presets: one record per request.
  req.body = batch.front().body;
  if (d.preset == Preset::PagerDuty) req.body = with_routing_key(req.body, d.key);
  if (d.preset == Preset::Opsgenie) req.headers.push_back("Authorization: GenieKey " + d.key);
  return req;
}

}  // namespace swthrottle::delivery
