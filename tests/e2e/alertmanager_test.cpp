// End-to-end: the Alertmanager bodies of delivery/alertmanager_alert.h
// against a real Alertmanager (Debian's prometheus-alertmanager, started by
// support/alertmanager_server.h). What the API answers is what is checked:
// the firing alert is stored, active, with our labels; posting it again
// updates the one alert (Alertmanager identifies an alert by its labels);
// the resolved body ends it, and GET /api/v2/alerts never lists an alert
// whose endsAt has passed, whatever its filters.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "config/delivery_fields.h"
#include "delivery/alertmanager_alert.h"
#include "delivery/record_fields.h"
#include "support/alertmanager_server.h"
#include "support/json.h"
#include "support/rule_fixtures.h"
#include "util/json.h"

namespace {

using swthrottle::config::Rule;
using swthrottle::delivery::alertmanager_body;
using swthrottle::delivery::AlertmanagerOptions;
using swthrottle::delivery::AmAlert;
using swthrottle::delivery::FiringAlerts;
using swthrottle::engine::Record;
using swthrottle::engine::RecordType;
using swthrottle::test::AlertmanagerServer;
using swthrottle::test::HttpReply;
using swthrottle::test::parse_json;
using Clock = std::chrono::steady_clock;

// Every query flag on: the widest view the API gives.
constexpr const char* kAll = "?active=true&silenced=true&inhibited=true&unprocessed=true";
constexpr const char* kGenerator = "http://swthrottle.test/rules#ssh-bruteforce";

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Record record(const Rule& rule, RecordType type, int64_t t, std::string key) {
  return swthrottle::test::delivery_record(rule, type, t, std::move(key));
}

// The alerts GET /api/v2/alerts{query} lists whose alertname is ours.
std::vector<nlohmann::json> our_alerts(const AlertmanagerServer& am, const std::string& query) {
  const std::string body = am.alerts(query);
  auto j = parse_json(body);
  REQUIRE_MESSAGE(j.has_value(), body);
  REQUIRE(j->is_array());
  std::vector<nlohmann::json> out;
  for (const auto& a : *j)
    if (a["labels"].value("alertname", "") == "ssh-bruteforce") out.push_back(a);
  return out;
}

// Polls `done` until it holds, 10 s at most (the API answers at once on an
// idle machine; the bound is for a loaded one). Returns whether it held.
bool eventually(const std::function<bool()>& done) {
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  for (auto wait = std::chrono::milliseconds(5);; wait = std::min(wait * 2, std::chrono::milliseconds(200))) {
    if (done()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(wait);
  }
}

void post(const AlertmanagerServer& am, const std::vector<AmAlert>& alerts) {
  const std::string body = alertmanager_body(alerts);
  const HttpReply r = am.post_json("/api/v2/alerts", body);
  INFO("body: ", body);
  INFO("Alertmanager's log:\n", am.log_tail());
  REQUIRE_MESSAGE(r.status == 200, r.body);
}

// FiringAlerts::on_record with the record's delivery fields.
bool on_record(FiringAlerts& firing, const Record& r, int64_t now_ms, AmAlert& out) {
  return firing.on_record(r, swthrottle::delivery::record_fields(r, "id", "host"), now_ms, out);
}

// The rule's generator_url: a template over the delivery fields, rendered
// to kGenerator for this rule.
swthrottle::config::Template generator_template() {
  auto t =
      swthrottle::config::Template::parse("http://swthrottle.test/rules#{rule}", swthrottle::config::delivery_field,
                                          swthrottle::config::delivery_field_names());
  REQUIRE(t.ok());
  return *t;
}

}  // namespace

TEST_CASE("alertmanager e2e: fire, post again, resolve against a real Alertmanager") {
  AlertmanagerServer am;
  Rule rule = swthrottle::test::make_ssh();
  rule.resolve = true;
  rule.generator_url = generator_template();
  AlertmanagerOptions options;
  options.labels = {{"team", "ops"}};
  options.repost_ms = 60'000;
  FiringAlerts firing(options);

  const int64_t t0 = wall_ms() - 5'000;  // the record's (log) time, a little before now
  AmAlert fired;
  REQUIRE(on_record(firing, record(rule, RecordType::Alert, t0, "10.0.0.1"), wall_ms(), fired));
  post(am, {fired});

  std::vector<nlohmann::json> seen;
  const bool stored = eventually([&] {
    seen = our_alerts(am, "");
    return seen.size() == 1;
  });
  INFO("GET /api/v2/alerts: ", am.alerts(kAll));
  REQUIRE(stored);
  const nlohmann::json& a = seen[0];
  CHECK(a["labels"] ==
        nlohmann::json({{"alertname", "ssh-bruteforce"}, {"key", "10.0.0.1"}, {"kind", "alert"}, {"team", "ops"}}));
  CHECK(a["annotations"]["summary"] == "ssh-bruteforce: 7 in 1m");
  CHECK(a["annotations"]["count"] == "7");
  CHECK(a["status"]["state"] == "active");
  CHECK(a["generatorURL"] == kGenerator);
  std::string starts;
  swthrottle::append_rfc3339_ms(starts, t0);
  CHECK(a["startsAt"] == starts);
  const std::string fingerprint = a["fingerprint"];

  SUBCASE("posting the firing alert again updates the one alert") {
    // The repost of FiringAlerts::due, a repost interval on: endsAt moves on.
    std::vector<AmAlert> again = firing.due(wall_ms() + options.repost_ms);
    REQUIRE(again.size() == 1);
    post(am, again);
    std::string ends;
    swthrottle::append_rfc3339_ms(ends, again[0].ends_ms);
    const bool moved = eventually([&] {
      seen = our_alerts(am, kAll);
      return seen.size() == 1 && seen[0]["endsAt"] == ends;
    });
    INFO("GET /api/v2/alerts: ", am.alerts(kAll));
    CHECK(moved);
    REQUIRE(seen.size() == 1);
    CHECK(seen[0]["fingerprint"] == fingerprint);
    CHECK(seen[0]["startsAt"] == starts);
    CHECK(seen[0]["status"]["state"] == "active");

    // Another key is another alert: the sameness above is by labels.
    AmAlert other;
    REQUIRE(on_record(firing, record(rule, RecordType::Alert, t0, "10.0.0.2"), wall_ms(), other));
    post(am, {other});
    CHECK(eventually([&] { return our_alerts(am, kAll).size() == 2; }));
  }

  SUBCASE("the resolved body ends the alert") {
    AmAlert resolved;
    REQUIRE(on_record(firing, record(rule, RecordType::Resolved, wall_ms() - 1'000, "10.0.0.1"), wall_ms(), resolved));
    post(am, {resolved});
    // Gone from every view: the API leaves out an alert whose endsAt has
    // passed before it even looks at its state.
    const bool gone = eventually([&] { return our_alerts(am, kAll).empty() && our_alerts(am, "").empty(); });
    INFO("GET /api/v2/alerts: ", am.alerts(kAll));
    CHECK(gone);
    CHECK(our_alerts(am, "?active=false").empty());
  }

  SUBCASE("a resolved record for an alert not firing here: startsAt = endsAt is accepted") {
    FiringAlerts restarted(options);  // swthrottle restarted: it knows no firing alert
    AmAlert resolved;
    const int64_t t = wall_ms() - 1'000;
    REQUIRE(on_record(restarted, record(rule, RecordType::Resolved, t, "10.0.0.1"), wall_ms(), resolved));
    REQUIRE(resolved.starts_ms == resolved.ends_ms);
    post(am, {resolved});  // 200: equal times pass Alertmanager's check
    CHECK(eventually([&] { return our_alerts(am, kAll).empty(); }));
  }
}

TEST_CASE("alertmanager e2e: endsAt before startsAt is refused, which the resolved clamp avoids") {
  // The reason for FiringAlerts' max(): Alertmanager answers 400.
  AlertmanagerServer am;
  AmAlert a;
  a.labels = {{"alertname", "clock-check"}};
  a.starts_ms = wall_ms();
  a.ends_ms = a.starts_ms - 1;
  const HttpReply r = am.post_json("/api/v2/alerts", alertmanager_body({a}));
  CHECK(r.status == 400);
  CHECK(r.body.find("start time must be before end time") != std::string::npos);
}
