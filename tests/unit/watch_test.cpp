// Watched rules and sequences in the engine (man page: SILENCE AND
// SEQUENCES), scenario by scenario: the exact records, with the reasoning
// next to them. Unless a rule says otherwise the window is 10s of 10
// buckets, so w = 1000 ms, and times are small numbers of ms.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cli/explain.h"
#include "engine/engine.h"
#include "state/state_codec.h"
#include "state/state_validation.h"
#include "support/engine_run.h"

namespace {

namespace sw = swthrottle;
using sw::test::EngineRun;

const std::vector<std::string> kModes{"accurate", "efficient"};

// A rule over the events hb (`HB host`) and x (`X host`), keyed by host
// unless `keyed` is false, with `extra` lines.
std::string rules(const std::string& mode, const std::string& extra, bool keyed = true) {
  return "[settings]\nmode = \"" + mode + "\"\n[[rule]]\nname = \"r\"\nkind = \"alert\"\nwindow = \"10s\"\n" +
         (keyed ? "key = \"{host}\"\n" : "") + extra +
         "  [[rule.event]]\n  name = \"hb\"\n  match = 'HB (?P<host>\\w+)'\n"
         "  [[rule.event]]\n  name = \"x\"\n  match = 'X (?P<host>\\w+)'\n";
}

}  // namespace

TEST_CASE("watch: a rule without key fires on silence only once it has watched one whole window") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    EngineRun r(rules(mode, "when = \"hb < 1\"\nresolve = true\n", false));
    // The run's first time is 500 (bucket 0): warm at bucket 10.
    CHECK(r.line("noise", 500) == "");
    CHECK(r.tick(9'999) == "");
    // 10000 is bucket 10: the window (1..10) has no hb, and the rule has
    // watched buckets 1..10 whole. Dated at the boundary, without a line.
    CHECK(r.tick(10'000) == "alert t=10000 r key= count=0 counts=[0,0] suppressed=0\n");
    // Announced once: later checks of the same silence write nothing.
    CHECK(r.tick(30'000) == "");
    CHECK(r.line("HB a", 30'500) == "resolved t=30500 r key= count=1 counts=[1,0] suppressed=0\n");
    // hb at 30500 (bucket 30) leaves at bucket 40: silence again, announced
    // (the cooldown, the window, passed since 10000).
    CHECK(r.line("noise", 45'000) == "alert t=40000 r key= count=0 counts=[0,0] suppressed=0\n");
  }
}

TEST_CASE("watch: a key is watched from its first event, and silence is dated at each boundary crossed") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    EngineRun r(rules(mode, "when = \"hb < 3\"\nresolve = true\n"));
    // a beats at 3500 (bucket 3): 1 < 3 holds, but a is warm only from
    // bucket 13; b beats every second from 0 and never falls below 3.
    CHECK(r.line("HB b", 0) == "");
    CHECK(r.line("HB a", 3'500) == "");
    std::string got;
    for (int64_t t = 1'000; t <= 20'000; t += 1'000) got += r.line("HB b", t);
    // At bucket 13 (13000) a's window (4..13) is empty and a is warm: the
    // alert, dated at 13000 by the line of b that crossed it.
    CHECK(got == "alert t=13000 r key=a count=0 counts=[0,0] suppressed=0\n");
    // A line far later crosses many boundaries at once: each check at its own
    // time. b's beats leave one a bucket; at bucket 28 its window (19..28)
    // holds the beats of 19000 and 20000: 2 < 3.
    CHECK(r.line("noise", 95'000) == "alert t=28000 r key=b count=2 counts=[2,0] suppressed=0\n");
  }
}

TEST_CASE("watch: for: pending, then firing, and a check where it does not hold starts it over") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    // A job is started (hb) and finished (x); the condition holds from its
    // start until it finishes. Window 10s, for 5s.
    EngineRun r(rules(mode, "when = \"hb >= 1 and x < 1\"\nfor = \"5s\"\nresolve = true\n"));
    std::vector<sw::engine::ExplainEntry> ex;
    CHECK(r.line("HB j1", 1'000, &ex) == "");
    REQUIRE(ex.size() == 1);
    CHECK(ex[0].decision.verdict == sw::engine::Verdict::Pending);
    CHECK(ex[0].decision.since_ms == 1'000);
    CHECK(sw::cli::explain_decision(r.rules(), ex[0]) ==
          "condition holds; pending since 1970-01-01T00:00:01.000Z (for 5s): fires at the first check from "
          "1970-01-01T00:00:06.000Z on if it holds");
    CHECK(r.line("HB j2", 1'500) == "");
    CHECK(r.line("X j2", 4'000) == "");  // j2 finished: no longer pending
    CHECK(r.line("HB j3", 4'500) == "");
    // j1 pending since 1000: due at the check of 6000. j3 (4500) at 10000.
    CHECK(r.tick(6'500) == "alert t=6000 r key=j1 count=1 counts=[1,0] suppressed=0\n");
    // A line of j3 5s after its start fires it itself, with the line.
    CHECK(r.line("HB j3", 9'700) == "alert t=9700 r key=j3 count=2 counts=[2,0] suppressed=0 |HB j3|\n");
    // j1's start leaves its window at bucket 11: the condition stops holding,
    // the episode resolves at that check.
    CHECK(r.tick(11'000) == "resolved t=11000 r key=j1 count=0 counts=[0,0] suppressed=0\n");
    CHECK(r.finish() == "");
  }
}

TEST_CASE("watch: for restarts when the condition stops holding at any evaluation") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    // Fewer than 2 beats in the window, for 4s: a key beating once every 3
    // seconds holds at times and not at others.
    EngineRun r(rules(mode, "when = \"hb < 2\"\nfor = \"4s\"\n"));
    CHECK(r.line("HB a", 0) == "");
    CHECK(r.line("HB a", 100) == "");  // 2 beats: does not hold
    // Warm at bucket 10. At 10000 bucket 0 leaves: 0 beats, pending from 10000.
    CHECK(r.line("HB a", 12'000) == "");  // 1 beat: still holds, pending since 10000
    CHECK(r.line("HB a", 13'000) == "");  // 2 beats: does not hold; pending over
    // 12000 leaves at bucket 22: 1 beat, holds again: pending from 22000; 13000
    // leaves at 23000: 0, holds; fires at the check 4s after 22000.
    CHECK(r.tick(25'999) == "");
    CHECK(r.tick(26'000) == "alert t=26000 r key=a count=0 counts=[0,0] suppressed=0\n");
  }
}

TEST_CASE("watch: an episode that begins inside the cooldown is announced when the cooldown ends") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    EngineRun r(rules(mode, "when = \"hb < 1\"\ncooldown = \"30s\"\nresolve = true\n"));
    CHECK(r.line("HB a", 0) == "");
    CHECK(r.tick(10'000) == "alert t=10000 r key=a count=0 counts=[0,0] suppressed=0\n");
    CHECK(r.line("HB a", 12'000) == "resolved t=12000 r key=a count=1 counts=[1,0] suppressed=0\n");
    // Silent again from bucket 22, inside the cooldown (until 40000): firing,
    // not announced; then announced at the first check the cooldown allows.
    CHECK(r.tick(22'000) == "");
    CHECK(r.tick(39'999) == "");
    CHECK(r.tick(40'000) == "alert t=40000 r key=a count=0 counts=[0,0] suppressed=0\n");
    CHECK(r.tick(90'000) == "");
  }
}

TEST_CASE("watch: lines that meet the condition alert again after the cooldown, with what was held back") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    // Fewer than 3 beats, cooldown 5s: a key that beats once a second keeps
    // 1 or 2 beats in a 2s window.
    EngineRun r(
        "[settings]\nmode = \"" + mode +
        "\"\n[[rule]]\nname = \"r\"\nkind = \"alert\"\nwindow = \"2s\"\nbuckets = 2\nwhen = \"hb < 3\"\n"
        "cooldown = \"5s\"\nkey = \"{host}\"\n  [[rule.event]]\n  name = \"hb\"\n  match = 'HB (?P<host>\\w+)'\n");
    std::string got;
    for (int64_t t = 0; t <= 8'000; t += 1'000) got += r.line("HB a", t);
    // Warm from bucket 2: the check of 2000 (the beat of 0 leaves) finds 1
    // beat: the alert, dated at the boundary, without a line. The lines of
    // 2000 to 6000 (2 beats each) meet the condition inside the cooldown:
    // held back, 5. At 7000 the cooldown has passed: the line alerts, with
    // the 5. The checks in between find the episode announced: nothing.
    CHECK(got ==
          "alert t=2000 r key=a count=1 counts=[1] suppressed=0\n"
          "alert t=7000 r key=a count=2 counts=[2] suppressed=5 |HB a|\n");
  }
}

TEST_CASE("watch: forget drops a silent key, but keeps one whose resolved is due") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    for (bool resolve : {false, true}) {
      CAPTURE(resolve);
      EngineRun r(
          rules(mode, std::string("when = \"hb < 1\"\nforget = \"25s\"\n") + (resolve ? "resolve = true\n" : "")));
      CHECK(r.line("HB a", 0) == "");
      CHECK(r.line("HB b", 0) == "");
      CHECK(r.tick(10'000) ==
            "alert t=10000 r key=a count=0 counts=[0,0] suppressed=0\n"
            "alert t=10000 r key=b count=0 counts=[0,0] suppressed=0\n");
      CHECK(r.engine().key_count(0) == 2);
      // 25s without an event: forgotten at the check of 25000, unless its
      // alert waits for a resolved.
      CHECK(r.tick(25'000) == "");
      CHECK(r.engine().key_count(0) == (resolve ? 2u : 0u));
      CHECK(r.engine().rule_stats(0).forgotten.get() == (resolve ? 0u : 2u));
      // a comes back. Forgotten, it starts afresh (no resolved, a new
      // warm-up); kept, it resolves.
      CHECK(r.line("HB a", 30'000) == (resolve ? "resolved t=30000 r key=a count=1 counts=[1,0] suppressed=0\n" : ""));
      // Its silence is reported again either way, a window after the beat.
      CHECK(r.tick(40'000) == "alert t=40000 r key=a count=0 counts=[0,0] suppressed=0\n");
    }
  }
}

TEST_CASE("watch: end of input is not silence") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    EngineRun r(rules(mode, "when = \"hb < 1\"\nresolve = true\n"));
    CHECK(r.line("HB a", 0) == "");
    CHECK(r.line("HB a", 9'000) == "");
    // The input ends at 9000: nothing is decided after it.
    CHECK(r.finish() == "");
  }
}

TEST_CASE("watch: a late event changes nothing and makes no key known") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    EngineRun r(rules(mode, "when = \"hb < 1\"\n"));
    CHECK(r.line("HB a", 50'000) == "");
    std::vector<sw::engine::ExplainEntry> ex;
    CHECK(r.line("HB z", 20'000, &ex) == "");  // bucket 20, the window at 50000 is 41..50
    CHECK(ex[0].decision.verdict == sw::engine::Verdict::Late);
    // z has a slot (the map made it) but is not watched: only a is reported.
    CHECK(r.tick(80'000) == "alert t=60000 r key=a count=0 counts=[0,0] suppressed=0\n");
    CHECK(r.engine().rule_stats(0).late.get() == 1);
  }
}

TEST_CASE("watch: 10^4 keys, 100 of them stop: exactly those are reported, each once, at its own boundary") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    EngineRun r(rules(mode, "when = \"hb < 1\"\nresolve = true\n"));
    constexpr int kKeys = 10'000;
    std::string got;
    // Every key beats once a second, in its own millisecond; from second 20
    // on, keys k % 100 == 7 stop (their last beat in second 19, bucket 19).
    for (int64_t s = 0; s < 40; ++s) {
      for (int k = 0; k < kKeys; ++k) {
        if (s >= 20 && k % 100 == 7) continue;
        got += r.line("HB k" + std::to_string(k), s * 1'000 + k % 1'000);
      }
    }
    // Bucket 19 leaves at bucket 29: 100 alerts at 29000, in key order.
    std::vector<std::string> want;
    for (int k = 7; k < kKeys; k += 100) want.push_back("k" + std::to_string(k));
    std::sort(want.begin(), want.end());
    std::string expected;
    for (const std::string& k : want) expected += "alert t=29000 r key=" + k + " count=0 counts=[0,0] suppressed=0\n";
    CHECK(got == expected);
    CHECK(r.engine().key_count(0) == kKeys);
  }
}

TEST_CASE("watch: --state in the middle of a for, and of a warm-up, continues as one run") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    const std::string text =
        rules(mode, "when = \"hb >= 1 and x < 1\"\nfor = \"5s\"\nresolve = true\n") +
        "[[rule]]\nname = \"silent\"\nkind = \"alert\"\nwindow = \"10s\"\nwhen = \"hb < 1\"\nresolve = true\n"
        "  [[rule.event]]\n  name = \"hb\"\n  match = 'HB (?P<host>\\w+)'\n";
    struct Step {
      bool tick;
      std::string line;
      int64_t t;
    };
    const std::vector<Step> steps{{false, "HB j1", 1'000}, {false, "noise", 2'000}, {false, "HB j2", 3'500},
                                  {false, "noise", 4'200}, {true, "", 6'000},       {false, "X j2", 7'000},
                                  {false, "noise", 9'000}, {true, "", 12'000},      {false, "HB j3", 14'000},
                                  {true, "", 30'000}};
    for (std::size_t cut = 1; cut < steps.size(); ++cut) {
      CAPTURE(cut);
      EngineRun whole(text), first(text);
      std::string want, got;
      for (const Step& s : steps) want += s.tick ? whole.tick(s.t) : whole.line(s.line, s.t);
      for (std::size_t i = 0; i < cut; ++i)
        got += steps[i].tick ? first.tick(steps[i].t) : first.line(steps[i].line, steps[i].t);
      // Saved as a state file is, and read back.
      auto saved = sw::state::from_json(sw::state::to_json(first.engine().save_state(), 0));
      REQUIRE(saved.ok());
      EngineRun second(text);
      CHECK(second.engine().load_state(*saved).empty());
      for (std::size_t i = cut; i < steps.size(); ++i)
        got += steps[i].tick ? second.tick(steps[i].t) : second.line(steps[i].line, steps[i].t);
      CHECK(got == want);
      // Not vacuous: the run alerts for j1 (pending from 1000) and j3, and
      // for the silence (warm at 11000; its window empty at 13000).
      CHECK(want.find("alert t=6000 r key=j1") != std::string::npos);
      CHECK(want.find("alert t=19000 r key=j3") != std::string::npos);
      CHECK(want.find("alert t=13000 silent key=") != std::string::npos);
    }
  }
}

TEST_CASE("watch: a reload (adopt) keeps pending times, keys and the wheel") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    const std::string text = rules(mode, "when = \"hb >= 1 and x < 1\"\nfor = \"5s\"\n");
    EngineRun before(text);
    CHECK(before.line("HB j1", 1'000) == "");
    // The reloaded rules say for = 7s: j1 is pending since 1000 still.
    EngineRun after(rules(mode, "when = \"hb >= 1 and x < 1\"\nfor = \"7s\"\n"));
    std::vector<sw::engine::Record> flushed;
    CHECK(after.engine().adopt(before.engine(), flushed).empty());
    CHECK(flushed.empty());
    CHECK(after.tick(7'500) == "");
    CHECK(after.tick(8'000) == "alert t=8000 r key=j1 count=1 counts=[1,0] suppressed=0\n");
  }
}

TEST_CASE("sequence: when arms a key, then must follow within `within`, in that order") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    EngineRun r(rules(mode, "when = \"hb >= 3\"\nthen = \"x >= 1\"\nwithin = \"5s\"\ncooldown = \"20s\"\n"));
    std::vector<sw::engine::ExplainEntry> ex;
    // a: x first, then 3 hb: the wrong order, nothing.
    CHECK(r.line("X a", 100) == "");
    CHECK(r.line("HB a", 200) == "");
    CHECK(r.line("HB a", 300) == "");
    CHECK(r.line("HB a", 400, &ex) == "");  // the third hb arms a
    CHECK(ex[0].decision.verdict == sw::engine::Verdict::Armed);
    // b: 3 hb then x within 5s: the alert, with the x line.
    CHECK(r.line("HB b", 1'000) == "");
    CHECK(r.line("HB b", 1'100) == "");
    CHECK(r.line("HB b", 1'200) == "");  // armed at 1200
    CHECK(r.line("HB b", 1'300, &ex) == "");
    CHECK(ex[0].decision.verdict == sw::engine::Verdict::Waiting);
    CHECK(sw::cli::explain_decision(r.rules(), ex[0]) ==
          "counted; armed since 1970-01-01T00:00:01.200Z: then \"x >= 1\" does not hold yet");
    CHECK(r.line("X b", 3'000) == "alert t=3000 r key=b count=5 counts=[4,1] suppressed=0 |X b|\n");
    // a's x comes 6s after it was armed (400): lapsed. Its window still holds
    // 3 hb: this line arms it again (x does not count: it came with the arming).
    CHECK(r.line("X a", 6'500, &ex) == "");
    CHECK(ex[0].decision.verdict == sw::engine::Verdict::Armed);
    CHECK(r.line("X a", 7'000) == "alert t=7000 r key=a count=6 counts=[3,3] suppressed=0 |X a|\n");
    // b again inside its cooldown (until 23000): completed, held back.
    for (int64_t t : {8'000, 8'100, 8'200}) CHECK(r.line("HB b", t) == "");
    CHECK(r.line("X b", 9'000) == "");
    CHECK(r.engine().rule_stats(0).suppressed.get() == 1);
    // A sequence does nothing at boundary checks.
    CHECK(r.tick(60'000) == "");
    CHECK(r.finish() == "");
  }
}

TEST_CASE("watch: a state saved before watched rules existed carries the alert state over") {
  for (const std::string& mode : kModes) {
    CAPTURE(mode);
    // `hb < 1` was a plain alert rule, of the same fingerprint, evaluated
    // on lines only: a's beat of 2000 (bucket 2) left the window at bucket
    // 12, and its x of 13000 found it silent (the window it saved holds
    // only that x). The window has no "watch".
    EngineRun r(rules(mode, "when = \"hb < 1\"\nresolve = true\n"));
    sw::engine::EngineState st;
    st.now_ms = 13'500;
    sw::engine::RuleWindows rw;
    rw.rule = "r";
    rw.fingerprint = r.rules().rules[0].fingerprint;
    sw::window::WindowState w;
    w.now_ms = 13'000;
    w.buckets.push_back({13, {0, 1}});
    w.firing = w.announced = w.alerted = true;
    w.last_alert_ms = 13'000;
    rw.windows.push_back({"a", w});
    st.rules.push_back(rw);
    CHECK(r.engine().load_state(st).empty());
    // Watched from now on, and still firing: its checks announce nothing
    // new, and a beat resolves the episode the old run announced.
    CHECK(r.tick(20'000) == "");
    CHECK(r.line("HB a", 21'000) == "resolved t=21000 r key=a count=2 counts=[1,1] suppressed=0\n");
  }
}

TEST_CASE("watch: --state refuses a watch no run writes, and drops one its rule cannot have") {
  const std::string text = rules("efficient", "when = \"hb >= 1 and x < 1\"\nfor = \"5s\"\n") +
                           "[[rule]]\nname = \"plain\"\nkind = \"alert\"\nwindow = \"10s\"\nwhen = \"hb >= 1\"\n"
                           "key = \"{host}\"\n  [[rule.event]]\n  name = \"hb\"\n  match = 'HB (?P<host>\\w+)'\n";
  EngineRun r(text);
  // j1 beats: pending in r (no x), an alert of the plain rule.
  CHECK(r.line("HB j1", 1'000) == "alert t=1000 plain key=j1 count=1 counts=[1] suppressed=0 |HB j1|\n");
  const sw::engine::EngineState saved = r.engine().save_state();
  REQUIRE(saved.rules.size() == 2);
  REQUIRE(saved.rules[0].windows.size() == 1);
  REQUIRE(saved.rules[0].windows[0].watch.has_value());
  CHECK(saved.rules[0].windows[0].watch->pending_since_ms == 1'000);
  CHECK(saved.rules[0].windows[0].watch->since_ms == 1'000);
  CHECK_FALSE(saved.rules[1].windows[0].watch.has_value());  // a plain rule keeps none
  auto round_trip = sw::state::from_json(sw::state::to_json(saved, 0));
  REQUIRE(round_trip.ok());
  CHECK(sw::state::drop_inconsistent(*round_trip, r.rules()).empty());

  // A time no run writes: the file is refused, with the member's path.
  sw::engine::EngineState bad = saved;
  bad.rules[0].windows[0].watch->pending_since_ms = -5;
  auto refused = sw::state::from_json(sw::state::to_json(bad, 0));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().what.rfind("rules[0].windows[0].watch.pending_since_ms: time -5 is out of range", 0) == 0);
  // An alert state the machine never reaches.
  bad = saved;
  bad.rules[0].windows[0].watch->announced = true;
  refused = sw::state::from_json(sw::state::to_json(bad, 0));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().what == "rules[0].windows[0].watch.announced: true while \"firing\" is false");

  // A watch beside a plain rule's window, or a sequence's counts in a watched
  // rule's: that rule starts fresh, the other keeps its state.
  sw::engine::EngineState odd = saved;
  odd.rules[1].windows[0].watch = sw::engine::WatchedKey{};
  auto read = sw::state::from_json(sw::state::to_json(odd, 0));
  REQUIRE(read.ok());
  auto dropped = sw::state::drop_inconsistent(*read, r.rules());
  REQUIRE(dropped.size() == 1);
  CHECK(dropped[0] == "rules[1].windows[0].watch: a \"watch\" for a rule that keeps none; rule \"plain\" starts fresh");
  odd = saved;
  odd.rules[0].windows[0].watch->then_counts = {1, 0};
  read = sw::state::from_json(sw::state::to_json(odd, 0));
  REQUIRE(read.ok());
  dropped = sw::state::drop_inconsistent(*read, r.rules());
  REQUIRE(dropped.size() == 1);
  CHECK(dropped[0] == "rules[0].windows[0].watch: a sequence's state in a watched rule's; rule \"r\" starts fresh");
}
