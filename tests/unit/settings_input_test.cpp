// [[settings.input]] (config/rules.h InputTime): the timestamp and zone of
// the inputs a path pattern matches, and Generation::logtime_for, which
// picks the reader of an input by its name.
#include <doctest/doctest.h>

#include <string>

#include "config/rules.h"
#include "match/logtime.h"
#include "pipeline/generation.h"

namespace {

using swthrottle::config::parse_rules;
using Form = swthrottle::config::TimestampSpec::Form;

const std::string kRule = R"(
[[rule]]
name      = "r"
kind      = "alert"
threshold = "1 per 1s"
  [[rule.event]]
  name  = "e"
  match = 'x'
)";

TEST_CASE("settings input: entries in file order, each with what it sets") {
  auto r = parse_rules(R"([settings]
time = "log"
timestamp = "rfc3339"

[[settings.input]]
path = "/var/log/nginx/*.log"
timestamp = "ymd_slash"

[[settings.input]]
path = "-"
timezone = "+01:00"

[[settings.input]]
path = "/var/log/pods/*"
timezone = "America/Santiago"
)" + kRule,
                       "rules.toml");
  REQUIRE(r.ok());
  const auto& in = r->settings.inputs;
  REQUIRE(in.size() == 3);
  CHECK(in[0].path == "/var/log/nginx/*.log");
  REQUIRE(in[0].timestamp.has_value());
  CHECK(in[0].timestamp->form == Form::YmdSlash);
  CHECK(in[0].timestamp->line == 7);  // where LogTime's errors point
  CHECK_FALSE(in[0].timezone.has_value());
  CHECK(in[1].path == "-");
  CHECK_FALSE(in[1].timestamp.has_value());
  REQUIRE(in[1].timezone.has_value());
  CHECK(in[1].timezone->offset_minutes == 60);
  REQUIRE(in[2].timezone.has_value());
  CHECK(in[2].timezone->name == "America/Santiago");
  CHECK(r->settings.timestamp.form == Form::Rfc3339);
}

TEST_CASE("settings input: errors, with the did-you-mean of every other key") {
  struct Case {
    std::string toml;
    int line, col;
    std::string what;
  };
  for (
      const Case& c : {
          Case{"[settings]\n[[settings.input]]\npth = \"x\"\ntimestamp = \"auto\"\n", 3, 1,
               R"(unknown key "pth" in [[settings.input]] (did you mean "path"?))"},
          Case{
              "[settings]\n[[settings.input]]\ntimestamp = \"auto\"\n", 2, 1,
              R"([[settings.input]] needs path = "GLOB": the inputs it is for, as the command line names them ("-": standard input))"},
          Case{"[settings]\n[[settings.input]]\npath = \"x\"\n", 2, 1,
               R"([[settings.input]] for "x" sets none of timestamp, timezone, format, multiline)"},
          Case{"[settings]\ninput = 3\n", 2, 9,
               "settings.input must be an array of tables ([[settings.input]]), not 3"},
          Case{
              "[settings]\n[[settings.input]]\npath = \"x\"\ntimestamp = \"iso\"\n", 4, 13,
              R"(timestamp must be "auto", "rfc3339", "syslog", "epoch", "clf", "ymd_slash", "iso_basic", "json_epoch", a strptime format (containing %) or a table { match = 'REGEX', format = "..." }, not "iso")"},
          Case{"[settings]\n[[settings.input]]\npath = \"x\"\ntimezone = \"Mars\"\n", 4, 12,
               R"(no time zone "Mars" in the tz database)"},
      }) {
    INFO(c.toml);
    auto r = parse_rules(c.toml + kRule, "rules.toml");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().line == c.line);
    CHECK(r.error().col == c.col);
    CHECK(r.error().what == c.what);
  }
}

TEST_CASE("settings input: the first entry whose path matches the input name gives its reader") {
  auto rules = parse_rules(R"([settings]
time = "log"
timezone = "UTC"

[[settings.input]]
path = "*/nginx/*.log"
timestamp = "ymd_slash"

[[settings.input]]
path = "*.log"
timestamp = "iso_basic"
)" + kRule,
                           "rules.toml");
  REQUIRE(rules.ok());
  swthrottle::pipeline::Generation g;
  g.rules = std::make_unique<swthrottle::config::RuleSet>(std::move(*rules));
  const auto& s = g.rules->settings;
  CHECK(g.logtime_for("a.log") == nullptr);  // time = arrival: none
  g.logtime.emplace(*swthrottle::match::LogTime::make(s.timestamp, s.timezone, 0));
  for (const auto& in : s.inputs)
    g.input_logtimes.push_back(*swthrottle::match::LogTime::make(*in.timestamp, s.timezone, 0));
  const std::string slash = "2026/11/21 10:00:05 x", basic = "20261121T100005Z x", iso = "2026-11-21T10:00:05Z";
  constexpr int64_t kT = 1795255205000, kNow = 1795255205000;
  // /var/log/nginx/error.log: the first entry (though "*.log" matches too).
  const auto* nginx = g.logtime_for("/var/log/nginx/error.log");
  CHECK(nginx->parse(slash, kNow) == kT);
  CHECK_FALSE(nginx->parse(basic, kNow).has_value());
  const auto* app = g.logtime_for("app.log");
  CHECK(app->parse(basic, kNow) == kT);
  CHECK_FALSE(app->parse(iso, kNow).has_value());
  // No entry matches: [settings] (auto).
  for (const char* name : {"-", "app.log.1", "log"}) {
    CAPTURE(name);
    CHECK(g.logtime_for(name) == &*g.logtime);
  }
}

}  // namespace
