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

}  // namespace

HttpRequest build_request(const Destination& d, std::span<const Delivery> batch, const RequestOptions& o) {
  HttpRequest req;
  req.url = d.endpoint();
  req.timeout = o.timeout;
  req.basic_auth = d.basic_auth;
  if (d.kind == DestinationKind::Alertmanager) {
    req.body = alertmanager_array(batch);
    req.headers = {"Content-Type: application/json"};
    return req;
  }
  req.body = o.webhook_arrays ? webhook_array(batch) : batch.front().body;
  std::vector<std::string_view> ids;
  for (const Delivery& x : batch) ids.push_back(x.id);
  req.headers = d.headers;
  req.headers.push_back("Content-Type: application/json");
  req.headers.push_back("Idempotency-Key: " + batch_key(ids));
  return req;
}

}  // namespace swthrottle::delivery
