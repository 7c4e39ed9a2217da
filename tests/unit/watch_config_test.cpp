// The rules of silence and sequences (config/watch_parser.h,
// config/condition_probe.h; man page: SILENCE AND SEQUENCES): which rules
// are watched or sequences, the errors of for, forget, then and within, the
// identity of such rules, and what --check says about them.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli/report.h"
#include "config/condition_probe.h"
#include "config/rules.h"
#include "config/watch_parser.h"

namespace {

namespace cfg = swthrottle::config;

const std::string kEvents = R"(  [[rule.event]]
  name = "a"
  match = 'A (?P<host>\w+)'
  [[rule.event]]
  name = "b"
  match = 'B (?P<host>\w+)'
)";

// A rule "r" with `extra` lines from line 4 on, then the events a and b.
std::string rule(const std::string& extra, const std::string& kind = "alert") {
  return "[[rule]]\nname = \"r\"\nkind = \"" + kind + "\"\n" + extra + kEvents;
}

cfg::RuleSet load(const std::string& text) {
  auto r = cfg::parse_rules(text, "rules.toml");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().str()));
  return std::move(*r);
}

std::string error_of(const std::string& text) {
  auto r = cfg::parse_rules(text, "rules.toml");
  REQUIRE_FALSE(r.ok());
  return r.error().str();
}

}  // namespace

TEST_CASE("watch config: which alert rules are watched, and which are sequences") {
  struct Row {
    std::string extra;
    bool watched, sequence;
  };
  const std::vector<Row> rows{
      {"window = \"1m\"\nwhen = \"a < 1\"\n", true, false},             // holds on an empty window
      {"window = \"1m\"\nwhen = \"a < 3 and b <= 0\"\n", true, false},  // holds at 0, 0
      {"window = \"1m\"\nwhen = \"a >= 1\"\n", false, false},           // needs an event
      {"window = \"1m\"\nwhen = \"b / a < 0.5\"\n", false, false},      // a ratio: 0 / 0 is false
      {"threshold = \"5 per 1m\"\n", false, false},
      {"window = \"1m\"\nwhen = \"a >= 1\"\nfor = \"30s\"\n", true, false},  // for: watched whatever the condition
      {"window = \"1m\"\nwhen = \"a >= 5\"\nthen = \"b >= 1\"\n", false, true},
      {"window = \"1m\"\nwhen = \"a < 1\"\nthen = \"b >= 1\"\n", false, true},  // a sequence is never watched
  };
  for (const Row& r : rows) {
    CAPTURE(r.extra);
    const cfg::RuleSet rs = load(rule(r.extra));
    CHECK(cfg::is_watched(rs.rules[0]) == r.watched);
    CHECK(cfg::is_sequence(rs.rules[0]) == r.sequence);
  }
  CHECK_FALSE(cfg::is_watched(load(rule("threshold = \"5 per 1m\"\n", "throttle")).rules[0]));
}

TEST_CASE("watch config: defaults of forget and within") {
  // forget: 3 windows for a keyed watched rule; none without key or when not watched.
  CHECK(load(rule("window = \"2m\"\nwhen = \"a < 1\"\nkey = \"{host}\"\n")).rules[0].forget_ms == 360'000);
  CHECK(load(rule("window = \"2m\"\nwhen = \"a < 1\"\nkey = \"{host}\"\nforget = \"1h\"\n")).rules[0].forget_ms ==
        3'600'000);
  CHECK(load(rule("window = \"2m\"\nwhen = \"a < 1\"\n")).rules[0].forget_ms == 0);
  CHECK(load(rule("window = \"2m\"\nwhen = \"a >= 1\"\nkey = \"{host}\"\n")).rules[0].forget_ms == 0);
  // within: the window, unless given.
  const cfg::Rule seq = load(rule("window = \"10m\"\nwhen = \"a >= 5\"\nthen = \"b >= 1\"\n")).rules[0];
  CHECK(seq.within_ms == 600'000);
  CHECK(seq.then_text == "b >= 1");
  CHECK(load(rule("window = \"10m\"\nwhen = \"a >= 5\"\nthen = \"b >= 1\"\nwithin = \"90s\"\n")).rules[0].within_ms ==
        90'000);
  CHECK(load(rule("window = \"10m\"\nwhen = \"a >= 1\"\nfor = \"1m30s\"\n")).rules[0].for_ms == 90'000);
}

TEST_CASE("watch config: errors say what goes with what, at the key") {
  struct Row {
    std::string text, error;
  };
  const std::vector<Row> rows{
      {rule("threshold = \"1 per 1m\"\nfor = \"1m\"\n", "throttle"),
       R"(rules.toml:5:7: [[rule]] "r" is a throttle rule; for applies to alert rules only)"},
      {rule("window = \"1m\"\nwhen = \"a < 1\"\nfor = 5\n"),
       R"(rules.toml:6:7: for must be a duration such as "30s", "5m" or "1h30m", not 5)"},
      {rule("window = \"1m\"\nwhen = \"a >= 1\"\nkey = \"{host}\"\nforget = \"1h\"\n"),
       R"(rules.toml:7:10: [[rule]] "r" is not checked at every boundary, so it keeps no silent keys to forget: forget applies to a rule with for, or whose when holds on an empty window)"},
      {rule("window = \"1m\"\nwhen = \"a < 1\"\nforget = \"1h\"\n"),
       R"(rules.toml:6:10: [[rule]] "r" has no key: its one window is never forgotten; remove forget)"},
      {rule("window = \"2m\"\nwhen = \"a < 1\"\nkey = \"{host}\"\nforget = \"1m\"\n"),
       R"(rules.toml:7:10: forget must be at least the window (2m): a key forgotten sooner is gone before its silence could be reported)"},
      {rule("threshold = \"5 per 1m\"\nthen = \"b >= 1\"\n"),
       R"(rules.toml:5:8: [[rule]] "r" has then: a sequence names its first step with window = "X" and when = "EXPR", not threshold (which counts every event, the second step's too))"},
      {rule("window = \"1m\"\nwhen = \"a >= 5\"\nthen = \"b >= 1\"\nresolve = true\n"),
       R"(rules.toml:7:11: [[rule]] "r" has then: a sequence alerts once its second step comes, so it has nothing to resolve and nothing that lasts; remove resolve)"},
      {rule("window = \"1m\"\nwhen = \"a >= 5\"\nthen = \"b >= 1\"\nfor = \"1m\"\n"),
       R"(rules.toml:7:7: [[rule]] "r" has then: a sequence alerts once its second step comes, so it has nothing to resolve and nothing that lasts; remove for)"},
      {rule("window = \"1m\"\nwhen = \"a >= 5\"\nthen = \"c >= 1\"\n"),
       R"(rules.toml:6:9: then: unknown event "c" (events: a, b; did you mean "a"?))"},
      {rule("window = \"1m\"\nwhen = \"a >= 5\"\nwithin = \"5m\"\n"),
       R"(rules.toml:6:10: [[rule]] "r" has within but no then; within says how long `then` may take)"},
  };
  for (const Row& r : rows) {
    CAPTURE(r.text);
    CHECK(error_of(r.text) == r.error);
  }
}

TEST_CASE("watch config: a watched rule or a sequence is no fleet rule") {
  const std::string fleet = "[fleet]\nredis = \"redis://127.0.0.1:6379\"\n";
  CHECK(
      error_of(fleet + rule("window = \"1m\"\nwhen = \"a < 1\"\nfleet = \"exact\"\n")) ==
      R"(rules.toml:7:8: [[rule]] "r" is checked at every boundary (for, or a when that holds on an empty window), which a fleet rule is not: the fleet decides on lines; remove fleet)");
  CHECK(
      error_of(fleet + rule("window = \"1m\"\nwhen = \"a >= 1\"\nfor = \"1m\"\nfleet = \"batched\"\n")) ==
      R"(rules.toml:8:7: [[rule]] "r" is checked at every boundary (for, or a when that holds on an empty window), which a fleet rule is not: the fleet decides on lines; remove fleet)");
  CHECK(
      error_of(fleet + rule("window = \"1m\"\nwhen = \"a >= 5\"\nthen = \"b >= 1\"\nfleet = \"exact\"\n")) ==
      R"(rules.toml:8:8: [[rule]] "r" is a sequence (then), which a fleet rule cannot be: the fleet window counts events, not what came after what; remove fleet)");
}

TEST_CASE("watch config: for, then and within are part of the --state identity, and a reload keeps the shape") {
  const cfg::Rule plain = load(rule("window = \"1m\"\nwhen = \"a >= 1\"\n")).rules[0];
  const cfg::Rule for1 = load(rule("window = \"1m\"\nwhen = \"a >= 1\"\nfor = \"1m\"\n")).rules[0];
  const cfg::Rule for2 = load(rule("window = \"1m\"\nwhen = \"a >= 1\"\nfor = \"2m\"\n")).rules[0];
  const cfg::Rule silent = load(rule("window = \"1m\"\nwhen = \"a < 1\"\n")).rules[0];
  const cfg::Rule seq = load(rule("window = \"1m\"\nwhen = \"a >= 1\"\nthen = \"b >= 1\"\n")).rules[0];
  const cfg::Rule seq2 =
      load(rule("window = \"1m\"\nwhen = \"a >= 1\"\nthen = \"b >= 1\"\nwithin = \"30s\"\n")).rules[0];
  CHECK(plain.fingerprint != for1.fingerprint);
  CHECK(for1.fingerprint != for2.fingerprint);
  CHECK(seq.fingerprint != seq2.fingerprint);
  CHECK(seq.fingerprint != plain.fingerprint);
  // A reload keeps the windows of a rule that stays watched (for 1m -> 2m,
  // or silence), never between a watched rule, a sequence and a plain one.
  CHECK(cfg::windows_carry_over(for1, for2));
  CHECK(cfg::windows_carry_over(for1, silent));
  CHECK(cfg::windows_carry_over(seq, seq2));
  CHECK_FALSE(cfg::windows_carry_over(plain, for1));
  CHECK_FALSE(cfg::windows_carry_over(plain, seq));
  CHECK_FALSE(cfg::windows_carry_over(for1, seq));
}

TEST_CASE("watch config: the probe finds conditions that never hold and those that hold only on silence") {
  const std::vector<std::string> names{"a", "b"};
  auto probe = [&](const std::string& text) {
    auto e = cfg::Expr::parse(text, names);
    REQUIRE(e.ok());
    return cfg::probe_condition(*e, 2);
  };
  struct Row {
    std::string when;
    bool somewhere, empty, only_empty;
  };
  const std::vector<Row> rows{
      {"a < 1", true, true, false},  // b may be anything: holds at (0, 5)
      {"a + b < 1", true, true, true},
      {"a == 0 and b == 0", true, true, true},
      {"a < 3", true, true, false},
      {"a >= 1", true, false, false},
      {"a < 0", false, false, false},
      {"a < 1 and a >= 1", false, false, false},
      {"a > a", false, false, false},
      {"b / a > 0.05 and a >= 100", true, false, false},  // needs a >= 100: around the numbers named
      {"a == 1000", true, false, false},
      {"a - b > 7", true, false, false},
  };
  for (const Row& r : rows) {
    CAPTURE(r.when);
    const cfg::ConditionProbe p = probe(r.when);
    CHECK(p.holds_somewhere == r.somewhere);
    CHECK(p.holds_when_empty == r.empty);
    CHECK(p.holds_only_when_empty == r.only_empty);
  }
}

TEST_CASE("watch config: --check shows the watch, and warns about conditions that never hold or hold on silence") {
  const cfg::RuleSet rs = load(
      "[[rule]]\nname = \"silent\"\nkind = \"alert\"\nwindow = \"5m\"\nwhen = \"a + b < 1\"\nkey = \"{host}\"\n" +
      kEvents +
      "[[rule]]\nname = \"never\"\nkind = \"alert\"\nwindow = \"5m\"\nwhen = \"a < 1 and a > 2\"\nresolve = true\n" +
      kEvents +
      "[[rule]]\nname = \"job\"\nkind = \"alert\"\nwindow = \"15m\"\nwhen = \"a >= 1 and b < 1\"\nfor = \"10m\"\n" +
      kEvents + "[[rule]]\nname = \"seq\"\nkind = \"alert\"\nwindow = \"10m\"\nwhen = \"a >= 5\"\nthen = \"b < 0\"\n" +
      kEvents);
  const std::string out = swthrottle::cli::check_summary(rs);
  CHECK(out.find("  checked at every boundary: holds on an empty window (silence), after a window's warm-up; a key is "
                 "forgotten after 15m without an event\n"
                 "  warning: when \"a + b < 1\" holds only on an empty window (silence): without resolve = true "
                 "nothing says when its events come back\n") != std::string::npos);
  CHECK(out.find("  warning: when \"a < 1 and a > 2\" can never hold (no counts swthrottle tried make it true): the "
                 "rule never alerts\n") != std::string::npos);
  CHECK(out.find("  checked at every boundary: for 10m\n") != std::string::npos);
  CHECK(out.find("  then: \"b < 0\" within 10m after when holds\n"
                 "  warning: then \"b < 0\" can never hold: the sequence never completes\n") != std::string::npos);
  // Warnings only where due: the job and the sequence's `when` are fine.
  CHECK(out.find("warning: when \"a >= 1 and b < 1\"") == std::string::npos);
  CHECK(out.find("warning: when \"a >= 5\"") == std::string::npos);
  CHECK(out.substr(out.size() - 11) == "4 rules OK\n");
}

TEST_CASE("watch config: for, forget, then and within are refused beside distinct, new and previous()") {
  struct Row {
    std::string extra, key, what;
  };
  const std::vector<Row> rows{
      {"window = \"1m\"\nwhen = \"distinct >= 3\"\ndistinct = \"{host}\"\nfor = \"30s\"\n", "for", "distinct"},
      {"window = \"1m\"\nwhen = \"distinct < 1\"\ndistinct = \"{host}\"\nforget = \"5m\"\n", "forget", "distinct"},
      {"new = \"{host}\"\nthen = \"b >= 1\"\n", "then", "new"},
      {"window = \"1m\"\nwhen = \"a >= 2 * previous(a)\"\nfor = \"1m\"\n", "for", "previous()"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.extra);
    const std::string e = error_of(rule(row.extra));
    CHECK(e.find("uses " + row.what + ", which " + row.key + " cannot be combined with") != std::string::npos);
    CHECK(e.rfind("rules.toml:", 0) == 0);
  }
  // Each kind alone still loads, and none of them is watched.
  const cfg::RuleSet alone = load(rule("window = \"1m\"\nwhen = \"distinct < 1\"\ndistinct = \"{host}\"\n"));
  CHECK_FALSE(cfg::is_watched(alone.rules[0]));
}
