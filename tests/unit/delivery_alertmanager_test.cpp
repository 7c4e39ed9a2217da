#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "delivery/alertmanager_alert.h"
#include "delivery/record_fields.h"
#include "support/json.h"
#include "support/rule_fixtures.h"

using swthrottle::config::Rule;
using swthrottle::delivery::alertmanager_body;
using swthrottle::delivery::AlertmanagerOptions;
using swthrottle::delivery::AmAlert;
using swthrottle::delivery::FiringAlerts;
using swthrottle::delivery::valid_label_name;
using swthrottle::engine::Record;
using swthrottle::engine::RecordType;
using swthrottle::test::kT0;
using swthrottle::test::parse_json;

namespace {

constexpr int64_t kRepost = 60'000;

// ssh-bruteforce (5 per 1m, events failed and invalid), with resolve.
Rule ssh_rule() {
  Rule r = swthrottle::test::make_ssh();
  r.resolve = true;
  r.cooldown_ms = 60'000;
  return r;
}

Record record(const Rule& rule, RecordType type, int64_t t, std::string key = "10.0.0.1") {
  return swthrottle::test::delivery_record(rule, type, t, std::move(key));
}

AlertmanagerOptions options() {
  AlertmanagerOptions o;
  o.labels = {{"team", "ops"}, {"env", "prod"}};
  o.repost_ms = kRepost;
  return o;
}

// The one alert of a body, parsed; fails the test when the body is not
// exactly a JSON array of one object.
nlohmann::json only_alert(const std::string& body) {
  auto j = parse_json(body);
  REQUIRE_MESSAGE(j.has_value(), body);
  REQUIRE(j->is_array());
  REQUIRE(j->size() == 1);
  return (*j)[0];
}

// FiringAlerts::on_record with the record's delivery fields.
bool on_record(FiringAlerts& firing, const Record& r, int64_t now_ms, AmAlert& out) {
  return firing.on_record(r, swthrottle::delivery::record_fields(r, "id", "host"), now_ms, out);
}

}  // namespace

TEST_CASE("alertmanager body: exact text and shape") {
  AmAlert a;
  a.labels = {{"alertname", "ssh-bruteforce"}, {"key", "10.0.0.1"}, {"kind", "alert"}};
  a.annotations = {{"summary", "7 \"failures\""}, {"count", "7"}};
  a.starts_ms = kT0;
  a.ends_ms = kT0 + 180'000;
  a.generator_url = "http://example.com/rules#ssh";
  const std::string body = alertmanager_body({a});
  CHECK(body == R"([{"labels":{"alertname":"ssh-bruteforce","key":"10.0.0.1","kind":"alert"},)"
                R"("annotations":{"count":"7","summary":"7 \"failures\""},)"
                R"("startsAt":"2026-11-21T10:00:05.000Z","endsAt":"2026-11-21T10:03:05.000Z",)"
                R"("generatorURL":"http://example.com/rules#ssh"}])");

  const nlohmann::json j = only_alert(body);
  std::vector<std::string> members;
  for (const auto& [name, value] : j.items()) members.push_back(name);
  CHECK(members == std::vector<std::string>{"annotations", "endsAt", "generatorURL", "labels", "startsAt"});
  CHECK(j["labels"]["key"] == "10.0.0.1");
  CHECK(j["annotations"]["summary"] == "7 \"failures\"");

  SUBCASE("no endsAt when ends_ms is 0, no generatorURL when it is empty") {
    a.ends_ms = 0;
    a.generator_url.clear();
    const nlohmann::json k = only_alert(alertmanager_body({a}));
    CHECK(k.size() == 3);
    CHECK(!k.contains("endsAt"));
    CHECK(!k.contains("generatorURL"));
    CHECK(k["startsAt"] == "2026-11-21T10:00:05.000Z");
  }
  SUBCASE("several alerts, and none") {
    auto j2 = parse_json(alertmanager_body({a, a}));
    REQUIRE(j2.has_value());
    CHECK(j2->size() == 2);
    CHECK(alertmanager_body({}) == "[]");
  }
}

TEST_CASE("alertmanager alert: labels, annotations and times of an alert record") {
  const Rule rule = ssh_rule();
  FiringAlerts firing(options());
  AmAlert a;
  const int64_t now = kT0 + 2'000;  // the wall clock, a little after the log time
  REQUIRE(on_record(firing, record(rule, RecordType::Alert, kT0), now, a));

  CHECK(a.labels ==
        std::map<std::string, std::string>{
            {"alertname", "ssh-bruteforce"}, {"env", "prod"}, {"key", "10.0.0.1"}, {"kind", "alert"}, {"team", "ops"}});
  CHECK(a.annotations == std::map<std::string, std::string>{{"count", "7"},
                                                            {"counts", "failed=5, invalid=2"},
                                                            {"summary", "ssh-bruteforce: 7 in 1m"},
                                                            {"suppressed", "3"},
                                                            {"threshold", "5"},
                                                            {"window", "1m"}});
  CHECK(a.starts_ms == kT0);
  CHECK(a.ends_ms == now + 3 * kRepost);
  CHECK(firing.size() == 1);

  const nlohmann::json j = only_alert(alertmanager_body({a}));
  CHECK(j["startsAt"] == "2026-11-21T10:00:05.000Z");
  CHECK(j["endsAt"] == "2026-11-21T10:03:07.000Z");
  CHECK(j["labels"]["alertname"] == "ssh-bruteforce");
  CHECK(j["annotations"]["count"] == "7");  // a string: Alertmanager's annotations are a label set
}

TEST_CASE("alertmanager alert: the message is the summary, a rule with when says so") {
  Rule rule = swthrottle::test::make_ratio();
  FiringAlerts firing(options());
  Record r = record(rule, RecordType::Alert, kT0, "");
  r.message = "5xx ratio over 5%";
  r.has_message = true;
  AmAlert a;
  REQUIRE(on_record(firing, r, kT0, a));
  CHECK(a.annotations["summary"] == "5xx ratio over 5%");
  CHECK(a.annotations["when"] == "error / request > 0.05 and request >= 100");
  CHECK(a.annotations.count("threshold") == 0);
  CHECK(a.annotations["counts"] == "request=5, error=2");
}

TEST_CASE("alertmanager alert: a rule of one event has no counts annotation") {
  Rule rule = swthrottle::test::make_ssh();
  rule.event_names = {"failed"};
  FiringAlerts firing(options());
  Record r = record(rule, RecordType::Alert, kT0);
  r.counts = {7};
  AmAlert a;
  REQUIRE(on_record(firing, r, kT0, a));
  CHECK(a.annotations.count("counts") == 0);
  CHECK(a.annotations["count"] == "7");
}

TEST_CASE("alertmanager alert: a resolved record closes the alert with the same labels") {
  const Rule rule = ssh_rule();
  FiringAlerts firing(options());
  AmAlert fired, resolved;
  REQUIRE(on_record(firing, record(rule, RecordType::Alert, kT0), kT0, fired));
  Record r = record(rule, RecordType::Resolved, kT0 + 90'000);
  r.count = 1;
  REQUIRE(on_record(firing, r, kT0 + 91'000, resolved));
  CHECK(resolved.labels == fired.labels);
  CHECK(resolved.starts_ms == kT0);
  CHECK(resolved.ends_ms == kT0 + 90'000);  // the record's time, not now
  CHECK(resolved.annotations["count"] == "1");
  CHECK(firing.size() == 0);
  CHECK(firing.due(kT0 + 10 * kRepost).empty());

  const nlohmann::json j = only_alert(alertmanager_body({resolved}));
  CHECK(j["endsAt"] == "2026-11-21T10:01:35.000Z");
}

TEST_CASE("alertmanager alert: a resolved record dated before startsAt ends at startsAt") {
  // Log time may step back (another source's clock): Alertmanager refuses
  // an endsAt before startsAt with 400, and takes them equal.
  const Rule rule = ssh_rule();
  FiringAlerts firing(options());
  AmAlert fired, resolved;
  REQUIRE(on_record(firing, record(rule, RecordType::Alert, kT0), kT0, fired));
  REQUIRE(on_record(firing, record(rule, RecordType::Resolved, kT0 - 5'000), kT0, resolved));
  CHECK(resolved.starts_ms == kT0);
  CHECK(resolved.ends_ms == kT0);
}

TEST_CASE("alertmanager alert: a resolved record for an alert not firing here is posted all the same") {
  const Rule rule = ssh_rule();
  FiringAlerts firing(options());
  AmAlert resolved;
  REQUIRE(on_record(firing, record(rule, RecordType::Resolved, kT0 + 1'000), kT0 + 2'000, resolved));
  CHECK(resolved.starts_ms == kT0 + 1'000);
  CHECK(resolved.ends_ms == kT0 + 1'000);
  CHECK(resolved.labels["key"] == "10.0.0.1");
  CHECK(firing.size() == 0);
}

TEST_CASE("alertmanager alert: a rule without key has no key label, even an extra one") {
  const Rule rule = ssh_rule();
  AlertmanagerOptions o = options();
  o.labels.push_back({"key", "from the configuration"});
  o.labels.push_back({"alertname", "not the rule"});
  FiringAlerts firing(o);
  AmAlert a;
  REQUIRE(on_record(firing, record(rule, RecordType::Alert, kT0, ""), kT0, a));
  CHECK(a.labels.count("key") == 0);
  CHECK(a.labels["alertname"] == "ssh-bruteforce");
  const nlohmann::json j = only_alert(alertmanager_body({a}));
  CHECK(!j["labels"].contains("key"));
}

TEST_CASE("alertmanager alert: invalid UTF-8 in the key and the message is repaired") {
  const Rule rule = ssh_rule();
  FiringAlerts firing(options());
  Record r = record(rule, RecordType::Alert, kT0, "user\xff\xc3");
  r.message = "bad \xe2\x82 byte";
  r.has_message = true;
  AmAlert a;
  REQUIRE(on_record(firing, r, kT0, a));
  CHECK(a.labels["key"] == "user\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(a.annotations["summary"] == "bad \xEF\xBF\xBD byte");
  // nlohmann-json refuses ill-formed UTF-8: this parses only when repaired.
  const nlohmann::json j = only_alert(alertmanager_body({a}));
  CHECK(j["labels"]["key"] == "user\xEF\xBF\xBD\xEF\xBF\xBD");
  // The repaired key is the identity: the resolved record finds the alert.
  AmAlert resolved;
  REQUIRE(on_record(firing, record(rule, RecordType::Resolved, kT0 + 1'000, "user\xff\xc3"), kT0, resolved));
  CHECK(resolved.labels == a.labels);
  CHECK(firing.size() == 0);
}

TEST_CASE("alertmanager alert: only alert and resolved records are posted") {
  const Rule rule = ssh_rule();
  FiringAlerts firing(options());
  AmAlert a;
  CHECK(!on_record(firing, record(rule, RecordType::Summary, kT0), kT0, a));
  CHECK(!on_record(firing, record(rule, RecordType::Line, kT0), kT0, a));
  Record no_rule = record(rule, RecordType::Alert, kT0);
  no_rule.rule = nullptr;
  CHECK(!on_record(firing, no_rule, kT0, a));
  CHECK(firing.size() == 0);
}

TEST_CASE("alertmanager alert: times when the clocks disagree") {
  const Rule rule = ssh_rule();
  FiringAlerts firing(options());
  AmAlert a;
  SUBCASE("a log time ahead of the wall clock: endsAt stays after startsAt") {
    REQUIRE(on_record(firing, record(rule, RecordType::Alert, kT0 + 3'600'000), kT0, a));
    CHECK(a.starts_ms == kT0 + 3'600'000);
    CHECK(a.ends_ms == kT0 + 3'600'000 + 3 * kRepost);
  }
  SUBCASE("a record written before any log time: startsAt is now") {
    Record r = record(rule, RecordType::Alert, 0);
    r.has_time = false;
    REQUIRE(on_record(firing, r, kT0, a));
    CHECK(a.starts_ms == kT0);
  }
}

TEST_CASE("alertmanager firing alerts: posted again every repost interval while firing") {
  const Rule rule = ssh_rule();
  FiringAlerts firing(options());
  AmAlert a;
  REQUIRE(on_record(firing, record(rule, RecordType::Alert, kT0), kT0, a));

  CHECK(firing.due(kT0).empty());
  CHECK(firing.due(kT0 + kRepost - 1).empty());

  std::vector<AmAlert> again = firing.due(kT0 + kRepost);
  REQUIRE(again.size() == 1);
  CHECK(again[0].labels == a.labels);
  CHECK(again[0].annotations == a.annotations);
  CHECK(again[0].starts_ms == kT0);
  CHECK(again[0].ends_ms == kT0 + kRepost + 3 * kRepost);
  CHECK(firing.size() == 1);

  // The interval counts from the last post.
  CHECK(firing.due(kT0 + 2 * kRepost - 1).empty());
  CHECK(firing.due(kT0 + 2 * kRepost).size() == 1);

  // A refresh keeps startsAt and counts as a post.
  Record refresh = record(rule, RecordType::Alert, kT0 + 2 * kRepost + 10);
  refresh.count = 9;
  REQUIRE(on_record(firing, refresh, kT0 + 2 * kRepost + 10, a));
  CHECK(a.starts_ms == kT0);
  CHECK(a.annotations["count"] == "9");
  CHECK(firing.size() == 1);
  CHECK(firing.due(kT0 + 3 * kRepost).empty());

  AmAlert resolved;
  REQUIRE(on_record(firing, record(rule, RecordType::Resolved, kT0 + 3 * kRepost), kT0 + 3 * kRepost, resolved));
  CHECK(firing.size() == 0);
  CHECK(firing.due(kT0 + 100 * kRepost).empty());
}

TEST_CASE("alertmanager firing alerts: one per rule and key, in that order") {
  const Rule rule = ssh_rule();
  FiringAlerts firing(options());
  AmAlert a;
  REQUIRE(on_record(firing, record(rule, RecordType::Alert, kT0, "b"), kT0, a));
  REQUIRE(on_record(firing, record(rule, RecordType::Alert, kT0, "a"), kT0, a));
  REQUIRE(on_record(firing, record(rule, RecordType::Alert, kT0, "b"), kT0, a));
  CHECK(firing.size() == 2);
  std::vector<AmAlert> due = firing.due(kT0 + kRepost);
  REQUIRE(due.size() == 2);
  CHECK(due[0].labels["key"] == "a");
  CHECK(due[1].labels["key"] == "b");
}

TEST_CASE("alertmanager firing alerts: a rule without resolve ends its alert after the cooldown") {
  Rule rule = ssh_rule();
  rule.resolve = false;
  rule.cooldown_ms = 100'000;  // longer than one repost interval, shorter than two
  FiringAlerts firing(options());
  AmAlert a;
  REQUIRE(on_record(firing, record(rule, RecordType::Alert, kT0), kT0 + 500, a));
  CHECK(a.ends_ms == kT0 + 500 + 3 * kRepost);

  std::vector<AmAlert> due = firing.due(kT0 + 500 + kRepost);
  REQUIRE(due.size() == 1);
  CHECK(due[0].ends_ms == kT0 + 500 + 4 * kRepost);  // still firing: reposted
  CHECK(firing.due(kT0 + 100'000 - 1).empty());

  due = firing.due(kT0 + 100'000);
  REQUIRE(due.size() == 1);
  CHECK(due[0].labels == a.labels);
  CHECK(due[0].starts_ms == kT0);
  CHECK(due[0].ends_ms == kT0 + 100'000);  // startsAt + cooldown
  CHECK(firing.size() == 0);
  CHECK(firing.due(kT0 + 100'000 + 10 * kRepost).empty());

  SUBCASE("a new alert record counts the cooldown again from itself") {
    REQUIRE(on_record(firing, record(rule, RecordType::Alert, kT0 + 200'000), kT0 + 200'000, a));
    REQUIRE(on_record(firing, record(rule, RecordType::Alert, kT0 + 250'000), kT0 + 250'000, a));
    CHECK(a.starts_ms == kT0 + 200'000);
    CHECK(firing.due(kT0 + 300'000).empty());  // the first one's end: not ended
    CHECK(firing.size() == 1);
    due = firing.due(kT0 + 350'000);
    REQUIRE(due.size() == 1);
    CHECK(due[0].starts_ms == kT0 + 200'000);
    CHECK(due[0].ends_ms == kT0 + 350'000);
    CHECK(firing.size() == 0);
  }
}

TEST_CASE("alertmanager: valid_label_name") {
  using namespace std::string_view_literals;
  struct Case {
    std::string_view name;
    bool valid;
  };
  const Case cases[] = {
      {"alertname", true}, {"_", true},          {"team_2", true},  {"A", true},       {"__meta", true},
      {"", false},         {"2team", false},     {"team-a", false}, {"team.a", false}, {"team a", false},
      {"é", false},        {"t\xc3\xa9", false}, {"a:b", false},    {"a\0b"sv, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(valid_label_name(c.name) == c.valid);
  }
}
