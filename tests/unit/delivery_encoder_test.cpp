// Encoding (delivery/encoder.h) and the names and secrets of destinations
// (delivery/destination.h, delivery/redact.h, config/http_url.h): what a
// preset's body holds under a user's template, and what messages may say.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/body_template.h"
#include "config/http_url.h"
#include "delivery/destination.h"
#include "delivery/encoder.h"
#include "delivery/redact.h"
#include "support/rule_fixtures.h"

using swthrottle::config::BodyTemplate;
using swthrottle::config::url_origin;
using swthrottle::delivery::Destination;
using swthrottle::delivery::encode;
using swthrottle::delivery::EncodeContext;
using swthrottle::delivery::Preset;
using swthrottle::engine::RecordType;
using swthrottle::test::delivery_record;
using swthrottle::test::kT0;
using json = nlohmann::json;

namespace {

Destination with_body(Preset p, const std::string& body) {
  Destination d;
  d.preset = p;
  d.name = "d";
  d.url = "http://127.0.0.1:9/x";
  auto t = BodyTemplate::parse(body);
  REQUIRE(t.ok());
  d.body = std::make_shared<const BodyTemplate>(std::move(*t));
  return d;
}

json body_of(const Destination& d, RecordType type) {
  static const auto rule = swthrottle::test::make_ssh();
  const auto r = delivery_record(rule, type, kT0, "10.0.0.1");
  const auto e = encode(d, r, "0123", EncodeContext{{}, "web1"});
  REQUIRE(e.has_value());
  return json::parse(e->body);
}

}  // namespace

TEST_CASE("delivery encode: a template's body gets what its preset cannot go without, unless it says otherwise") {
  const json pd = body_of(with_body(Preset::PagerDuty, R"({"payload": {"summary": "{summary}"}})"), RecordType::Alert);
  CHECK(pd["event_action"] == "trigger");
  CHECK(pd["dedup_key"].get<std::string>().size() == 32);
  CHECK(pd["payload"]["summary"] == "ssh-bruteforce: 7 in 1m");
  CHECK(!pd.contains("routing_key"));  // put in when sent, never kept

  const json own = body_of(with_body(Preset::PagerDuty, R"({"event_action": "acknowledge", "dedup_key": "{key}"})"),
                           RecordType::Alert);
  CHECK(own["event_action"] == "acknowledge");
  CHECK(own["dedup_key"] == "10.0.0.1");

  const json og = body_of(with_body(Preset::Opsgenie, R"({"message": "{rule}"})"), RecordType::Alert);
  CHECK(og["alias"] == pd["dedup_key"]);  // one key of the rule and key, for both services

  const json discord = body_of(with_body(Preset::Discord, R"({"content": "{summary}"})"), RecordType::Alert);
  CHECK(discord["allowed_mentions"] == json({{"parse", json::array()}}));
}

TEST_CASE("delivery encode: a PagerDuty resolve and an Opsgenie close stay the preset's under a template") {
  const json pd = body_of(with_body(Preset::PagerDuty, R"({"x": "{rule}"})"), RecordType::Resolved);
  CHECK(pd == json({{"event_action", "resolve"}, {"dedup_key", pd["dedup_key"]}}));
  Destination og = with_body(Preset::Opsgenie, R"({"x": "{rule}"})");
  static const auto rule = swthrottle::test::make_ssh();
  const auto e = encode(og, delivery_record(rule, RecordType::Resolved, kT0), "id", EncodeContext{{}, "web1"});
  REQUIRE(e.has_value());
  CHECK(e->path.starts_with("/v2/alerts/"));
  CHECK(e->path.ends_with("/close?identifierType=alias"));
  CHECK(json::parse(e->body).contains("note"));
}

TEST_CASE("delivery encode: which presets take which records") {
  static const auto rule = swthrottle::test::make_ssh();
  Destination d;
  d.url = "http://127.0.0.1:9/x";
  const auto summary = delivery_record(rule, RecordType::Summary, kT0);
  for (Preset p : {Preset::Webhook, Preset::Slack, Preset::Discord, Preset::Teams}) {
    d.preset = p;
    CHECK(encode(d, summary, "id", {}).has_value());
  }
  for (Preset p : {Preset::PagerDuty, Preset::Opsgenie, Preset::Alertmanager}) {
    d.preset = p;
    CHECK_FALSE(encode(d, summary, "id", {}).has_value());
  }
}

TEST_CASE("delivery destinations: labels are names or origins, never URLs, and unique") {
  CHECK(url_origin("https://hooks.slack.com/services/T0/B0/XXXX") == "https://hooks.slack.com:443");
  CHECK(url_origin("http://user:pw@10.0.0.1:8080/a?b") == "http://10.0.0.1:8080");
  CHECK(url_origin("http://[::1]/x") == "http://[::1]:80");
  CHECK(url_origin("ftp://h/x") == "");
  CHECK(url_origin("http://h\x01st/x") == "");

  std::vector<Destination> ds(4);
  ds[0].url = "http://h:9/a";
  ds[1].url = "http://h:9/b";
  ds[2].url = "https://other/c";
  ds[3].name = "ops-slack";
  ds[3].url = "http://h:9/c";
  swthrottle::delivery::unique_labels(ds);
  CHECK(ds[0].label == "http://h:9");
  CHECK(ds[1].label == "http://h:9 #2");
  CHECK(ds[2].label == "https://other:443");
  CHECK(ds[3].label == "ops-slack");
  // The identity: a named one by its name, an unnamed one by its URL.
  CHECK(ds[0].number() != ds[1].number());
  Destination moved = ds[3];
  moved.url = "http://elsewhere/c";
  CHECK(moved.number() == ds[3].number());
}

TEST_CASE("delivery destinations: a message loses every secret of its destination") {
  Destination d;
  d.url = "https://hooks.example/services/T0/B0/SECRETPATH?token=QS";
  d.headers = {"X-Token: HEADERVAL", "Authorization: Bearer BEARERTOKEN"};
  d.basic_auth = "user:PASSWORD";
  d.key = "ROUTINGKEY";
  const std::string said =
      "HTTP 403: bad token BEARERTOKEN for https://hooks.example/services/T0/B0/SECRETPATH?"
      "token=QS (path /services/T0/B0/SECRETPATH?token=QS, key ROUTINGKEY, HEADERVAL, "
      "PASSWORD)";
  const std::string shown = swthrottle::delivery::redact(said, d.secrets());
  for (const char* secret : {"SECRETPATH", "token=QS", "BEARERTOKEN", "HEADERVAL", "PASSWORD", "ROUTINGKEY"}) {
    CAPTURE(secret);
    CHECK(shown.find(secret) == std::string::npos);
  }
  CHECK(shown.starts_with("HTTP 403: bad token <redacted> for <redacted> (path <redacted>, key <redacted>"));
}
