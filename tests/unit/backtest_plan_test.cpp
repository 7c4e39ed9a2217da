// The plan of a backtest (backtest/sweep_plan.h): --sweep and --sweep-window
// as parsed, the number a `when` can be swept by, the candidate copies of
// the swept rules, and what the Matcher gives those copies (the hits of the
// rule they copy).
#include "backtest/sweep_plan.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/rules.h"
#include "match/matcher.h"
#include "match/prefilter.h"

namespace {

using swthrottle::backtest::parse_sweep;
using swthrottle::backtest::plan_sweep;
using swthrottle::backtest::PlanSlot;
using swthrottle::backtest::SweepPlan;
using swthrottle::backtest::SweepRequest;
using swthrottle::backtest::when_threshold;
using swthrottle::config::FleetMode;
using swthrottle::config::Rule;
using swthrottle::config::RuleKind;
using swthrottle::config::RuleSet;
using swthrottle::match::LineSpan;
using swthrottle::match::Matcher;
using swthrottle::match::MatchResult;

RuleSet rules_of(const std::string& toml) {
  auto r = swthrottle::config::parse_rules(toml, "rules.toml");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().str()));
  return std::move(*r);
}

SweepRequest sweep_of(std::string_view values, std::string_view windows = "") {
  auto s = parse_sweep(values, windows);
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().what));
  return std::move(*s);
}

SweepPlan plan_of(const RuleSet& rules, const SweepRequest& sweep, const std::vector<std::string>& only = {}) {
  auto p = plan_sweep(rules, only, sweep);
  REQUIRE_MESSAGE(p.ok(), (p.ok() ? std::string() : p.error().str()));
  return std::move(*p);
}

std::string plan_error(const RuleSet& rules, const SweepRequest& sweep, const std::vector<std::string>& only = {},
                       bool lenient = false) {
  auto p = plan_sweep(rules, only, sweep, lenient);
  REQUIRE_FALSE(p.ok());
  return p.error().what;
}

std::string sweep_error(std::string_view values, std::string_view windows = "") {
  auto s = parse_sweep(values, windows);
  REQUIRE_FALSE(s.ok());
  return s.error().what;
}

std::vector<std::string> names_of(const SweepPlan& p) {
  std::vector<std::string> out;
  for (const Rule& r : p.rules.rules) out.push_back(r.name);
  return out;
}

const Rule& rule_named(const SweepPlan& p, std::string_view name) {
  for (const Rule& r : p.rules.rules)
    if (r.name == name) return r;
  FAIL("no rule " << name);
  return p.rules.rules.front();
}

bool eval(const Rule& r, std::vector<uint64_t> counts) { return r.when.eval(counts); }

const std::string kFleet = "[fleet]\nredis = \"unix:/nonexistent\"\n\n";

// ssh: a keyed threshold rule with exec, ignore and no cooldown of its own;
// ratio: a sweepable `when` with its own cooldown; flood: a throttle shared
// with the fleet; combo: a `when` no sweep can vary (an `or`).
const std::string kRules = kFleet + R"toml(
[[rule]]
name = "ssh"
kind = "alert"
threshold = "5 per 1m"
key = "{ip}"
exec = ["true"]
ignore = 'from 10\.0\.0\.'
  [[rule.event]]
  name = "failed"
  match = 'Failed password from (?P<ip>[0-9.]+)'
  [[rule.event]]
  name = "invalid"
  match = 'Invalid user \S+ from (?P<ip>[0-9.]+)'

[[rule]]
name = "ratio"
kind = "alert"
window = "5m"
when = "error / request > 0.05"
cooldown = "10m"
  [[rule.event]]
  name = "request"
  match = 'HTTP/1'
  [[rule.event]]
  name = "error"
  match = 'HTTP/1\S* 5\d\d '

[[rule]]
name = "flood"
kind = "throttle"
threshold = "100 per 10s"
fleet = "exact"
  [[rule.event]]
  name = "any"
  match = 'flood'

[[rule]]
name = "combo"
kind = "alert"
window = "1m"
when = "a >= 3 or b >= 1"
  [[rule.event]]
  name = "a"
  match = 'AAA'
  [[rule.event]]
  name = "b"
  match = 'BBB'
)toml";

// --- parse_sweep ---

TEST_CASE("backtest parse_sweep: lists keep their order, drop repeats, allow spaces") {
  auto s = sweep_of(" 5, 10 ,20,10,  50 ");
  CHECK(s.values == std::vector<std::string>{"5", "10", "20", "50"});
  CHECK_FALSE(s.automatic);
  CHECK(s.windows.empty());
  CHECK(s.any());
  CHECK(sweep_of("0.05,0.1").values == std::vector<std::string>{"0.05", "0.1"});
  CHECK(sweep_of("7").values == std::vector<std::string>{"7"});
  // Nothing asked: nothing to sweep.
  CHECK_FALSE(sweep_of("", "").any());
  CHECK_FALSE(sweep_of("  ", " ").any());
}

TEST_CASE("backtest parse_sweep: a range is ten values, whole when both ends are") {
  CHECK(sweep_of("5..50").values ==
        std::vector<std::string>{"5", "10", "15", "20", "25", "30", "35", "40", "45", "50"});
  CHECK(sweep_of(" 10 .. 100 ").values ==
        std::vector<std::string>{"10", "20", "30", "40", "50", "60", "70", "80", "90", "100"});
  CHECK(sweep_of("0.01..0.1").values ==
        std::vector<std::string>{"0.01", "0.02", "0.03", "0.04", "0.05", "0.06", "0.07", "0.08", "0.09", "0.1"});
  // A short whole range: rounded, without repeats, still increasing.
  CHECK(sweep_of("1..5").values == std::vector<std::string>{"1", "2", "3", "4", "5"});
  // Whatever the ends, the values go up strictly.
  for (std::string_view range : {"3..40", "1..2.5", "0.5..7", "2..11"}) {
    CAPTURE(range);
    auto s = sweep_of(range);
    REQUIRE(s.values.size() >= 2);
    CHECK(s.values.size() <= 10);
    for (std::size_t i = 1; i < s.values.size(); ++i) CHECK(std::stod(s.values[i - 1]) < std::stod(s.values[i]));
  }
}

TEST_CASE("backtest parse_sweep: auto") {
  auto s = sweep_of("auto");
  CHECK(s.automatic);
  CHECK(s.values.empty());
  CHECK(s.any());
  CHECK(sweep_of(" auto ").automatic);
}

TEST_CASE("backtest parse_sweep: errors name the bad item and its column") {
  CHECK(sweep_error("5,x,10") == R"(--sweep: column 3: "x" is not a positive number (a list is "5,10,20"))");
  CHECK(sweep_error("5,10,-3").find("column 6: \"-3\"") != std::string::npos);
  CHECK(sweep_error("0").find("column 1: \"0\"") != std::string::npos);
  CHECK(sweep_error("5,,10").find("column 3: \"\"") != std::string::npos);
  CHECK(sweep_error("5,10,").find("column 6") != std::string::npos);
  CHECK(sweep_error("1.2.3").find("column 1") != std::string::npos);
  // A padded item: the column is the item's, not its spaces'.
  CHECK(sweep_error("5,  y").find("column 5: \"y\"") != std::string::npos);
  // Ranges: the end that is wrong, or the direction.
  CHECK(sweep_error("x..50").find("column 1: \"x\"") != std::string::npos);
  CHECK(sweep_error("5..y").find("column 4: \"y\"") != std::string::npos);
  CHECK(sweep_error("5.. y").find("column 5: \"y\"") != std::string::npos);
  CHECK(sweep_error("50..5").find("must go up") != std::string::npos);
  CHECK(sweep_error("5..5").find("must go up") != std::string::npos);
  CHECK(sweep_error("Auto").find("column 1") != std::string::npos);
}

TEST_CASE("backtest parse_sweep: windows are durations, as written") {
  auto s = sweep_of("", "30s, 1m,5m");
  REQUIRE(s.windows.size() == 3);
  CHECK(s.windows[0] == std::pair<int64_t, std::string>{30'000, "30s"});
  CHECK(s.windows[1] == std::pair<int64_t, std::string>{60'000, "1m"});
  CHECK(s.windows[2] == std::pair<int64_t, std::string>{300'000, "5m"});
  CHECK(s.values.empty());
  CHECK(s.any());
  // The same window twice is one candidate, as the first spelling.
  auto twice = sweep_of("", "1m,60s,1m");
  REQUIRE(twice.windows.size() == 1);
  CHECK(twice.windows[0].second == "1m");

  const std::string bad = sweep_error("5", "1m,soon");
  CHECK(bad.rfind("--sweep-window: column 4: \"soon\"", 0) == 0);
  CHECK(sweep_error("", "1m,").find("--sweep-window: column 4") != std::string::npos);
  CHECK(sweep_error("", "0s").find("--sweep-window: column 1") != std::string::npos);
}

// --- when_threshold ---

TEST_CASE("backtest when_threshold: one comparison EXPR >= N or EXPR > N") {
  auto a = when_threshold("error >= 3");
  REQUIRE(a.has_value());
  CHECK(a->prefix == "error >=");
  CHECK(a->number == "3");
  auto b = when_threshold("  error / request > 0.05 ");
  REQUIRE(b.has_value());
  CHECK(b->prefix == "error / request >");
  CHECK(b->number == "0.05");
  auto c = when_threshold("a+b>=12");
  REQUIRE(c.has_value());
  CHECK(c->prefix == "a+b>=");
  CHECK(c->number == "12");
  // "and", "or", "not" inside an event's name are no operators.
  auto d = when_threshold("android >= 2");
  REQUIRE(d.has_value());
  CHECK(d->prefix == "android >=");
  CHECK(d->number == "2");
  auto e = when_threshold("order > 1");
  REQUIRE(e.has_value());
  CHECK(e->number == "1");
  CHECK(when_threshold("notice + band + floor + sand_or >= 4").has_value());
  CHECK(when_threshold("or_x >= 4").has_value());
  CHECK(a->guard.empty());
}

TEST_CASE("backtest when_threshold: a comparison with `and` guards sweeps the comparison, keeps the guards") {
  // The form the man page recommends for a ratio: before, "not swept".
  auto r = when_threshold("error / request > 0.05 and request >= 100");
  REQUIRE(r.has_value());
  CHECK(r->prefix == "error / request >");
  CHECK(r->number == "0.05");
  CHECK(r->guard == "and request >= 100");
  CHECK(r->with("0.1") == "error / request > 0.1 and request >= 100");
  auto two = when_threshold("  a >= 3 and b >= 1 and (c > 2)  ");
  REQUIRE(two.has_value());
  CHECK(two->number == "3");
  CHECK(two->guard == "and b >= 1 and (c > 2)");
  // `and` inside parentheses belongs to the first comparison: not one comparison.
  CHECK_FALSE(when_threshold("(a and b) >= 3 and c > 1").has_value());
  auto named = when_threshold("sand >= 2 and android > 0");
  REQUIRE(named.has_value());
  CHECK(named->prefix == "sand >=");
  CHECK(named->guard == "and android > 0");
}

TEST_CASE("backtest when_threshold: a condition of silence, EXPR < N or EXPR <= N") {
  auto a = when_threshold("hb < 1");
  REQUIRE(a.has_value());
  CHECK(a->prefix == "hb <");
  CHECK(a->number == "1");
  auto b = when_threshold("success + retry <= 2");
  REQUIRE(b.has_value());
  CHECK(b->prefix == "success + retry <=");
  CHECK(b->number == "2");
  // With `and` guards, as a comparison upwards (the guards kept as written).
  auto guarded = when_threshold("hb < 1 and any >= 1");
  REQUIRE(guarded.has_value());
  CHECK(guarded->prefix == "hb <");
  CHECK(guarded->guard == "and any >= 1");
  CHECK_FALSE(when_threshold("hb < 0").has_value());
}

TEST_CASE("backtest when_threshold: anything else is not swept") {
  for (std::string_view w : {"a >= 3 and b",
                             "a >= b and b >= 1",
                             "a >= 3 and b >= 1 or c > 1",
                             "a > 3 or b > 1",
                             "not a > 3",
                             "not-a > 3",
                             "a >= 3 and-b",
                             "(a >= 1)or(b >= 1)",
                             "3 <= a",
                             "3 < a",
                             "a >= b",
                             "a == 3",
                             "a != 3",
                             "a",
                             "a >= 0",
                             "a >= -3",
                             "a > 3 > 2",
                             "1 < a > 3",
                             "a >= 3 + 1",
                             "(a >= 3)",
                             "a >= 3x",
                             ""}) {
    CAPTURE(w);
    CHECK_FALSE(when_threshold(w).has_value());
  }
}

TEST_CASE("backtest when_threshold: whatever it accepts reads back as the same `when`") {
  // Rebuilding prefix + number must give a condition the language reads, for
  // every form it accepts, and one that is not negated.
  const std::vector<std::string> names{"a", "android", "order", "notice"};
  // "not-a > 3" is `not (-a > 3)`, a negation: not swept (above), though it reads.
  CHECK(swthrottle::config::Expr::parse("not-a > 3", names).ok());
  for (std::string_view w : {"a >= 3", "android > 2", "order >= 1", "notice*2 > 0.5", "-a > 1", "a - order >= 2",
                             "a < 2", "order <= 1", "a / order > 0.5 and order >= 2"}) {
    CAPTURE(w);
    auto t = when_threshold(w);
    REQUIRE(t.has_value());
    auto original = swthrottle::config::Expr::parse(w, names);
    auto rebuilt = swthrottle::config::Expr::parse(t->with(t->number), names);
    REQUIRE(original.ok());
    REQUIRE(rebuilt.ok());
    for (uint64_t n : {0u, 1u, 2u, 3u, 4u, 10u}) {
      const std::vector<uint64_t> counts{n, n, n / 2, n};
      CHECK(original->eval(counts) == rebuilt->eval(counts));
    }
  }
}

// --- plan_sweep ---

TEST_CASE("backtest plan_sweep: copies follow the loaded rules, in source order") {
  const RuleSet rules = rules_of(kRules);
  const SweepPlan p = plan_of(rules, sweep_of("5,10"));
  CHECK(names_of(p) == std::vector<std::string>{"ssh", "ratio", "flood", "combo", "ssh@10/1m", "ratio@5/5m",
                                                "ratio@10/5m", "flood@offered", "flood@5/10s", "flood@10/10s"});
  // Each copy is matched as its source; the loaded rules as themselves.
  const std::vector<std::optional<uint32_t>> want{std::nullopt, std::nullopt, std::nullopt, std::nullopt, 0u,
                                                  1u,           1u,           2u,           2u,           2u};
  REQUIRE(p.rules.rules.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    CAPTURE(p.rules.rules[i].name);
    CHECK(p.rules.rules[i].matched_as == want[i]);
  }
  // No actions and no fleet on any rule.
  REQUIRE(rules.rules[0].exec.size() == 1);
  REQUIRE(rules.rules[2].fleet != FleetMode::Off);
  for (const Rule& r : p.rules.rules) {
    CAPTURE(r.name);
    CHECK(r.exec.empty());
    CHECK(r.fleet == FleetMode::Off);
  }
  // Every rule is selected: one result each, in rule order.
  REQUIRE(p.results.size() == 4);
  CHECK(p.result_rule == std::vector<uint32_t>{0, 1, 2, 3});
  REQUIRE(p.slots.size() == p.rules.rules.size());
  for (uint32_t i = 0; i < 4; ++i) {
    CHECK(p.slots[i].result == i);
    CHECK(p.slots[i].role == PlanSlot::Role::Rule);
  }
  CHECK(p.results[0].condition == "threshold = 5 per 1m");
  CHECK(p.results[1].condition == "when = error / request > 0.05 (window 5m)");
  CHECK(p.results[0].keyed);
  CHECK_FALSE(p.results[1].keyed);
  CHECK(p.results[0].bucket_ms == 6'000);
}

TEST_CASE("backtest plan_sweep: a threshold copy has the other Y, the rest as its source") {
  const RuleSet rules = rules_of(kRules);
  const SweepPlan p = plan_of(rules, sweep_of("5,10"));
  const Rule& src = p.rules.rules[0];
  const Rule& c = rule_named(p, "ssh@10/1m");
  CHECK(c.threshold == std::optional<uint64_t>{10});
  CHECK(src.threshold == std::optional<uint64_t>{5});
  // The compiled condition is the copy's own: the sum of both events >= 10.
  CHECK_FALSE(eval(c, {5, 4}));
  CHECK(eval(c, {6, 4}));
  CHECK(eval(src, {3, 2}));
  CHECK(c.window_ms == src.window_ms);
  CHECK(c.window_text == "1m");
  CHECK(c.cooldown_ms == src.cooldown_ms);
  CHECK(c.ignore == src.ignore);
  CHECK(c.event_names == src.event_names);
  CHECK(c.fingerprint != src.fingerprint);

  // The rule's own candidate is the rule itself: current, no copy.
  const auto& sweep = p.results[0].sweep;
  REQUIRE(sweep.size() == 2);
  CHECK(sweep[0].value == "5");
  CHECK(sweep[0].current);
  CHECK(sweep[1].value == "10");
  CHECK(sweep[1].number == 10);
  CHECK(sweep[1].window == "1m");
  CHECK(sweep[1].window_ms == 60'000);
  CHECK_FALSE(sweep[1].current);
  CHECK(names_of(p) == std::vector<std::string>{"ssh", "ratio", "flood", "combo", "ssh@10/1m", "ratio@5/5m",
                                                "ratio@10/5m", "flood@offered", "flood@5/10s", "flood@10/10s"});
  // A copy's slot points at its candidate.
  for (std::size_t r = p.rules.rules.size() - 6; r < p.rules.rules.size(); ++r) {
    const PlanSlot& s = p.slots[r];
    CAPTURE(p.rules.rules[r].name);
    REQUIRE(s.result < p.results.size());
    if (s.role == PlanSlot::Role::Counter) continue;
    CHECK(s.role == PlanSlot::Role::Candidate);
    const auto& cand = p.results[s.result].sweep.at(s.candidate);
    CHECK(p.rules.rules[r].name == p.results[s.result].name + "@" + cand.value + "/" + cand.window);
    CHECK_FALSE(cand.current);
  }
  CHECK(p.slots[4].result == 0);
  CHECK(p.slots[4].candidate == 1);
}

TEST_CASE("backtest plan_sweep: a `when` copy ends in the other number") {
  const RuleSet rules = rules_of(kRules);
  const SweepPlan p = plan_of(rules, sweep_of("0.1,0.01"), {"ratio"});
  CHECK(names_of(p) == std::vector<std::string>{"ssh", "ratio", "flood", "combo", "ratio@0.01/5m", "ratio@0.1/5m"});
  const Rule& lo = rule_named(p, "ratio@0.01/5m");
  const Rule& hi = rule_named(p, "ratio@0.1/5m");
  CHECK(lo.when_text == "error / request > 0.01");
  CHECK(hi.when_text == "error / request > 0.1");
  CHECK_FALSE(lo.threshold.has_value());
  // Events: request, error. 8 errors in 100 requests.
  CHECK(eval(lo, {100, 8}));
  CHECK(eval(p.rules.rules[1], {100, 8}));
  CHECK_FALSE(eval(hi, {100, 8}));
  CHECK(lo.cooldown_ms == 600'000);
  // The sweep in increasing order, the rule's own value among them.
  const auto& sweep = p.results[0].sweep;
  REQUIRE(sweep.size() == 3);
  CHECK(sweep[0].value == "0.01");
  CHECK(sweep[1].value == "0.05");
  CHECK(sweep[1].current);
  CHECK(sweep[2].value == "0.1");
}

TEST_CASE("backtest plan_sweep: windows, and a cooldown that follows the window") {
  const RuleSet rules = rules_of(kRules);
  const SweepPlan p = plan_of(rules, sweep_of("10", "2m,1m"), {"ssh", "ratio"});
  // ssh (1m): 5 and 10, each per 1m and 2m; ratio (5m): 0.05 and 10, per 1m, 2m and 5m.
  CHECK(names_of(p) == std::vector<std::string>{"ssh", "ratio", "flood", "combo", "ssh@5/2m", "ssh@10/1m", "ssh@10/2m",
                                                "ratio@0.05/1m", "ratio@0.05/2m", "ratio@10/1m", "ratio@10/2m",
                                                "ratio@10/5m"});
  // ssh sets no cooldown: its copies' cooldown is their window.
  CHECK(rule_named(p, "ssh@5/2m").window_ms == 120'000);
  CHECK(rule_named(p, "ssh@5/2m").window_text == "2m");
  CHECK(rule_named(p, "ssh@5/2m").cooldown_ms == 120'000);
  CHECK(rule_named(p, "ssh@5/2m").threshold == std::optional<uint64_t>{5});
  CHECK(rule_named(p, "ssh@10/1m").cooldown_ms == 60'000);
  // ratio sets its own: it stays.
  CHECK(rule_named(p, "ratio@0.05/1m").window_ms == 60'000);
  CHECK(rule_named(p, "ratio@0.05/1m").cooldown_ms == 600'000);
  CHECK(rule_named(p, "ratio@0.05/1m").when_text == "error / request > 0.05");
  CHECK(rule_named(p, "ratio@10/5m").window_ms == 300'000);
  const auto& sweep = p.results[0].sweep;
  REQUIRE(sweep.size() == 4);
  CHECK(sweep[0].window == "1m");
  CHECK(sweep[0].current);
  CHECK(sweep[1].window == "2m");
  CHECK_FALSE(sweep[1].current);
  CHECK(std::count_if(p.results[1].sweep.begin(), p.results[1].sweep.end(), [](const auto& c) { return c.current; }) ==
        1);
}

TEST_CASE("backtest plan_sweep: a throttle gets one counting copy") {
  const RuleSet rules = rules_of(kRules);
  const SweepPlan p = plan_of(rules, SweepRequest{}, {"flood"});
  CHECK(names_of(p) == std::vector<std::string>{"ssh", "ratio", "flood", "combo", "flood@offered"});
  const Rule& c = p.rules.rules[4];
  CHECK(c.kind == RuleKind::Throttle);
  CHECK(c.matched_as == std::optional<uint32_t>{2});
  REQUIRE(c.threshold.has_value());
  CHECK(*c.threshold >= 1'000'000'000'000u);
  CHECK_FALSE(eval(c, {1'000'000'000}));
  CHECK(p.slots[4].role == PlanSlot::Role::Counter);
  CHECK(p.slots[4].result == 0);
  CHECK(p.results[0].sweep.empty());
  // Rules not selected report nowhere.
  CHECK(p.slots[0].result == PlanSlot::kNone);
  CHECK(p.slots[2].result == 0);
  CHECK(p.result_rule == std::vector<uint32_t>{2});
}

TEST_CASE("backtest plan_sweep: no sweep, no copies but the throttle's") {
  const RuleSet rules = rules_of(kRules);
  const SweepPlan p = plan_of(rules, SweepRequest{});
  CHECK(names_of(p) == std::vector<std::string>{"ssh", "ratio", "flood", "combo", "flood@offered"});
  for (const auto& r : p.results) CHECK(r.sweep.empty());
  for (const auto& r : p.results) CHECK(r.not_swept.empty());
}

TEST_CASE("backtest plan_sweep: --sweep auto is a ladder around each rule's own value") {
  const RuleSet rules = rules_of(kRules);
  const SweepPlan p = plan_of(rules, sweep_of("auto"), {"ssh", "ratio"});
  const auto& ssh = p.results[0].sweep;
  REQUIRE(ssh.size() >= 5);
  std::size_t current = 0;
  for (std::size_t i = 0; i < ssh.size(); ++i) {
    if (ssh[i].current) {
      ++current;
      CHECK(ssh[i].value == "5");
    }
    if (i > 0) CHECK(ssh[i - 1].number < ssh[i].number);
    CHECK(ssh[i].number == static_cast<double>(static_cast<uint64_t>(ssh[i].number)));  // whole
  }
  CHECK(current == 1);
  CHECK(ssh.front().number < 5);
  CHECK(ssh.back().number > 5);
  const auto& ratio = p.results[1].sweep;
  REQUIRE(ratio.size() >= 5);
  CHECK(ratio.front().number < 0.05);
  CHECK(ratio.back().number > 0.05);
}

TEST_CASE("backtest plan_sweep: --only with an unknown name") {
  const RuleSet rules = rules_of(kRules);
  CHECK(plan_error(rules, SweepRequest{}, {"ssh", "nope"}) == "--only nope: no rule of that name");
  // Lenient (the old rules of a diff): the name selects nothing.
  auto p = plan_sweep(rules, {"ssh", "nope"}, SweepRequest{}, true);
  REQUIRE(p.ok());
  REQUIRE(p->results.size() == 1);
  CHECK(p->results[0].name == "ssh");
}

TEST_CASE("backtest plan_sweep: values and windows a rule cannot take") {
  const RuleSet rules = rules_of(kRules);
  const std::string frac = plan_error(rules, sweep_of("5,2.5"), {"ssh"});
  CHECK(frac.find("--sweep 2.5") != std::string::npos);
  CHECK(frac.find("\"ssh\"") != std::string::npos);
  CHECK(frac.find("whole number") != std::string::npos);
  // A `when` takes fractions.
  CHECK(plan_sweep(rules, {"ratio"}, sweep_of("2.5")).ok());

  const RuleSet seven = rules_of(R"toml(
[[rule]]
name = "sevens"
kind = "alert"
threshold = "3 per 7s"
buckets = 7
  [[rule.event]]
  name = "e"
  match = 'x'
)toml");
  auto bad = plan_sweep(seven, {}, sweep_of("", "14s,1m"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().what.find("\"sevens\"") != std::string::npos);
  CHECK(bad.error().what.find("1m") != std::string::npos);
  CHECK(bad.error().what.find("7 buckets") != std::string::npos);
  CHECK(bad.error().line > 0);
  auto good = plan_sweep(seven, {}, sweep_of("", "14s"));
  REQUIRE(good.ok());
  CHECK(names_of(*good) == std::vector<std::string>{"sevens", "sevens@3/14s"});
  CHECK(good->rules.rules[1].buckets == 7);
}

TEST_CASE("backtest plan_sweep: a ratio with a minimum volume sweeps the ratio and keeps the guard") {
  // Before: "not swept", though it is the form the man page recommends.
  const RuleSet rules = rules_of(R"toml(
[[rule]]
name = "ratio"
kind = "alert"
window = "5m"
when = "error / request > 0.05 and request >= 100"
  [[rule.event]]
  name = "request"
  match = 'HTTP/1'
  [[rule.event]]
  name = "error"
  match = 'HTTP/1\S* 5\d\d '
)toml");
  const SweepPlan p = plan_of(rules, sweep_of("0.1,0.01"));
  REQUIRE(p.results.size() == 1);
  CHECK(p.results[0].not_swept.empty());
  CHECK(names_of(p) == std::vector<std::string>{"ratio", "ratio@0.01/5m", "ratio@0.1/5m"});
  const Rule& lo = rule_named(p, "ratio@0.01/5m");
  CHECK(lo.when_text == "error / request > 0.01 and request >= 100");
  CHECK(rule_named(p, "ratio@0.1/5m").when_text == "error / request > 0.1 and request >= 100");
  // Events: request, error. The guard holds in each copy: 2 errors in 99 requests are too few.
  CHECK(eval(lo, {100, 2}));
  CHECK_FALSE(eval(lo, {99, 2}));
  CHECK_FALSE(eval(rule_named(p, "ratio@0.1/5m"), {100, 8}));
}

TEST_CASE("backtest plan_sweep: a `when` no sweep can vary") {
  const RuleSet rules = rules_of(kRules);
  const SweepPlan p = plan_of(rules, sweep_of("5"), {"combo"});
  REQUIRE(p.results.size() == 1);
  CHECK_FALSE(p.results[0].not_swept.empty());
  CHECK(p.results[0].sweep.empty());
  CHECK(names_of(p) == std::vector<std::string>{"ssh", "ratio", "flood", "combo"});

  // With --sweep-window it is still swept, by its window, its condition as written.
  const SweepPlan w = plan_of(rules, sweep_of("5", "2m"), {"combo"});
  CHECK_FALSE(w.results[0].not_swept.empty());
  const auto& sweep = w.results[0].sweep;
  REQUIRE(sweep.size() == 2);
  CHECK(sweep[0].current);
  CHECK(sweep[0].window == "1m");
  CHECK(sweep[1].window == "2m");
  REQUIRE(w.rules.rules.size() == 5);
  const Rule& c = w.rules.rules[4];
  CHECK(c.matched_as == std::optional<uint32_t>{3});
  CHECK(c.when_text == "a >= 3 or b >= 1");
  CHECK(c.window_ms == 120'000);
  CHECK(c.cooldown_ms == 120'000);
  CHECK(eval(c, {3, 0}));
  CHECK_FALSE(eval(c, {2, 0}));

  // Only --sweep-window: nothing to say about the condition.
  const SweepPlan only_w = plan_of(rules, sweep_of("", "2m"), {"combo"});
  CHECK(only_w.results[0].not_swept.empty());
  CHECK(only_w.results[0].sweep.size() == 2);
}

// --- the Matcher with copies ---

// "rule{events}[captures]" per hit, in hit order.
std::string describe(const RuleSet& rules, const MatchResult& m) {
  std::string s;
  for (const auto& hit : m.hits) {
    const Rule& rule = rules.rules[hit.rule];
    s += (s.empty() ? "" : " ") + rule.name + "{" + std::to_string(hit.events) + "}";
    if (!rule.capture_names.empty() && hit.first_capture < m.captures.size()) {
      s += "[";
      for (std::size_t c = 0; c < rule.capture_names.size(); ++c)
        s += (c ? "," : "") + std::string(m.captures[hit.first_capture + c]);
      s += "]";
    }
  }
  return s;
}

// One result per line, matched one by one and as a batch (which must agree),
// with the prefilter on or off.
std::vector<std::string> match_lines(const RuleSet& rules, const std::vector<std::string>& lines, bool prefilter) {
  auto m = Matcher::make(rules, false, prefilter);
  REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error().str()));
  std::string text;
  std::vector<LineSpan> spans;
  for (const auto& l : lines) {
    spans.emplace_back(text.size(), l.size());
    text += l + "\n";
  }
  std::vector<MatchResult> batch(lines.size());
  m->match_batch(text, spans, batch);
  std::vector<std::string> out;
  MatchResult one;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    m->match(lines[i], one);
    CAPTURE(lines[i]);
    CHECK(describe(rules, one) == describe(rules, batch[i]));
    // Hits in rule order; a copy's hit has its source's events and capture slots.
    for (std::size_t h = 0; h < one.hits.size(); ++h) {
      if (h > 0) CHECK(one.hits[h - 1].rule < one.hits[h].rule);
      const Rule& r = rules.rules[one.hits[h].rule];
      if (!r.matched_as) continue;
      const auto src =
          std::find_if(one.hits.begin(), one.hits.end(), [&](const auto& x) { return x.rule == *r.matched_as; });
      REQUIRE(src != one.hits.end());
      CHECK(src->events == one.hits[h].events);
      CHECK(src->first_capture == one.hits[h].first_capture);
    }
    out.push_back(describe(rules, one));
  }
  return out;
}

TEST_CASE("backtest matcher: a copy gets the hits of its rule") {
  const RuleSet rules = rules_of(kRules);
  const SweepPlan p = plan_of(rules, sweep_of("5,10"), {"ssh", "ratio"});
  REQUIRE(names_of(p) ==
          std::vector<std::string>{"ssh", "ratio", "flood", "combo", "ssh@10/1m", "ratio@5/5m", "ratio@10/5m"});
  const std::vector<std::string> lines{
      "Failed password from 1.2.3.4 port 22",
      "Invalid user bob from 5.6.7.8",
      "GET / HTTP/1.1 503 12",
      "Failed password from 1.2.3.4 via HTTP/1.1 500 x",
      "Failed password from 10.0.0.5 port 22",  // ssh ignores it: its copies too
      "Failed password from 10.0.0.5 HTTP/1.0 200 x",
      "nothing here",
      "flood AAA BBB",
  };
  const std::vector<std::string> want{
      "ssh{1}[1.2.3.4] ssh@10/1m{1}[1.2.3.4]",
      "ssh{2}[5.6.7.8] ssh@10/1m{2}[5.6.7.8]",
      "ratio{3} ratio@5/5m{3} ratio@10/5m{3}",
      "ssh{1}[1.2.3.4] ratio{3} ssh@10/1m{1}[1.2.3.4] ratio@5/5m{3} ratio@10/5m{3}",
      "",
      "ratio{1} ratio@5/5m{1} ratio@10/5m{1}",
      "",
      "flood{1} combo{3}",
  };
  for (bool prefilter : {true, false}) {
    CAPTURE(prefilter);
    CHECK(match_lines(p.rules, lines, prefilter) == want);
  }
}

TEST_CASE("backtest matcher: copies of several rules, and of a throttle") {
  const RuleSet rules = rules_of(kRules);
  const SweepPlan p = plan_of(rules, sweep_of("5,10"));
  const std::vector<std::string> lines{"flood from 1.2.3.4 Failed password from 1.2.3.4 HTTP/1.1 503 AAA", "x"};
  const std::vector<std::string> want{
      "ssh{1}[1.2.3.4] ratio{3} flood{1} combo{1} ssh@10/1m{1}[1.2.3.4] ratio@5/5m{3} ratio@10/5m{3} "
      "flood@offered{1} flood@5/10s{1} flood@10/10s{1}",
      ""};
  for (bool prefilter : {true, false}) {
    CAPTURE(prefilter);
    CHECK(match_lines(p.rules, lines, prefilter) == want);
  }
}

TEST_CASE("backtest matcher: copies of a rule on JSON fields") {
  const RuleSet rules = rules_of(R"toml(
[[rule]]
name = "jerr"
kind = "alert"
threshold = "2 per 1m"
key = "{.svc}"
ignore = 'noisy'
  [[rule.event]]
  name = "error"
  fields = { level = "error" }
)toml");
  const SweepPlan p = plan_of(rules, sweep_of("3,4"));
  REQUIRE(names_of(p) == std::vector<std::string>{"jerr", "jerr@3/1m", "jerr@4/1m"});
  const std::vector<std::string> lines{
      R"({"level":"error","svc":"pay"})",
      R"({"level":"info","svc":"pay"})",
      R"({"level":"error","svc":"noisy"})",
      "level=error svc=pay",
  };
  const std::vector<std::string> want{"jerr{1}[pay] jerr@3/1m{1}[pay] jerr@4/1m{1}[pay]", "", "", ""};
  for (bool prefilter : {true, false}) {
    CAPTURE(prefilter);
    CHECK(match_lines(p.rules, lines, prefilter) == want);
  }
}

TEST_CASE("backtest matcher: a copy must follow its rule, with the same events") {
  RuleSet rules = rules_of(kRules);
  Rule c = rules.rules[1];
  c.name = "early";
  c.matched_as = 3;  // a rule after it
  rules.rules.insert(rules.rules.begin() + 2, c);
  CHECK_FALSE(Matcher::make(rules).ok());
}

}  // namespace

// --- the kinds of issue 29 ---

TEST_CASE("backtest spike_factor: the one number of N * previous(e), previous(e) * N or previous(e) / N") {
  using swthrottle::backtest::spike_factor;
  auto a = spike_factor("error >= 3 * previous(error) and error >= 20");
  REQUIRE(a.has_value());
  CHECK(a->prefix == "error >= ");
  CHECK(a->number == "3");
  CHECK(a->suffix == " * previous(error) and error >= 20");
  auto b = spike_factor("request <= previous(request) / 2.5 and previous(request) >= 100");
  REQUIRE(b.has_value());
  CHECK(b->number == "2.5");
  CHECK(b->prefix + "4" + b->suffix == "request <= previous(request) / 4 and previous(request) >= 100");
  auto c = spike_factor("e>previous(e)*1.5");
  REQUIRE(c.has_value());
  CHECK(c->number == "1.5");
  // No factor, or two: not swept.
  CHECK_FALSE(spike_factor("error > previous(error)").has_value());
  CHECK_FALSE(spike_factor("a >= 2 * previous(a) or b >= 3 * previous(b)").has_value());
  CHECK_FALSE(spike_factor("error >= 3").has_value());
  CHECK_FALSE(spike_factor("myprevious(x) * 2").has_value());
}

TEST_CASE("backtest plan_sweep: a spike is swept by its factor, distinct by its threshold, new not at all") {
  const RuleSet rules = rules_of(R"toml(
[[rule]]
name = "spike"
kind = "alert"
window = "1m"
when = "error >= 3 * previous(error) and error >= 20"
  [[rule.event]]
  name = "error"
  match = 'ERROR'
[[rule]]
name = "many"
kind = "alert"
threshold = "5 per 1m"
key = "{user}"
distinct = "{ip}"
  [[rule.event]]
  name = "login"
  match = 'login (?P<user>\w+) from (?P<ip>\S+)'
[[rule]]
name = "fresh"
kind = "alert"
new = "{ip}"
  [[rule.event]]
  name = "login"
  match = 'login (?P<user>\w+) from (?P<ip>\S+)'
)toml");
  const SweepPlan p = plan_of(rules, sweep_of("2,4"), {});
  CHECK(names_of(p) ==
        std::vector<std::string>{"spike", "many", "fresh", "spike@2/1m", "spike@4/1m", "many@2/1m", "many@4/1m"});
  const Rule& two = rule_named(p, "spike@2/1m");
  CHECK(two.when_text == "error >= 2 * previous(error) and error >= 20");
  CHECK(two.keeps_previous);
  // error, previous(error): 25 against 10 is 2.5 times.
  CHECK(eval(two, {25, 10}));
  CHECK_FALSE(eval(rule_named(p, "spike@4/1m"), {25, 10}));
  CHECK_FALSE(eval(p.rules.rules[0], {25, 10}));
  // A distinct copy compares the count of distinct values: login, distinct.
  const Rule& many2 = rule_named(p, "many@2/1m");
  CHECK(many2.distinct.has_value());
  CHECK(eval(many2, {1, 2}));
  CHECK_FALSE(eval(many2, {100, 1}));
  // A new rule has no threshold to vary: not swept, and said why.
  REQUIRE(p.results.size() == 3);
  CHECK(p.results[2].not_swept ==
        "a new rule raises one alert per value not seen within remember; it has no threshold "
        "(--sweep-window varies remember)");
  CHECK(p.results[2].sweep.empty());
  CHECK(p.results[0].sweep.size() == 3);
  // --sweep-window varies its remember.
  const SweepPlan w = plan_of(rules, sweep_of("", "7d"), {"fresh"});
  const Rule& week = rule_named(w, "fresh@1/7d");
  CHECK(week.window_ms == 7 * 86'400'000LL);
  CHECK(week.new_value.has_value());
}
