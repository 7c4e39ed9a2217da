// state_validation.h: a --state file holds only what a run could have
// written. Values no run writes fail the load with their member path (the
// file is then moved aside, state_file_test.cpp); values only a rule's
// window can judge drop that rule's entry. And what real runs write, in
// both window modes, passes both checks.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "config/rules.h"
#include "engine/engine.h"
#include "match/matcher.h"
#include "state/state_file.h"
#include "state/state_validation.h"
#include "support/process.h"
#include "support/seed.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::config::RuleSet;
using swthrottle::engine::EngineState;
using swthrottle::engine::RuleWindows;
using swthrottle::state::drop_inconsistent;
using swthrottle::state::from_json;
using swthrottle::state::kMaxBucketCount;
using swthrottle::state::kMaxTally;
using swthrottle::state::kMaxTimeMs;
using swthrottle::state::out_of_range;
using swthrottle::state::StateFile;
using swthrottle::state::to_json;
using swthrottle::window::WindowState;

constexpr int64_t kT0 = 1'795'255'205'000;  // 2026-11-21T10:00:05.000Z

// Alert rules of one and two events (keyed, with resolve), a throttle of
// two events without a key (per-event tallies) and a keyed throttle of one.
const char* const kRules = R"toml(
[[rule]]
name = "ssh"
kind = "alert"
threshold = "3 per 10s"
key = "{ip}"
resolve = true
cooldown = "5s"
  [[rule.event]]
  name = "fail"
  match = 'fail from (?P<ip>\S+)'

[[rule]]
name = "ratio"
kind = "alert"
when = "err >= 2 and req >= 2"
window = "20s"
buckets = 4
  [[rule.event]]
  name = "req"
  match = 'GET'
  [[rule.event]]
  name = "err"
  match = ' 500'

[[rule]]
name = "flood"
kind = "throttle"
threshold = "2 per 5s"
  [[rule.event]]
  name = "a"
  match = 'flood a'
  [[rule.event]]
  name = "b"
  match = 'flood b'

[[rule]]
name = "per-user"
kind = "throttle"
threshold = "1 per 3s"
key = "{user}"
  [[rule.event]]
  name = "login"
  match = 'login (?P<user>\w+)'
)toml";

std::unique_ptr<RuleSet> load(const std::string& mode) {
  auto r = swthrottle::config::parse_rules("[settings]\nmode = \"" + mode + "\"\n" + kRules, "rules.toml");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().str()));
  return std::make_unique<RuleSet>(std::move(*r));
}

// A state as a run over these rules saves it, with every kind of window.
EngineState saved_state(const RuleSet& rules) {
  auto m = swthrottle::match::Matcher::make(rules);
  REQUIRE(m.ok());
  swthrottle::engine::Engine engine(rules, {});
  swthrottle::match::MatchResult hits;
  std::vector<swthrottle::engine::Record> out;
  int64_t t = kT0;
  for (const char* line : {"fail from 10.0.0.1", "fail from 10.0.0.1", "fail from 10.0.0.1", "GET / 500", "GET / 500",
                           "flood a", "flood b", "flood a flood b", "flood a", "login alice", "login alice"}) {
    const std::string text(line);
    m->match(text, hits);
    engine.offer(swthrottle::engine::LineEvent{text, true, t}, hits, out);
    t += 300;
  }
  return engine.save_state();
}

// The first window of rule `name` in st.
WindowState& first_window(EngineState& st, std::string_view name) {
  for (RuleWindows& rw : st.rules)
    if (rw.rule == name) {
      REQUIRE(!rw.windows.empty());
      return rw.windows[0].window;
    }
  FAIL("no rule " << name);
  return st.rules[0].windows[0].window;
}

std::size_t rule_index(const EngineState& st, std::string_view name) {
  for (std::size_t r = 0; r < st.rules.size(); ++r)
    if (st.rules[r].rule == name) return r;
  FAIL("no rule " << name);
  return 0;
}

// The error from_json gives for the text of st ("" when it loads).
std::string load_error(const EngineState& st) {
  auto back = from_json(to_json(st, kT0));
  return back.ok() ? std::string() : back.error().what;
}

}  // namespace

TEST_CASE("state validation: what real runs write passes, in both window modes") {
  for (const std::string mode : {"accurate", "efficient"}) {
    CAPTURE(mode);
    auto rules = load(mode);
    EngineState st = saved_state(*rules);
    // Every kind of window is there: firing alerts, a throttle's tallies.
    CHECK(first_window(st, "ssh").firing);
    CHECK(first_window(st, "flood").pending.suppressed > 0);
    CHECK(first_window(st, "flood").pending_counts.size() == 2);
    CHECK(first_window(st, "per-user").pending.suppressed == 1);
    CHECK(!out_of_range(st));
    auto back = from_json(to_json(st, kT0));
    REQUIRE_MESSAGE(back.ok(), (back.ok() ? std::string() : back.error().what));
    CHECK(drop_inconsistent(*back, *rules).empty());
    CHECK(back->rules.size() == 4);
  }
}

TEST_CASE("state validation: random runs of both modes write nothing either check refuses") {
  const uint64_t seed = swthrottle::test::base_seed(18);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const std::vector<std::string> lines = {
      "fail from 10.0.0.1", "fail from 10.0.0.2", "GET / 500", "GET / 200", "flood a", "flood b",
      "flood a flood b",    "login alice",        "login bob", "nothing"};
  for (const std::string mode : {"accurate", "efficient"}) {
    CAPTURE(mode);
    auto rules = load(mode);
    auto m = swthrottle::match::Matcher::make(*rules);
    REQUIRE(m.ok());
    swthrottle::engine::Engine engine(*rules, {});
    swthrottle::match::MatchResult hits;
    std::vector<swthrottle::engine::Record> out;
    int64_t t = kT0;
    for (int i = 0; i < 3000; ++i) {
      // Mostly small steps, sometimes a jump past every window, sometimes late.
      const uint64_t r = rng() % 100;
      t += r < 80 ? int64_t(rng() % 700) : r < 95 ? -int64_t(rng() % 30'000) : int64_t(rng() % 60'000);
      const std::string& text = lines[rng() % lines.size()];
      m->match(text, hits);
      engine.offer(swthrottle::engine::LineEvent{text, true, t}, hits, out);
      if (i % 97 == 0) engine.tick(t + int64_t(rng() % 20'000), out);
      if (i % 50 == 0) {
        EngineState st = engine.save_state();
        st.last_log_ms = t;
        auto back = from_json(to_json(st, kT0));
        REQUIRE_MESSAGE(back.ok(), (back.ok() ? std::string() : back.error().what));
        const auto dropped = drop_inconsistent(*back, *rules);
        REQUIRE_MESSAGE(dropped.empty(), (dropped.empty() ? std::string() : dropped[0]));
      }
    }
  }
}

TEST_CASE("state validation: a value no run writes is an error that names its member") {
  auto rules = load("accurate");
  const EngineState good = saved_state(*rules);
  REQUIRE(load_error(good).empty());
  const std::string ssh = "rules[" + std::to_string(rule_index(good, "ssh")) + "].windows[0]";
  const std::string flood = "rules[" + std::to_string(rule_index(good, "flood")) + "].windows[0]";

  struct Case {
    std::string what;  // the error's `what`, path first
    std::function<void(EngineState&)> corrupt;
  };
  const std::vector<Case> cases = {
      // The finding of issue 18: a "now" near INT64_MAX overflowed the boundary arithmetic.
      {"now_ms: time 9223372036854775000 is out of range (a run writes -1 or 1970-01-01 to 9999-12-31, up to "
       "253402300799999)",
       [](EngineState& s) { s.now_ms = 9223372036854775000; }},
      {"last_log_ms: time -2 is out of range (a run writes -1 or 1970-01-01 to 9999-12-31, up to 253402300799999)",
       [](EngineState& s) { s.last_log_ms = -2; }},
      {ssh + ".now_ms: time 253402300800000 is out of range (a run writes -1 or 1970-01-01 to 9999-12-31, up to "
             "253402300799999)",
       [](EngineState& s) { first_window(s, "ssh").now_ms = kMaxTimeMs + 1; }},
      {ssh + ".buckets[0][0]: bucket -1 is out of range (0 to 253402300799999)",
       [](EngineState& s) { first_window(s, "ssh").buckets[0].bucket = -1; }},
      {ssh + ".buckets[1][0]: bucket 179525520 after bucket 179525520: buckets are saved oldest first, each once",
       [](EngineState& s) {
         auto& w = first_window(s, "ssh");
         w.buckets = {{179525520, {1}}, {179525520, {1}}};
       }},
      {ssh + ".buckets[0][1][0]: count 2147483648000 is out of range (at most 1099511627776)",
       [](EngineState& s) { first_window(s, "ssh").buckets[0].counts[0] = 2147483648000; }},
      {ssh + ".buckets[0][1]: no counts: a rule has at least one event",
       [](EngineState& s) { first_window(s, "ssh").buckets[0].counts.clear(); }},
      {ssh + ".buckets[0][1]: 65 counts: a rule has at most 64 events",
       [](EngineState& s) { first_window(s, "ssh").buckets[0].counts.assign(65, 1); }},
      {flood + ".pending.suppressed: count 281474976710657 is out of range (at most 281474976710656)",
       [](EngineState& s) { first_window(s, "flood").pending.suppressed = kMaxTally + 1; }},
      {flood + ".pending.counts[1]: count 18446744073709551615 is out of range (at most 281474976710656)",
       [](EngineState& s) { first_window(s, "flood").pending_counts[1] = UINT64_MAX; }},
      {flood + ".pending.first_ms: time -9223372036854775808 is out of range (a run writes -1 or 1970-01-01 to "
               "9999-12-31, up to 253402300799999)",
       [](EngineState& s) { first_window(s, "flood").pending.first_ms = INT64_MIN; }},
      {flood + ".pending.counts: per-event counts without suppressed lines",
       [](EngineState& s) { first_window(s, "flood").pending.suppressed = 0; }},
      {ssh + ".announced: true while \"firing\" is false",
       [](EngineState& s) { first_window(s, "ssh").firing = false; }},
      {ssh + ".firing: true while \"alerted\" is false",
       [](EngineState& s) {
         auto& w = first_window(s, "ssh");
         w.announced = false;
         w.alerted = false;
       }},
      {flood + ".last_alert_ms: an alert time while \"alerted\" is false",
       [](EngineState& s) { first_window(s, "flood").last_alert_ms = 5; }},
      {ssh + ".last_alert_ms: alert time 1795255210000 after the window's now_ms 1795255208000",
       [](EngineState& s) { first_window(s, "ssh").last_alert_ms = kT0 + 5000; }},
      {ssh + ".last_alert_ms: time -1 is out of range (1970-01-01 to 9999-12-31, up to 253402300799999)",
       [](EngineState& s) { first_window(s, "ssh").last_alert_ms = -1; }},
      {ssh + ".alert_suppressed: count 18446744073709551615 is out of range (at most 281474976710656)",
       [](EngineState& s) { first_window(s, "ssh").alert_suppressed = UINT64_MAX; }},
      {"fleet_unsent[0].newest_t_ms: time 9223372036854775807 is out of range (a run writes -1 or 1970-01-01 to "
       "9999-12-31, up to 253402300799999)",
       [](EngineState& s) {
         swthrottle::engine::FleetUnsent u;
         u.rule = "ssh";
         u.newest_t_ms = INT64_MAX;
         s.fleet_unsent.push_back(u);
       }},
      {"fleet_unsent[0].counts[0][2]: count 1099511627777 is out of range (at most 1099511627776)",
       [](EngineState& s) {
         swthrottle::engine::FleetUnsent u;
         u.rule = "ssh";
         u.counts.push_back({0, 0, kMaxBucketCount + 1});
         s.fleet_unsent.push_back(u);
       }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    EngineState st = good;
    c.corrupt(st);
    CHECK(load_error(st) == c.what);
  }
  // The bounds themselves are what a run may write.
  EngineState edge = good;
  first_window(edge, "ssh").buckets[0].counts[0] = kMaxBucketCount;
  first_window(edge, "flood").pending.suppressed = kMaxTally;
  CHECK(load_error(edge).empty());
}

// Issue 32: a pending summary whose first_ms is after its last_ms loaded
// silently and changed the summary written. Times in a window are in
// order: first_ms <= last_ms <= the window's now_ms.
TEST_CASE("state validation: a pending summary's times out of order are an error that names its member") {
  auto rules = load("accurate");
  const EngineState good = saved_state(*rules);
  const std::string flood = "rules[" + std::to_string(rule_index(good, "flood")) + "].windows[0]";
  EngineState probe = good;
  const WindowState w = first_window(probe, "flood");
  REQUIRE(w.pending.suppressed > 0);
  REQUIRE(w.pending.first_ms <= w.pending.last_ms);
  REQUIRE(w.pending.last_ms <= w.now_ms);

  EngineState later = good;
  first_window(later, "flood").pending.first_ms = w.pending.last_ms + 1;
  CHECK(load_error(later) == flood + ".pending.first_ms: time " + std::to_string(w.pending.last_ms + 1) +
                                 " after last_ms " + std::to_string(w.pending.last_ms) +
                                 ": the first suppressed line comes first");
  EngineState ahead = good;
  first_window(ahead, "flood").pending.last_ms = w.now_ms + 1;
  CHECK(load_error(ahead) == flood + ".pending.last_ms: time " + std::to_string(w.now_ms + 1) +
                                 " after the window's now_ms " + std::to_string(w.now_ms));
  EngineState none = good;
  first_window(none, "flood").pending.first_ms = -1;
  CHECK(load_error(none) == flood + ".pending.first_ms: no time for the suppressed lines");
  // With nothing suppressed the times are left over from the last summary: not checked.
  EngineState idle = good;
  auto& iw = first_window(idle, "flood");
  iw.pending.suppressed = 0;
  iw.pending_counts.clear();
  iw.pending.first_ms = iw.now_ms + 5;
  CHECK(load_error(idle).empty());
}

// Lines a moment out of order are decided at their own, older time: the
// summary's first and last are the earliest and latest, in both modes.
TEST_CASE("state validation: out-of-order suppressed lines keep first_ms <= last_ms, in both window modes") {
  for (const std::string mode : {"accurate", "efficient"}) {
    CAPTURE(mode);
    auto rules = load(mode);
    auto m = swthrottle::match::Matcher::make(*rules);
    REQUIRE(m.ok());
    swthrottle::engine::Engine engine(*rules, {});
    swthrottle::match::MatchResult hits;
    std::vector<swthrottle::engine::Record> out;
    // Two pass (2 per 5s), then 10:00:07 and 10:00:06 are held back.
    for (int64_t t : {kT0, kT0 + 1000, kT0 + 2000, kT0 + 1500}) {
      const std::string text = "flood a";
      m->match(text, hits);
      engine.offer(swthrottle::engine::LineEvent{text, true, t}, hits, out);
    }
    EngineState st = engine.save_state();
    const WindowState& w = first_window(st, "flood");
    CHECK(w.pending.suppressed == 2);
    CHECK(w.pending.first_ms == kT0 + 1500);  // before (accurate): 2000, the first decided
    CHECK(w.pending.last_ms == kT0 + 2000);   // before: 1500, the last decided
    CHECK(load_error(st).empty());
  }
}

TEST_CASE("state validation: an entry its rule's window could not have written is dropped, the others stay") {
  auto rules = load("efficient");
  const EngineState good = saved_state(*rules);
  REQUIRE(good.rules.size() == 4);
  const std::size_t ssh = rule_index(good, "ssh"), ratio = rule_index(good, "ratio"), flood = rule_index(good, "flood");

  struct Case {
    std::string message;
    std::string rule;  // the entry dropped
    std::function<void(EngineState&)> corrupt;
  };
  const std::string at_ssh = "rules[" + std::to_string(ssh) + "]";
  const std::string at_ratio = "rules[" + std::to_string(ratio) + "]";
  const std::string at_flood = "rules[" + std::to_string(flood) + "]";
  const std::vector<Case> cases = {
      // The window of ssh is at the last line, 10:00:08 (a firing window
      // moves with the boundary checks; 1 s buckets): bucket 1795255208.
      // A future bucket index, one digit changed.
      {at_ssh + ".windows[0].buckets[0][0]: bucket 1795255805 is not in the window at its now_ms 1795255208000 "
                "(buckets 1795255199 to 1795255208 of 1s); rule \"ssh\" starts fresh",
       "ssh", [](EngineState& s) { first_window(s, "ssh").buckets[0].bucket = 1795255805; }},
      {at_ssh + ".windows[0].buckets[0][0]: bucket 1795255195 is not in the window at its now_ms 1795255208000 "
                "(buckets 1795255199 to 1795255208 of 1s); rule \"ssh\" starts fresh",
       "ssh", [](EngineState& s) { first_window(s, "ssh").buckets[0].bucket = 1795255195; }},
      // Its now moved back by a digit: the buckets are ahead of it.
      {at_ssh + ".windows[0].buckets[0][0]: bucket 1795255205 is not in the window at its now_ms 1795255105600 "
                "(buckets 1795255096 to 1795255105 of 1s); rule \"ssh\" starts fresh",
       "ssh",
       [](EngineState& s) {
         auto& w = first_window(s, "ssh");
         w.now_ms = 1795255105600;
         w.last_alert_ms = 0;
         w.alerted = w.firing = w.announced = false;
       }},
      {at_ratio + ".windows[0].buckets[0][1]: 1 counts for a window of 2 events; rule \"ratio\" starts fresh", "ratio",
       [](EngineState& s) { first_window(s, "ratio").buckets[0].counts.resize(1); }},
      {at_ratio + ".windows: 2 windows for a rule without `key`, which has one; rule \"ratio\" starts fresh", "ratio",
       [&](EngineState& s) {
         s.rules[ratio].windows.push_back({"x", first_window(s, "ratio")});
       }},
      {at_ratio + ".windows[0].key: key \"10.0.0.1\" for a rule without `key`; rule \"ratio\" starts fresh", "ratio",
       [&](EngineState& s) { s.rules[ratio].windows[0].key = "10.0.0.1"; }},
      {at_flood + ".windows[0].pending.counts: 3 per-event counts for a throttle of 2 events; rule \"flood\" starts "
                  "fresh",
       "flood", [](EngineState& s) { first_window(s, "flood").pending_counts.push_back(1); }},
      {at_flood + ".windows[0]: an alert's state in the window of a throttle; rule \"flood\" starts fresh", "flood",
       [](EngineState& s) { first_window(s, "flood").alert_suppressed = 3; }},
      {at_ssh + ".windows[0].pending.suppressed: suppressed lines of a throttle in the window of an alert; rule "
                "\"ssh\" starts fresh",
       "ssh", [](EngineState& s) { first_window(s, "ssh").pending.suppressed = 2; }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.message);
    EngineState st = good;
    c.corrupt(st);
    REQUIRE(!out_of_range(st));  // each passes the first check: only the rule can tell
    const auto messages = drop_inconsistent(st, *rules);
    REQUIRE(messages.size() == 1);
    CHECK(messages[0] == c.message);
    CHECK(st.rules.size() == 3);
    for (const RuleWindows& rw : st.rules) CHECK(rw.rule != c.rule);
  }

  // An entry of a rule that changed, or is gone, is not this check's: the
  // engine does not load it (and says so for a changed one).
  EngineState other = good;
  other.rules[ssh].fingerprint = "another rule";
  first_window(other, "ssh").buckets[0].bucket = 1;
  other.rules[ratio].rule = "gone";
  other.rules[ratio].windows.push_back({"x", {}});
  CHECK(drop_inconsistent(other, *rules).empty());
  CHECK(other.rules.size() == 4);
}

TEST_CASE("state validation: a file with a value out of range is moved aside like a corrupt one, with the place") {
  swthrottle::test::TempDir dir;
  const std::string path = dir.file("state.json");
  const std::string text =
      "{\"swthrottle_state\":1,\"now_ms\":5000,\"last_log_ms\":-1,\"rules\":[\n"
      "{\"rule\":\"r\",\"fingerprint\":\"f\",\"windows\":[\n"
      "{\"key\":\"k\",\"now_ms\":5000,\"buckets\":[[5,[3000000000000]]],"
      "\"pending\":{\"suppressed\":0,\"first_ms\":0,\"last_ms\":0},\"firing\":false,\"announced\":false,"
      "\"alerted\":false,\"last_alert_ms\":0,\"alert_suppressed\":0}]}]}\n";
  dir.write("state.json", text);
  StateFile sf(path);
  std::string warning;
  const EngineState st = sf.load(warning, kT0);
  CHECK(st.rules.empty());
  const std::string aside = path + ".corrupt-20261121T100005Z";
  CHECK(warning == "state file " + path +
                       ": rules[0].windows[0].buckets[0][1][0]: count 3000000000000 is out of range (at most "
                       "1099511627776); moved aside to " +
                       aside + ", starting fresh");
  CHECK(swthrottle::test::read_file(aside) == text);
}
