// Engine: a keyed rule and its backtest copies (config::Rule::matched_as)
// share one key map (engine/window_group.h). An alert copy with the rule's
// window rides on the rule's window with an alert state of its own; a copy
// with another window, or a throttle, has a window of its own in the group.
// Whatever the layout, every copy must write exactly the records it writes
// as a rule of its own, alone in an engine: same times, keys, counts,
// held-back counts and lines, with evictions at max_keys, cooldowns,
// resolves and `when` conditions, in both modes. And --state saves each copy
// as its own engine would.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "config/rules.h"
#include "engine/count_observer.h"
#include "engine/engine.h"
#include "match/matcher.h"
#include "support/seed.h"

namespace {

using swthrottle::config::RuleSet;
using swthrottle::engine::Engine;
using swthrottle::engine::EngineOptions;
using swthrottle::engine::LineEvent;
using swthrottle::engine::Record;
using swthrottle::engine::RecordType;
using swthrottle::match::Matcher;
using swthrottle::match::MatchResult;

RuleSet parse(const std::string& mode, const std::string& rule) {
  const std::string text = "[settings]\nmode = \"" + mode + "\"\n\n" + rule;
  auto r = swthrottle::config::parse_rules(text, "rules.toml");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().str()));
  return std::move(*r);
}

// One rule of two events keyed by user; `condition` is its Y (a number) or
// its `when`, `window` its window, `extra` the rest.
std::string rule_text(const std::string& kind, const std::string& condition, const std::string& window,
                      const std::string& extra) {
  const bool y = condition.find_first_not_of("0123456789") == std::string::npos;
  const std::string limit = y ? "threshold = \"" + condition + " per " + window + "\"\n"
                              : "window = \"" + window + "\"\nwhen = \"" + condition + "\"\n";
  return "[[rule]]\nname = \"r\"\nkind = \"" + kind + "\"\n" + limit + "key = \"{user}\"\n" + extra +
         "\n  [[rule.event]]\n  name = \"error\"\n  match = 'error user=(?P<user>\\w+)'\n"
         "  [[rule.event]]\n  name = \"timeout\"\n  match = 'timeout user=(?P<user>\\w+)'\n";
}

struct Variant {
  std::string kind, condition, window, extra;
  std::string text() const { return rule_text(kind, condition, window, extra); }
};

std::string describe(const Record& r) {
  std::string s = r.type == RecordType::Alert      ? "alert"
                  : r.type == RecordType::Resolved ? "resolved"
                  : r.type == RecordType::Summary  ? "summary"
                                                   : "line";
  s += " t=" + std::to_string(r.time_ms) + " key=" + r.key + " count=" + std::to_string(r.count) + " counts=";
  for (uint64_t c : r.counts) s += std::to_string(c) + ",";
  s += " suppressed=" + std::to_string(r.suppressed);
  if (r.type == RecordType::Summary) s += " first=" + std::to_string(r.first_ms) + " last=" + std::to_string(r.last_ms);
  if (r.has_line) s += " |" + std::string(r.line) + "|";
  return s;
}

struct Line {
  std::string text;
  int64_t t_ms;
};

// Bursts of one user's errors and timeouts over a trickle from many users,
// a few lines stamped behind (late for the short windows).
std::vector<Line> make_log(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Line> lines;
  int64_t t = 1'000'000;
  for (int i = 0; i < 3000; ++i) {
    const bool burst = (i / 200) % 2 == 1;
    t += burst ? static_cast<int64_t>(rng() % 400) : static_cast<int64_t>(rng() % 3000);
    const std::string user = burst ? "u" + std::to_string(i / 400) : "u" + std::to_string(rng() % 12);
    const int64_t stamp = rng() % 60 == 0 ? t - 5'000 - static_cast<int64_t>(rng() % 20'000) : t;
    lines.push_back({std::string(rng() % 3 == 0 ? "timeout" : "error") + " user=" + user, stamp});
  }
  return lines;
}

// Every record of every rule, by rule name, over the log, end of input included.
std::map<std::string, std::vector<std::string>> run(const RuleSet& rules, const std::vector<Line>& log,
                                                    swthrottle::engine::CountObserver* observer = nullptr) {
  auto matcher = Matcher::make(rules);
  REQUIRE(matcher.ok());
  Engine engine(rules, EngineOptions{});
  if (observer != nullptr) engine.observe(observer);
  std::map<std::string, std::vector<std::string>> by_rule;
  std::vector<Record> out;
  MatchResult m;
  auto keep = [&] {
    // A passed line is one record, of the first rule that passed it: each
    // rule's passed lines are in its stats below.
    for (const Record& r : out)
      if (r.rule != nullptr && r.type != RecordType::Line) by_rule[r.rule->name].push_back(describe(r));
  };
  for (const Line& l : log) {
    matcher->match(l.text, m);
    engine.offer(LineEvent{l.text, true, l.t_ms}, m, out);
    keep();
  }
  engine.finish(out);
  keep();
  for (std::size_t i = 0; i < rules.rules.size(); ++i) {
    const auto& st = engine.rule_stats(i);
    by_rule[rules.rules[i].name].push_back(
        "stats lines=" + std::to_string(st.lines.get()) + " events=" + std::to_string(st.events.get()) +
        " passed=" + std::to_string(st.passed.get()) + " suppressed=" + std::to_string(st.suppressed.get()) +
        " alerts=" + std::to_string(st.alerts.get()) + " resolved=" + std::to_string(st.resolveds.get()) +
        " summaries=" + std::to_string(st.summaries.get()) + " late=" + std::to_string(st.late.get()) +
        " keys=" + std::to_string(st.keys.get()) + " evictions=" + std::to_string(st.evictions.get()));
  }
  return by_rule;
}

// Rules of their own, alone in an engine: the records a copy must write.
std::vector<std::string> alone(const std::string& mode, const Variant& v, const std::vector<Line>& log) {
  const RuleSet rules = parse(mode, v.text());
  auto records = run(rules, log);
  return records["r"];
}

// The rule (the first variant) and copies of it (the others) in one rule set.
RuleSet with_copies(const std::string& mode, const std::vector<Variant>& variants) {
  RuleSet set = parse(mode, variants[0].text());
  for (std::size_t i = 1; i < variants.size(); ++i) {
    RuleSet one = parse(mode, variants[i].text());
    swthrottle::config::Rule copy = std::move(one.rules[0]);
    copy.name = "r@" + std::to_string(i);
    copy.matched_as = 0;
    set.rules.push_back(std::move(copy));
  }
  return set;
}

// Counts what it is told, and keeps the engine's word per key busy. Calls
// may come from several deciders at once: it guards its own state.
class CountingObserver final : public swthrottle::engine::CountObserver {
 public:
  void counted(uint32_t rule, std::string_view key, int64_t, uint64_t count, std::atomic<uint32_t>* memo) override {
    std::lock_guard lock(mu);
    if (memo != nullptr) memo->fetch_add(1);
    total[rule] += count;
    ++calls[std::string(key)];
  }
  std::mutex mu;
  std::map<uint32_t, uint64_t> total;
  std::map<std::string, uint64_t> calls;
};

void check_copies(const std::vector<Variant>& variants, bool observed) {
  const uint64_t seed = swthrottle::test::base_seed(20261126);
  const std::vector<Line> log = make_log(seed);
  for (const std::string mode : {"accurate", "efficient"}) {
    CAPTURE(mode);
    CAPTURE(seed);
    const RuleSet set = with_copies(mode, variants);
    CountingObserver observer;
    auto together = run(set, log, observed ? &observer : nullptr);
    for (std::size_t i = 0; i < variants.size(); ++i) {
      const std::string name = i == 0 ? "r" : "r@" + std::to_string(i);
      CAPTURE(name);
      CAPTURE(variants[i].condition);
      CAPTURE(variants[i].window);
      const std::vector<std::string> want = alone(mode, variants[i], log);
      REQUIRE(want.size() > 1);  // every variant writes records: the comparison means something
      // With max_keys below the users, keys were evicted: the shared map's evictions are covered.
      if (variants[i].extra.find("max_keys") != std::string::npos)
        CHECK(want.back().find("evictions=0") == std::string::npos);
      CHECK(together[name] == want);
    }
  }
}

}  // namespace

TEST_CASE("engine shared keys: alert copies ride on the rule's window and write what they write alone") {
  const std::string extra = "cooldown = \"4s\"\nresolve = true\nmax_keys = 5";
  check_copies({{"alert", "3", "10s", extra},
                {"alert", "2", "10s", extra},
                {"alert", "5", "10s", extra},
                {"alert", "8", "10s", extra},
                // Another window: a window of its own in the group, and riders on it.
                {"alert", "3", "4s", extra},
                {"alert", "6", "4s", extra}},
               /*observed=*/false);
}

TEST_CASE("engine shared keys: when conditions, resolve_when and the default cooldown") {
  check_copies({{"alert", "error + timeout >= 4", "10s", "resolve = true\nmax_keys = 3"},
                {"alert", "error + timeout >= 2", "10s", "resolve = true\nmax_keys = 3"},
                {"alert", "error >= 3", "10s", "resolve = true\nresolve_when = \"error == 0\"\nmax_keys = 3"},
                {"alert", "timeout > 1", "20s", "resolve = true\nmax_keys = 3"}},
               /*observed=*/false);
}

TEST_CASE("engine shared keys: throttle copies keep windows of their own, summaries included") {
  check_copies({{"throttle", "3", "10s", "max_keys = 4"},
                {"throttle", "1", "10s", "max_keys = 4"},
                {"throttle", "6", "5s", "max_keys = 4"}},
               /*observed=*/false);
}

TEST_CASE("engine shared keys: an observed engine decides the same, and gives each key its word") {
  const std::string extra = "cooldown = \"4s\"\nresolve = true\nmax_keys = 5";
  check_copies({{"alert", "3", "10s", extra}, {"alert", "5", "10s", extra}},
               /*observed=*/true);
  // Observed, a rule without copies has a group of its own: the same records.
  check_copies({{"alert", "4", "10s", extra}}, /*observed=*/true);
}

TEST_CASE("engine shared keys: --state saves a rider as its own engine saves the rule") {
  const std::string extra = "cooldown = \"4s\"\nresolve = true";
  const std::vector<Variant> variants{{"alert", "3", "10s", extra}, {"alert", "5", "10s", extra}};
  const std::vector<Line> log = make_log(swthrottle::test::base_seed(20261126));
  for (const std::string mode : {"accurate", "efficient"}) {
    CAPTURE(mode);
    const RuleSet set = with_copies(mode, variants);
    const RuleSet own = parse(mode, variants[1].text());
    auto state_of = [&](const RuleSet& rules, const std::string& name) {
      auto matcher = Matcher::make(rules);
      REQUIRE(matcher.ok());
      Engine engine(rules, EngineOptions{});
      std::vector<Record> out;
      MatchResult m;
      for (const Line& l : log) {
        matcher->match(l.text, m);
        engine.offer(LineEvent{l.text, true, l.t_ms}, m, out);
      }
      const auto st = engine.save_state();
      for (const auto& rw : st.rules)
        if (rw.rule == name) return rw;
      FAIL("no rule " << name);
      return st.rules.front();
    };
    const auto rider = state_of(set, "r@1");
    const auto alone_state = state_of(own, "r");
    REQUIRE(rider.windows.size() == alone_state.windows.size());
    bool any_alerted = false;
    for (std::size_t k = 0; k < rider.windows.size(); ++k) {
      const auto& a = rider.windows[k];
      const auto& b = alone_state.windows[k];
      CAPTURE(a.key);
      CHECK(a.key == b.key);
      CHECK(a.window.firing == b.window.firing);
      CHECK(a.window.announced == b.window.announced);
      CHECK(a.window.alerted == b.window.alerted);
      CHECK(a.window.last_alert_ms == b.window.last_alert_ms);
      CHECK(a.window.alert_suppressed == b.window.alert_suppressed);
      CHECK(a.window.buckets.size() == b.window.buckets.size());
      any_alerted = any_alerted || b.window.alerted;
    }
    CHECK(any_alerted);
  }
}

// Several deciders at once (several inputs): a rule, a copy with its own
// window and riders on the rule's window, all on the same few keys. Under
// ThreadSanitizer (.ci/test runs "engine concurrency" there) this checks the
// lock order of key map, riders and windows; here, that every thread's
// lines are counted by every copy and that no alert is lost or doubled in a
// copy that cannot fire twice (a cooldown longer than the run).
TEST_CASE("engine concurrency: shared keys and riders under four deciders") {
  for (const std::string mode : {"accurate", "efficient"}) {
    CAPTURE(mode);
    const std::string extra = "cooldown = \"1h\"\nmax_keys = 3";
    const RuleSet set = with_copies(mode, {{"alert", "50", "1h", extra},
                                           {"alert", "10", "1h", extra},
                                           {"alert", "200", "1h", extra},
                                           {"alert", "30", "30m", extra}});
    auto matcher = Matcher::make(set);
    REQUIRE(matcher.ok());
    Engine engine(set, EngineOptions{});
    CountingObserver observer;
    engine.observe(&observer);
    constexpr int kThreads = 4, kLines = 400;
    std::vector<std::vector<std::string>> alerts(kThreads);
    std::vector<std::thread> threads;
    for (int th = 0; th < kThreads; ++th) {
      threads.emplace_back([&, th] {
        auto m = Matcher::make(set);
        MatchResult r;
        std::vector<Record> out;
        for (int i = 0; i < kLines; ++i) {
          const std::string line = std::string(i % 2 ? "error" : "timeout") + " user=u" + std::to_string(i % 2);
          m->match(line, r);
          engine.offer(LineEvent{line, true, 1'000'000 + i}, r, out);
          for (const Record& rec : out)
            if (rec.type == RecordType::Alert)
              alerts[static_cast<std::size_t>(th)].push_back(rec.rule->name + " " + rec.key);
        }
      });
    }
    for (auto& t : threads) t.join();
    std::map<std::string, int> fired;
    for (const auto& a : alerts)
      for (const auto& s : a) ++fired[s];
    // 1600 lines over 2 keys, 800 each: every copy's threshold is reached
    // for both keys, once (a cooldown of an hour).
    for (const std::string name : {"r", "r@1", "r@2", "r@3"})
      for (const std::string key : {"u0", "u1"}) {
        CAPTURE(name + " " + key);
        CHECK(fired[name + " " + key] == 1);
      }
    for (std::size_t r = 0; r < set.rules.size(); ++r) CHECK(engine.rule_stats(r).events.get() == kThreads * kLines);
  }
}
