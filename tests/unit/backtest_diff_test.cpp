// The rule diff of `backtest --against` (backtest/rule_diff.h) and the
// suggestion line of a sweep (backtest/suggestion.h).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backtest/report.h"
#include "backtest/rule_diff.h"
#include "backtest/suggestion.h"
#include "backtest/terminal_text.h"

namespace {

using swthrottle::backtest::alert_budget;
using swthrottle::backtest::AlertMark;
using swthrottle::backtest::Candidate;
using swthrottle::backtest::diff_rules;
using swthrottle::backtest::DiffChange;
using swthrottle::backtest::RuleDiff;
using swthrottle::backtest::RuleResult;
using swthrottle::backtest::span_text;
using swthrottle::backtest::suggest;
using Kind = swthrottle::backtest::DiffChange::Kind;

constexpr int64_t kMin = 60'000;
constexpr int64_t kHour = 3'600'000;
constexpr int64_t kDay = 86'400'000;

RuleResult rule(std::string name, int64_t window_ms, std::vector<std::pair<std::string, int64_t>> alerts) {
  RuleResult r;
  r.name = std::move(name);
  r.window_ms = window_ms;
  for (auto& [key, t] : alerts) r.alerts.push_back(AlertMark{t, key, 1});
  r.outcome.alerts = r.alerts.size();
  return r;
}

RuleDiff diff_one(const RuleResult& older, const RuleResult& newer) {
  auto d = diff_rules({older}, {newer});
  REQUIRE(d.size() == 1);
  return d[0];
}

// "moved A 1000->31000", "removed A 0", "added B 5".
std::vector<std::string> changes(const RuleDiff& d) {
  std::vector<std::string> out;
  for (const DiffChange& c : d.changes) {
    switch (c.kind) {
      case Kind::Moved:
        out.push_back("moved " + c.key + " " + std::to_string(c.old_ms) + "->" + std::to_string(c.new_ms));
        break;
      case Kind::Removed: out.push_back("removed " + c.key + " " + std::to_string(c.old_ms)); break;
      case Kind::Added: out.push_back("added " + c.key + " " + std::to_string(c.new_ms)); break;
    }
  }
  return out;
}

void check_counts(const RuleDiff& d, std::size_t old_marks, std::size_t new_marks) {
  CHECK(d.unchanged + d.moved + d.removed == old_marks);
  CHECK(d.unchanged + d.moved + d.added == new_marks);
  CHECK(d.changes.size() == d.moved + d.removed + d.added);
}

TEST_CASE("backtest diff: the same alerts are unchanged") {
  const RuleResult r = rule("ssh", kMin, {{"A", 1'000}, {"B", 2'000}, {"A", 5 * kMin}});
  const RuleDiff d = diff_one(r, r);
  CHECK(d.rule == "ssh");
  CHECK(d.status == "unchanged");
  CHECK(d.old_alerts == 3);
  CHECK(d.new_alerts == 3);
  CHECK(d.unchanged == 3);
  CHECK(d.changes.empty());
  check_counts(d, 3, 3);
  // No alerts either side: unchanged too.
  CHECK(diff_one(rule("q", kMin, {}), rule("q", kMin, {})).status == "unchanged");
}

TEST_CASE("backtest diff: an alert less than the new window away moved") {
  const RuleDiff d = diff_one(rule("ssh", kMin, {{"A", 1'000}, {"A", 10 * kMin}}),
                              rule("ssh", kMin, {{"A", 31'000}, {"A", 10 * kMin}}));
  CHECK(d.status == "changed");
  CHECK(d.moved == 1);
  CHECK(d.unchanged == 1);
  CHECK(changes(d) == std::vector<std::string>{"moved A 1000->31000"});
  check_counts(d, 2, 2);
  // Earlier is moved too.
  CHECK(changes(diff_one(rule("r", kMin, {{"A", 50'000}}), rule("r", kMin, {{"A", 1'000}}))) ==
        std::vector<std::string>{"moved A 50000->1000"});
}

TEST_CASE("backtest diff: a window or more away is removed and added") {
  const RuleDiff d = diff_one(rule("ssh", kMin, {{"A", 0}}), rule("ssh", kMin, {{"A", 2 * kMin}}));
  CHECK(d.status == "changed");
  CHECK(d.moved == 0);
  CHECK(d.removed == 1);
  CHECK(d.added == 1);
  CHECK(changes(d) == std::vector<std::string>{"removed A 0", "added A 120000"});
  check_counts(d, 1, 1);
  // The bound: exactly a window apart does not pair, a millisecond less does.
  CHECK(changes(diff_one(rule("r", kMin, {{"A", 0}}), rule("r", kMin, {{"A", kMin}}))) ==
        std::vector<std::string>{"removed A 0", "added A 60000"});
  CHECK(changes(diff_one(rule("r", kMin, {{"A", 0}}), rule("r", kMin, {{"A", kMin - 1}}))) ==
        std::vector<std::string>{"moved A 0->59999"});
  // The new rule's window decides.
  CHECK(changes(diff_one(rule("r", 10'000, {{"A", 0}}), rule("r", kMin, {{"A", 30'000}}))) ==
        std::vector<std::string>{"moved A 0->30000"});
  CHECK(changes(diff_one(rule("r", kMin, {{"A", 0}}), rule("r", 10'000, {{"A", 30'000}}))) ==
        std::vector<std::string>{"removed A 0", "added A 30000"});
}

TEST_CASE("backtest diff: alerts pair within their key only") {
  const RuleDiff d = diff_one(rule("ssh", kMin, {{"A", 1'000}, {"B", 5'000}}),
                              rule("ssh", kMin, {{"B", 1'000}, {"B", 5'000}, {"C", 2'000}}));
  CHECK(d.unchanged == 1);  // B at 5000
  CHECK(d.moved == 0);      // B at 1000 is no move of A's, nor of B's 5000 (which is unchanged)
  CHECK(d.removed == 1);
  CHECK(d.added == 2);
  // In time order (a removal at its old time, the rest at their new).
  CHECK(changes(d) == std::vector<std::string>{"removed A 1000", "added B 1000", "added C 2000"});
  check_counts(d, 2, 3);
}

TEST_CASE("backtest diff: the nearest alert pairs first") {
  // New alerts a second after and 59 s before an old one: it moved by a second.
  CHECK(changes(diff_one(rule("r", kMin, {{"A", 59'000}}), rule("r", kMin, {{"A", 0}, {"A", 60'000}}))) ==
        std::vector<std::string>{"added A 0", "moved A 59000->60000"});
  // Old alerts 55 s and 5 s before a new one: the later moved.
  CHECK(changes(diff_one(rule("r", kMin, {{"A", 0}, {"A", 50'000}}), rule("r", kMin, {{"A", 55'000}}))) ==
        std::vector<std::string>{"removed A 0", "moved A 50000->55000"});
  // Otherwise in time order: each its nearest.
  CHECK(
      changes(diff_one(rule("r", kMin, {{"A", 0}, {"A", 70'000}}), rule("r", kMin, {{"A", 10'000}, {"A", 71'000}}))) ==
      std::vector<std::string>{"moved A 0->10000", "moved A 70000->71000"});
}

TEST_CASE("backtest diff: rules on one side only") {
  const std::vector<RuleResult> older{rule("gone", kMin, {{"A", 3'000}, {"", 1'000}}), rule("kept", kMin, {})};
  const std::vector<RuleResult> newer{rule("fresh", kMin, {{"x", 7'000}}), rule("kept", kMin, {{"k", 9'000}})};
  const auto d = diff_rules(older, newer);
  REQUIRE(d.size() == 3);
  // The new rules' order, then the rules only the old rules have.
  CHECK(d[0].rule == "fresh");
  CHECK(d[0].status == "new rule");
  CHECK(d[0].new_alerts == 1);
  CHECK(d[0].old_alerts == 0);
  CHECK(d[0].added == 1);
  CHECK(changes(d[0]) == std::vector<std::string>{"added x 7000"});
  CHECK(d[1].rule == "kept");
  CHECK(d[1].status == "changed");
  CHECK(changes(d[1]) == std::vector<std::string>{"added k 9000"});
  CHECK(d[2].rule == "gone");
  CHECK(d[2].status == "removed rule");
  CHECK(d[2].old_alerts == 2);
  CHECK(d[2].new_alerts == 0);
  CHECK(d[2].removed == 2);
  CHECK(changes(d[2]).size() == 2);
  for (const auto& c : d[2].changes) CHECK(c.kind == Kind::Removed);
}

TEST_CASE("backtest diff: more alerts than marks kept is a change") {
  RuleResult older = rule("r", kMin, {{"A", 0}});
  RuleResult newer = older;
  older.outcome.alerts = 20'000;
  newer.outcome.alerts = 20'001;
  const RuleDiff d = diff_one(older, newer);
  CHECK(d.unchanged == 1);
  CHECK(d.status == "changed");
  CHECK(d.old_alerts == 20'000);
  CHECK(d.new_alerts == 20'001);
}

TEST_CASE("backtest diff: counts add up, changes in time order") {
  // Pseudo-random alerts of three keys, old and new drawn alike.
  uint64_t seed = 12345;
  auto next = [&seed] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed >> 33;
  };
  for (int round = 0; round < 20; ++round) {
    std::vector<std::pair<std::string, int64_t>> o, n;
    const std::size_t no = next() % 30, nn = next() % 30;
    for (std::size_t i = 0; i < no; ++i)
      o.emplace_back(std::string(1, static_cast<char>('a' + next() % 3)), next() % (60 * kMin));
    for (std::size_t i = 0; i < nn; ++i)
      n.emplace_back(std::string(1, static_cast<char>('a' + next() % 3)), next() % (60 * kMin));
    CAPTURE(round);
    const RuleDiff d = diff_one(rule("r", 5 * kMin, o), rule("r", 5 * kMin, n));
    check_counts(d, no, nn);
    int64_t last = -1;
    for (const DiffChange& c : d.changes) {
      const int64_t t = c.kind == Kind::Removed ? c.old_ms : c.new_ms;
      CHECK(t >= last);
      last = t;
      if (c.kind == Kind::Moved) {
        CHECK(c.old_ms != c.new_ms);
        CHECK(std::llabs(c.old_ms - c.new_ms) < 5 * kMin);
      }
    }
    CHECK(d.status == (d.changes.empty() && no == nn ? "unchanged" : "changed"));
  }
}

// --- suggestion ---

TEST_CASE("backtest suggestion: the alert budget scales the target to the history") {
  CHECK(alert_budget(1, kDay, 7 * kDay) == 7);
  CHECK(alert_budget(1, kDay, 4 * kHour) == 1);   // at least one
  CHECK(alert_budget(1, kDay, 36 * kHour) == 1);  // rounded down
  CHECK(alert_budget(3, 12 * kHour, kDay) == 6);
  CHECK(alert_budget(0, kDay, 7 * kDay) == 1);
  CHECK(alert_budget(5, kDay, 0) == 5);
}

Candidate cand(std::string value, uint64_t alerts, bool current = false, std::string window = "1m",
               int64_t window_ms = kMin) {
  Candidate c;
  c.value = value;
  c.number = std::stod(value);
  c.window = std::move(window);
  c.window_ms = window_ms;
  c.current = current;
  c.outcome.alerts = alerts;
  return c;
}

RuleResult swept(std::vector<Candidate> sweep, bool threshold = true) {
  RuleResult r;
  r.name = "ssh";
  if (threshold) r.threshold = 5;
  r.window = "1m";
  r.window_ms = kMin;
  r.sweep = std::move(sweep);
  return r;
}

TEST_CASE("backtest suggestion: the smallest value within the budget") {
  const RuleResult r = swept({cand("2", 30), cand("5", 12, true), cand("10", 4), cand("20", 1), cand("50", 0)});
  CHECK(suggest(r, 7, 7 * kDay, "1/1d") ==
        "Y = 10 would have fired 4 times over these 7d; the current Y = 5 fired 12 times (target: at most 7 (1/1d))");
  CHECK(suggest(r, 4, 7 * kDay, "1/1d").rfind("Y = 10 would have fired 4 times", 0) == 0);
  CHECK(suggest(r, 3, 7 * kDay, "1/1d").rfind("Y = 20 would have fired once", 0) == 0);
  // The current value within the target: said so; the smaller value that
  // also stays within it is named, not pressed.
  CHECK(suggest(r, 30, 7 * kDay, "1/1d") ==
        "the current Y = 5 fired 12 times over these 7d, within the target (target: at most 30 (1/1d)); Y = 2, more "
        "sensitive, would have too (30 times)");
}

TEST_CASE("backtest suggestion: the current value when it is within") {
  const RuleResult r = swept({cand("2", 30), cand("5", 12, true), cand("10", 4)});
  CHECK(suggest(r, 12, 4 * kHour + 8 * kMin, "3 per 1h") ==
        "the current Y = 5 fired 12 times over these 4h 8m, within the target (target: at most 12 (3 per 1h))");
}

TEST_CASE("backtest suggestion: when no candidate stays within") {
  const RuleResult r = swept({cand("2", 30), cand("5", 12, true), cand("10", 4)});
  CHECK(suggest(r, 1, 7 * kDay, "1/1d") ==
        "no candidate stays within the target; the fewest: Y = 10 fired 4 times over these 7d (target: at most 1 "
        "(1/1d))");
}

TEST_CASE("backtest suggestion: a `when` value, and windows") {
  const RuleResult w = swept({cand("0.01", 9), cand("0.05", 3, true), cand("0.1", 1)}, false);
  CHECK(
      suggest(w, 1, kDay, "1/1d").rfind("0.1 would have fired once over these 1d; the current 0.05 fired 3 times", 0) ==
      0);
  // Several windows: each value says its window; among equal values, the
  // window nearest the rule's own.
  const RuleResult ws =
      swept({cand("5", 9, true), cand("5", 8, false, "2m", 2 * kMin), cand("10", 2, false, "30s", 30'000),
             cand("10", 2, false, "5m", 5 * kMin), cand("10", 1, false, "2m", 2 * kMin)});
  CHECK(suggest(ws, 2, kDay, "1/1d").rfind("Y = 10 per 30s would have fired 2 times", 0) == 0);
  CHECK(suggest(ws, 2, kDay, "1/1d").find("the current Y = 5 per 1m fired 9 times") != std::string::npos);
}

TEST_CASE("backtest suggestion: none for a throttle or without a sweep") {
  RuleResult t = swept({cand("2", 30), cand("5", 12, true)});
  t.kind = swthrottle::config::RuleKind::Throttle;
  CHECK(suggest(t, 100, kDay, "1/1d").empty());
  CHECK(suggest(swept({}), 100, kDay, "1/1d").empty());
}

TEST_CASE("backtest suggestion: span_text, the two largest units") {
  CHECK(span_text(4 * kHour + 8 * kMin) == "4h 8m");
  CHECK(span_text(3 * kDay + 2 * kHour) == "3d 2h");
  CHECK(span_text(45'000) == "45s");
  CHECK(span_text(kDay) == "1d");
  CHECK(span_text(kDay + 4'000) == "1d");  // adjacent units only: not "1d 4s"
  CHECK(span_text(kDay + kHour + kMin + 1'000) == "1d 1h");
  CHECK(span_text(kHour + 30'000) == "1h");
  CHECK(span_text(2 * kMin + 5'500) == "2m 5s");
  CHECK(span_text(1'000) == "1s");
  CHECK(span_text(999) == "999ms");
  CHECK(span_text(0) == "0ms");
  CHECK(span_text(-5) == "0ms");
}

}  // namespace
