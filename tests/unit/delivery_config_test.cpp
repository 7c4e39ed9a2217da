// The delivery parts of a rules file (man page: DELIVERY):
// [[delivery.destination]] tables, `body` templates, and a rule's labels,
// annotations and generator_url; every mistake an error at FILE:LINE:COL.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "config/body_template.h"
#include "config/delivery_fields.h"
#include "config/rules.h"

using swthrottle::config::BodyTemplate;
using swthrottle::config::parse_rules;
using swthrottle::config::Preset;
using swthrottle::config::RuleSet;

namespace {

// A rule, with `extra` keys of its own on its fifth line.
std::string rule(const std::string& extra = "") {
  return "[[rule]]\nname = \"db-down\"\nkind = \"alert\"\nthreshold = \"1 per 1m\"\n" + extra +
         "\n  [[rule.event]]\n  name = \"e\"\n  match = 'db down'\n";
}
const std::string kRule = rule();

RuleSet parse_ok(const std::string& text) {
  auto r = parse_rules(text, "rules.toml");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().str()));
  return std::move(*r);
}

std::string error_of(const std::string& text) {
  auto r = parse_rules(text, "rules.toml");
  REQUIRE_MESSAGE(!r.ok(), text);
  return r.error().str();
}

}  // namespace

TEST_CASE("delivery config: a destination table with every key") {
  const RuleSet set = parse_ok(
      "[[delivery.destination]]\n"
      "name = \"ops-slack\"\n"
      "preset = \"slack\"\n"
      "url_file = \"/etc/swthrottle/ops-slack.url\"\n"
      "rules = [\"db-down\"]\n"
      "headers = { \"X-Team\" = \"db\", \"Authorization\" = { file = \"/etc/t\", prefix = \"Bearer \" } }\n"
      "body = '{\"text\": \"{summary} ({labels.team})\"}'\n\n" +
      rule("labels = { team = \"db\" }"));
  REQUIRE(set.settings.delivery.destinations.size() == 1);
  const auto& d = set.settings.delivery.destinations[0];
  CHECK(d.name == "ops-slack");
  CHECK(d.preset == Preset::Slack);
  CHECK(d.url.empty());
  CHECK(d.url_file == "/etc/swthrottle/ops-slack.url");
  CHECK(d.rules == std::vector<std::string>{"db-down"});
  REQUIRE(d.headers.size() == 2);
  CHECK(d.headers[0].name == "X-Team");
  CHECK(d.headers[0].value == "db");
  CHECK(d.headers[1].name == "Authorization");
  CHECK(d.headers[1].file == "/etc/t");
  CHECK(d.headers[1].prefix == "Bearer ");
  REQUIRE(d.body != nullptr);
  REQUIRE(d.body->attributes().size() == 1);
  CHECK(d.body->attributes()[0].name == "labels.team");
  CHECK(d.line == 1);
}

TEST_CASE("delivery config: what a destination table must and must not say, at FILE:LINE:COL") {
  struct Case {
    std::string table;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"preset = \"slack\"\nurl = \"http://h/x\"\n", "rules.toml:1:1: [[delivery.destination]] #1 has no name"},
      {"name = \"a b\"\nurl = \"http://h/x\"\n", "rules.toml:2:8: a destination's name is 1 to 64 letters"},
      {"name = \"a\"\npreset = \"mattermost\"\nurl = \"http://h/x\"\n",
       "rules.toml:3:10: preset must be \"webhook\", \"alertmanager\", \"slack\", \"discord\", \"teams\", "
       "\"pagerduty\" or "
       "\"opsgenie\""},
      {"name = \"a\"\npreset = \"slack\"\n", "rules.toml:1:1: destination \"a\" (slack) needs url_file"},
      {"name = \"a\"\nurl = \"http://h/x\"\nurl_file = \"/f\"\n", "rules.toml:4:12: give url or url_file, not both"},
      {"name = \"a\"\npreset = \"pagerduty\"\n", "rules.toml:1:1: destination \"a\" (pagerduty) needs key_file"},
      {"name = \"a\"\nurl = \"http://h/x\"\nkey_file = \"/k\"\n", "rules.toml:4:12: key_file is for pagerduty"},
      {"name = \"a\"\nurl = \"ftp://h/x\"\n", "rules.toml:3:7: url: not an http:// or https:// URL"},
      {"name = \"a\"\nurl = \"http://h/x\"\nrules = [\"nope\"]\n",
       "rules.toml:1:1: destination \"a\": rules names \"nope\", which no rules file defines"},
      {"name = \"a\"\nurl = \"http://h/x\"\nheaders = { \"X Y\" = \"1\" }\n",
       "rules.toml:4:13: header name \"X Y\" is not an HTTP token"},
      {"name = \"a\"\npreset = \"alertmanager\"\nurl = \"http://h\"\nbody = '{}'\n",
       "rules.toml:5:8: an alertmanager destination takes no body"},
      {"name = \"a\"\nurl = \"http://h/x\"\ncolour = 1\n",
       "rules.toml:4:1: unknown key \"colour\" in [[delivery.destination]] #1"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.table);
    const std::string err = error_of("[[delivery.destination]]\n" + c.table + "\n" + kRule);
    CHECK(err.starts_with(c.error));
  }
  // Two of one name.
  CHECK(error_of("[[delivery.destination]]\nname = \"a\"\nurl = \"http://h/x\"\n"
                 "[[delivery.destination]]\nname = \"a\"\nurl = \"http://h/y\"\n\n" +
                 kRule)
            .starts_with("rules.toml:5:8: duplicate destination name \"a\" (first at rules.toml:1:1)"));
}

TEST_CASE("delivery config: a URL's secrets are not in its error, user:password@ included") {
  for (const std::string url : {"http://user:hunter2@h/x", "http://h\x01/SECRETTOKEN", "hooks.example/SECRETTOKEN"}) {
    CAPTURE(url);
    const std::string err = error_of("[[delivery.destination]]\nname = \"a\"\nurl = \"" + url + "\"\n\n" + kRule);
    CAPTURE(err);
    CHECK(err.find("hunter2") == std::string::npos);
    CHECK(err.find("SECRETTOKEN") == std::string::npos);
    CHECK(err.starts_with("rules.toml:3:"));
  }
  const std::string creds = error_of("[delivery]\nwebhook = \"http://user:hunter2@h:8080/x\"\n\n" + kRule);
  CHECK(creds ==
        "rules.toml:2:11: delivery webhook: the URL to http://h:8080 holds credentials (user:password@): anyone can "
        "read them in ps or the file; give them in SWTHROTTLE_WEBHOOK_BASIC_AUTH or [delivery] basic_auth_file "
        "instead");
}

TEST_CASE("delivery config: a body that cannot render is an error at load, where it is") {
  struct Case {
    std::string body;
    std::string error;
  };
  const std::vector<Case> cases = {
      {R"('{"text": "{summry}"}')", "rules.toml:2:20: body: unknown field \"summry\""},
      {R"('{"text": "{summary"}')", "rules.toml:2:19: body: unmatched \"{\""},
      {R"('{"text": }')", "rules.toml:2:18: body is not JSON: syntax error"},
      {R"('"just a string"')", "rules.toml:2:9: body must be a JSON object or array"},
      {R"('{"a": {"b": ["{line:>99999}"]}}')", "rules.toml:2:29: body: format spec \">99999\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.body);
    const std::string err =
        error_of("[[delivery.destination]]\nbody = " + c.body + "\nname = \"a\"\nurl = \"http://h/x\"\n\n" + kRule);
    CAPTURE(err);
    CHECK(err.starts_with(c.error));
  }
  // A label or annotation no rule has: a typo, said with the destination.
  CHECK(
      error_of("[[delivery.destination]]\nname = \"a\"\nurl = \"http://h/x\"\nbody = '{\"t\": \"{labels.taem}\"}'\n\n" +
               rule("labels = { team = \"db\" }"))
          .starts_with("rules.toml:1:1: destination \"a\": body uses {labels.taem}, but no rule has label \"taem\""));
  // Built-in labels and annotations need no rule to define them.
  parse_ok(
      "[[delivery.destination]]\nname = \"a\"\nurl = \"http://h/x\"\n"
      "body = '{\"t\": \"{labels.alertname} {annotations.summary}\"}'\n\n" +
      kRule);
}

TEST_CASE("delivery config: a body renders its strings, escaped by the JSON writer, structure as written") {
  auto t = BodyTemplate::parse(R"({"text": "{rule}: {line}", "n": 3, "ok": true, "list": ["{key}", null]})");
  REQUIRE(t.ok());
  std::vector<std::string> fields(swthrottle::config::kDeliveryFieldCount);
  fields[swthrottle::config::kDfRule] = "db-down";
  fields[swthrottle::config::kDfLine] = "a \"quote\", a \\ and\n\x1b[31m\xff";
  fields[swthrottle::config::kDfKey] = "\"},{\"injected\":1";
  const std::string body = t->render(fields, [](std::string_view) { return std::string(); });
  CHECK(body == R"({"text":"db-down: a \"quote\", a \\ and\n\u001b[31m)"
                "\xef\xbf\xbd"
                R"(","n":3,"ok":true,"list":["\"},{\"injected\":1",null]})");
}

TEST_CASE("delivery config: a rule's labels, annotations and generator_url") {
  const RuleSet set = parse_ok(
      "[delivery]\nlabels = { team = \"ops\", env = \"prod\" }\n\n" +
      rule("labels = { severity = \"page\", team = \"db\" }\n"
           "annotations = { runbook_url = \"https://runbooks/{rule}\", description = \"{count} in {window}\" }\n"
           "generator_url = \"http://grafana/explore?rule={rule}&key={key}\""));
  const auto& r = set.rules[0];
  REQUIRE(r.labels.size() == 2);
  CHECK(r.labels[0] == std::pair<std::string, std::string>{"severity", "page"});
  CHECK(r.labels[1] == std::pair<std::string, std::string>{"team", "db"});
  REQUIRE(r.annotations.size() == 2);
  CHECK(r.annotations[0].first == "runbook_url");
  CHECK(r.annotations[0].second.text() == "https://runbooks/{rule}");
  REQUIRE(r.generator_url.has_value());

  struct Case {
    std::string key;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"labels = { \"bad-name\" = \"x\" }", "rules.toml:5:12: label \"bad-name\": a label name is"},
      {"labels = { alertname = \"x\" }", "rules.toml:5:10: label \"alertname\" is swthrottle's own"},
      {"labels = { n = 1 }", "rules.toml:5:16: label \"n\" must be a string"},
      {"annotations = { d = \"{cuont}\" }", "rules.toml:5:23: annotation \"d\": unknown field \"cuont\""},
      {"annotations = { __x = \"y\" }", "rules.toml:5:17: annotation \"__x\": names starting with __"},
      {"generator_url = \"{ip}\"", "rules.toml:5:19: generator_url: unknown field \"ip\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.key);
    const std::string err = error_of(rule(c.key));
    CAPTURE(err);
    CHECK(err.starts_with(c.error));
  }
}

TEST_CASE("delivery config: the delivery field names, one per id") {
  CHECK(swthrottle::config::delivery_field_names().size() == swthrottle::config::kDeliveryFieldCount);
  CHECK(swthrottle::config::delivery_field("dedup_key") == swthrottle::config::kDfDedupKey);
  CHECK(swthrottle::config::delivery_field("nope") == -1);
}
