// The rules file settings of issue 29: previous(e) in `when`, `distinct`,
// and `new` with `remember`, `learn` and `max_values`: what they parse
// into, what they are refused with (FILE:LINE:COL and the exact text), and
// how they change a rule's identity for --state and SIGHUP.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "config/rule_identity.h"
#include "config/rules.h"

using namespace swthrottle::config;

namespace {

const std::string kLogin =
    "[[rule.event]]\nname = \"login\"\nmatch = 'login (?P<user>\\w+) from (?P<ip>\\S+)(?: ua=(?P<ua>.*))?'\n";

RuleSet parse_ok(const std::string& text) {
  auto r = parse_rules(text, "rules.toml");
  if (!r) FAIL_CHECK("unexpected error: " << r.error().str());
  REQUIRE(r.ok());
  return *r;
}

// An alert rule "r" with the extra lines from line 4, then the event `login`.
std::string rule(const std::string& extra, const std::string& kind = "alert") {
  return "[[rule]]\nname = \"r\"\nkind = \"" + kind + "\"\n" + extra + kLogin;
}

struct ErrorCase {
  const char* name;
  std::string toml;
  int line;
  int col;
  std::string what;
};

void check_errors(const std::vector<ErrorCase>& cases) {
  for (const auto& c : cases) {
    INFO(std::string(c.name));
    auto r = parse_rules(c.toml, "rules.toml");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().line == c.line);
    CHECK(r.error().col == c.col);
    CHECK(r.error().what == c.what);
  }
}

}  // namespace

TEST_CASE("rule shapes: previous() makes the rule keep the previous window") {
  const Rule r = parse_ok(rule("window = \"1h\"\nwhen = \"login >= 3 * previous(login) and login >= 20\"\n")).rules[0];
  CHECK(r.keeps_previous);
  CHECK(r.when.eval(std::vector<uint64_t>{30, 10}));
  CHECK_FALSE(r.when.eval(std::vector<uint64_t>{29, 10}));
  const Rule plain = parse_ok(rule("window = \"1h\"\nwhen = \"login >= 20\"\n")).rules[0];
  CHECK_FALSE(plain.keeps_previous);
  // In resolve_when only, too.
  const Rule clear =
      parse_ok(rule("window = \"1h\"\nwhen = \"login >= 20\"\nresolve_when = \"login < previous(login)\"\n")).rules[0];
  CHECK(clear.keeps_previous);
  // Its windows hold more than a rule's without: a SIGHUP starts them fresh.
  const Rule same_window = parse_ok(rule("window = \"1h\"\nwhen = \"login >= 3 * previous(login)\"\n")).rules[0];
  CHECK_FALSE(windows_carry_over(plain, r));
  CHECK(windows_carry_over(same_window, r));
  CHECK(fingerprint(same_window) != fingerprint(r));
}

TEST_CASE("rule shapes: distinct counts rendered values, a threshold compares their count") {
  const Rule r = parse_ok(rule("threshold = \"6 per 10m\"\nkey = \"{user}\"\ndistinct = \"{ip}\"\n")).rules[0];
  REQUIRE(r.distinct.has_value());
  CHECK(r.distinct->text() == "{ip}");
  CHECK(*r.threshold == 6);
  // The condition reads [login, distinct]: distinct >= 6, whatever the logins.
  CHECK(r.when.eval(std::vector<uint64_t>{100, 6}));
  CHECK_FALSE(r.when.eval(std::vector<uint64_t>{100, 5}));
  const Rule w =
      parse_ok(rule("window = \"10m\"\nwhen = \"distinct > 5 and login >= 10\"\ndistinct = \"{ip}\"\n")).rules[0];
  CHECK(w.when.uses_distinct());
  CHECK(w.when.eval(std::vector<uint64_t>{10, 6}));
  // A JSON field in the template takes a capture slot.
  const Rule j = parse_ok(rule("threshold = \"6 per 10m\"\ndistinct = \"{.client.ip}\"\n")).rules[0];
  CHECK(std::find(j.capture_names.begin(), j.capture_names.end(), ".client.ip") != j.capture_names.end());
  // Another template counts other values: another rule for --state and SIGHUP.
  const Rule other = parse_ok(rule("threshold = \"6 per 10m\"\nkey = \"{user}\"\ndistinct = \"{ua}\"\n")).rules[0];
  CHECK(fingerprint(other) != fingerprint(r));
  CHECK_FALSE(windows_carry_over(other, r));
}

TEST_CASE("rule shapes: new remembers values, defaults and all") {
  const Rule r = parse_ok(rule("new = \"{ua}\"\n")).rules[0];
  REQUIRE(r.new_value.has_value());
  CHECK(r.window_ms == 30 * 86'400'000LL);  // remember = "30d"
  CHECK(r.window_text == "30d");
  CHECK(r.learn_ms == 86'400'000LL);  // learn = "1d"
  CHECK(r.learn_text == "1d");
  CHECK(r.max_values == 100000);
  CHECK(*r.threshold == 1);
  CHECK(r.buckets == 1);
  const Rule set =
      parse_ok(rule("new = \"{ua}\"\nkey = \"{user}\"\nremember = \"7d\"\nlearn = \"0\"\nmax_values = 50\n")).rules[0];
  CHECK(set.window_ms == 7 * 86'400'000LL);
  CHECK(set.learn_ms == 0);
  CHECK(set.max_values == 50);
  // learn is part of the --state identity (a saved memory was learned under it).
  const Rule learn2 =
      parse_ok(rule("new = \"{ua}\"\nkey = \"{user}\"\nremember = \"7d\"\nlearn = \"2h\"\nmax_values = 50\n")).rules[0];
  CHECK(fingerprint(set) != fingerprint(learn2));
}

TEST_CASE("rule shapes: errors") {
  check_errors({
      {"distinct on a throttle", rule("threshold = \"5/1m\"\ndistinct = \"{ip}\"\n", "throttle"), 5, 12,
       R"([[rule]] "r" is a throttle rule; distinct applies to alert rules (a throttle counts lines))"},
      {"empty distinct", rule("threshold = \"5/1m\"\ndistinct = \"\"\n"), 5, 12,
       R"(distinct must not be empty (a template such as "{ip}"))"},
      {"distinct of an unknown capture", rule("threshold = \"5/1m\"\ndistinct = \"{addr}\"\n"), 5, 14,
       R"(distinct: unknown field "addr" (fields: rule, event, user, ip, ua))"},
      {"an event named distinct",
       "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"5/1m\"\ndistinct = \"{x}\"\n"
       "[[rule.event]]\nname = \"distinct\"\nmatch = '(?P<x>y)'\n",
       5, 12,
       R"([[rule]] "r" counts distinct values, so no event of it may be named "distinct": in its condition that name is the count of distinct values)"},
      {"previous with distinct", rule("window = \"1m\"\nwhen = \"login > previous(login)\"\ndistinct = \"{ip}\"\n"), 5,
       8,
       R"([[rule]] "r" counts distinct values, and a rule that does keeps no previous window: previous() needs a rule without distinct)"},
      {"distinct without the rule", rule("window = \"1m\"\nwhen = \"distinct > 5\"\n"), 5, 9,
       R"(when: unknown event "distinct" (events: login))"},
      {"distinct and fleet", rule("threshold = \"5/1m\"\ndistinct = \"{ip}\"\nfleet = \"exact\"\n"), 6, 9,
       R"([[rule]] "r" uses distinct, which fleet windows do not keep (they share event counts through Redis); remove fleet to decide on this host's windows)"},
      {"new and fleet", rule("new = \"{ua}\"\nfleet = \"batched\"\n"), 5, 9,
       R"([[rule]] "r" uses new, which fleet windows do not keep (they share event counts through Redis); remove fleet to decide on this host's windows)"},
      {"previous and fleet", rule("window = \"1m\"\nwhen = \"login > previous(login)\"\nfleet = \"exact\"\n"), 6, 9,
       R"([[rule]] "r" uses previous(), which fleet windows do not keep (they share event counts through Redis); remove fleet to decide on this host's windows)"},
      {"new with a threshold", rule("new = \"{ua}\"\nthreshold = \"5/1m\"\n"), 5, 13,
       R"([[rule]] "r" has new: it raises one alert per value not seen within remember, so it takes no threshold)"},
      {"new with buckets", rule("new = \"{ua}\"\nbuckets = 10\n"), 5, 11,
       R"([[rule]] "r" has new: it raises one alert per value not seen within remember, so it takes no buckets)"},
      {"new on a throttle", rule("threshold = \"5/1m\"\nnew = \"{ua}\"\n", "throttle"), 5, 7,
       R"([[rule]] "r" is a throttle rule; new applies to alert rules)"},
      {"remember without new", rule("threshold = \"5/1m\"\nremember = \"1d\"\n"), 5, 12,
       R"(remember applies to rules with new = "TEMPLATE" (first-seen values))"},
      {"learn without new", rule("threshold = \"5/1m\"\nlearn = \"1d\"\n"), 5, 9,
       R"(learn applies to rules with new = "TEMPLATE" (first-seen values))"},
      {"bad remember", rule("new = \"{ua}\"\nremember = \"30x\"\n"), 5, 15,
       R"(invalid duration "30x": unknown unit "x" (units: ms, s, m, h, d))"},
      {"max_values zero", rule("new = \"{ua}\"\nmax_values = 0\n"), 5, 14,
       R"(max_values must be an integer >= 1, not 0)"},
      {"distinct with too many buckets", rule("threshold = \"5 per 10m\"\ndistinct = \"{ip}\"\nbuckets = 100\n"), 6, 11,
       R"(a rule with distinct has at most 60 buckets (each may hold a 4 KiB sketch per key), not 100)"},
  });
}
