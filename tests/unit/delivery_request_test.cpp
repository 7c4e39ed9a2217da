// Request building (delivery/request_builder.h): what one POST of a batch
// carries, byte for byte.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "delivery/request_builder.h"

using swthrottle::delivery::build_request;
using swthrottle::delivery::Delivery;
using swthrottle::delivery::Destination;
using swthrottle::delivery::Preset;
using swthrottle::delivery::RequestOptions;

namespace {

Delivery with_body(std::string id, std::string body) {
  Delivery d;
  d.id = std::move(id);
  d.body = std::move(body);
  return d;
}

}  // namespace

TEST_CASE("delivery request: a webhook batch is the bodies in a JSON array, byte for byte") {
  Destination d;
  d.preset = Preset::Webhook;
  d.url = "http://127.0.0.1:9/hook";
  d.headers = {"Authorization: Bearer t"};
  // What record bodies hold (util/json.h): escapes of control bytes, raw
  // UTF-8 and a raw DEL,
  // null, numbers past INT64_MAX, nested objects.
  const std::vector<Delivery> batch = {
      with_body("a1", R"({"id":"a1","type":"alert","line":"x\u001by\t\"q\" é )"
                      "\x7f"
                      R"(","time":null})"),
      with_body("b2", R"({"id":"b2","count":18446744073709551615,"counts":{"e":1,"f":0}})"),
  };
  RequestOptions o;
  o.webhook_arrays = true;
  const auto req = build_request(d, batch, o);
  CHECK(req.url == "http://127.0.0.1:9/hook");
  CHECK(req.body == "[" + batch[0].body + "," + batch[1].body + "]");
  CHECK(req.headers[0] == "Authorization: Bearer t");
  CHECK(req.headers[1] == "Content-Type: application/json");
  CHECK(req.headers[2].starts_with("Idempotency-Key: "));
  CHECK(req.headers[2] != "Idempotency-Key: a1");  // a digest of both ids

  // Without arrays, one record is its own body, its id the key.
  o.webhook_arrays = false;
  const auto one = build_request(d, std::vector<Delivery>{batch[0]}, o);
  CHECK(one.body == batch[0].body);
  CHECK(one.headers[2] == "Idempotency-Key: a1");
}

TEST_CASE("delivery request: an Alertmanager batch is one array of alerts, an earlier one-alert array unwrapped") {
  Destination d;
  d.preset = Preset::Alertmanager;
  d.url = "http://127.0.0.1:9093/";
  const std::string a = R"({"labels":{"alertname":"a"},"annotations":{},"startsAt":"2026-11-21T10:00:05.000Z"})";
  const std::string b = R"({"labels":{"alertname":"b"},"annotations":{},"startsAt":"2026-11-21T10:00:06.000Z"})";
  const std::vector<Delivery> batch = {with_body("1", a), with_body("2", "[" + b + "]")};
  const auto req = build_request(d, batch, RequestOptions{});
  CHECK(req.url == "http://127.0.0.1:9093/api/v2/alerts");
  CHECK(req.body == "[" + a + "," + b + "]");
  CHECK(req.headers == std::vector<std::string>{"Content-Type: application/json"});

  // A named one behind an authenticating proxy gets its headers too.
  d.headers = {"Authorization: Bearer t"};
  CHECK(build_request(d, batch, RequestOptions{}).headers ==
        std::vector<std::string>{"Authorization: Bearer t", "Content-Type: application/json"});
}

TEST_CASE("delivery request: a body that is not JSON goes into an array as a string, not as broken JSON") {
  Destination d;
  d.url = "http://127.0.0.1:9/hook";
  RequestOptions o;
  o.webhook_arrays = true;
  const auto req = build_request(d, std::vector<Delivery>{with_body("x", "{\"cut")}, o);
  CHECK(req.body == R"(["{\"cut"])");
}
