// Engine (DESIGN.md §1-§3, §5): the exact records a sequence of lines produces.
//
// Every scenario feeds lines with explicit times and compares the records to
// a transcript, one record per line:
//   line <t> rule=<first throttle rule that passed it, or -> |<line>|
//   summary <t> <rule> key=<key> suppressed=N first=F last=L
//   alert|resolved <t> <rule> key=<key> count=N counts=[..] suppressed=N [|<line>|] [msg=<..>]
// where <t> is the record's "now" ("-" when written before any timestamp).
// Expected transcripts are derived from the spec in the comments next to
// them. Unless a rule says otherwise: window 10s, 10 buckets, so w = 1000 ms
// and the window at now covers buckets floor(now/1000)-9 .. floor(now/1000).
// Every scenario runs in both modes: for one input they must agree (DESIGN.md §2).
#include "engine/engine.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <latch>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "config/rules.h"
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

const std::vector<std::string> kModes{"accurate", "efficient"};

std::unique_ptr<RuleSet> load(std::string_view toml, const std::string& mode) {
  const std::string text = "[settings]\nmode = \"" + mode + "\"\n\n" + std::string(toml);
  auto r = swthrottle::config::parse_rules(text, "rules.toml");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().str()));
  return std::make_unique<RuleSet>(std::move(*r));
}

Matcher make_matcher(const RuleSet& rules) {
  auto m = Matcher::make(rules);
  REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error().str()));
  return std::move(*m);
}

std::string describe(const Record& r) {
  std::string s;
  switch (r.type) {
    case RecordType::Alert: s = "alert"; break;
    case RecordType::Resolved: s = "resolved"; break;
    case RecordType::Summary: s = "summary"; break;
    case RecordType::Line: s = "line"; break;
  }
  s += " t=" + (r.has_time ? std::to_string(r.time_ms) : std::string("-"));
  if (r.type == RecordType::Line) {
    s += " rule=" + (r.rule != nullptr ? r.rule->name : std::string("-"));
  } else {
    s += " " + (r.rule != nullptr ? r.rule->name : std::string("?")) + " key=" + r.key;
  }
  if (r.type == RecordType::Summary) {
    s += " suppressed=" + std::to_string(r.suppressed);
    if (r.counts.size() > 1) {  // a rule of several events: which events were suppressed (one event: = suppressed)
      s += " counts=[";
      for (std::size_t i = 0; i < r.counts.size(); ++i) s += (i ? "," : "") + std::to_string(r.counts[i]);
      s += "]";
    }
    s += " first=" + std::to_string(r.first_ms) + " last=" + std::to_string(r.last_ms);
  }
  if (r.type == RecordType::Alert || r.type == RecordType::Resolved) {
    s += " count=" + std::to_string(r.count) + " counts=[";
    for (std::size_t i = 0; i < r.counts.size(); ++i) s += (i ? "," : "") + std::to_string(r.counts[i]);
    s += "] suppressed=" + std::to_string(r.suppressed);
  }
  if (r.has_line) s += " |" + std::string(r.line) + "|";
  if (r.has_message) s += " msg=<" + r.message + ">";
  return s + "\n";
}

std::string describe(const std::vector<Record>& records) {
  std::string s;
  for (const Record& r : records) s += describe(r);
  return s;
}

// One engine over one rules text, fed from one "input" in order.
class Harness {
 public:
  Harness(std::string_view toml, const std::string& mode, EngineOptions options = {})
      : rules_(load(toml, mode)), matcher_(make_matcher(*rules_)), engine_(*rules_, options) {}
  // A later run with --state: the same rules, the state of `before` loaded.
  Harness(const Harness& before, std::string_view toml, const std::string& mode) : Harness(toml, mode) {
    CHECK(engine_.load_state(before.engine_.save_state()).empty());
  }

  std::string offer(std::string_view text, int64_t t_ms) { return offer_event(text, true, t_ms); }
  std::string offer_untimed(std::string_view text) { return offer_event(text, false, 0); }
  std::string tick(int64_t t_ms) {
    engine_.tick(t_ms, out_);
    return describe(out_);
  }
  std::string finish() {
    engine_.finish(out_);
    return describe(out_);
  }

  Engine& engine() { return engine_; }
  const RuleSet& rules() const { return *rules_; }

 private:
  std::string offer_event(std::string_view text, bool timed, int64_t t_ms) {
    const std::string line(text);  // records view the line: keep it alive until described
    matcher_.match(line, m_);
    engine_.offer(LineEvent{line, timed, t_ms}, m_, out_);
    return describe(out_);
  }

  std::unique_ptr<RuleSet> rules_;
  Matcher matcher_;
  Engine engine_;
  MatchResult m_;
  std::vector<Record> out_;
};

// ---------------------------------------------------------------- throttle

const char* const kThrottle3 = R"toml(
[[rule]]
name = "quiet"
kind = "throttle"
threshold = "3 per 10s"
  [[rule.event]]
  name = "err"
  match = 'ERR'
)toml";

TEST_CASE("engine throttle: at most Y per X pass, the summary comes just before the next passing line") {
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(kThrottle3, mode);
    // Window empty: the first Y = 3 pass, each written at its own time.
    CHECK(h.offer("ERR a", 0) == "line t=0 rule=quiet |ERR a|\n");
    CHECK(h.offer("ERR b", 100) == "line t=100 rule=quiet |ERR b|\n");
    CHECK(h.offer("ERR c", 200) == "line t=200 rule=quiet |ERR c|\n");
    // The window holds 3 = Y passed lines: suppressed, not counted, tallied.
    CHECK(h.offer("ERR d", 300) == "");
    // 9999 is bucket 9; the window 0..9 still holds all three.
    CHECK(h.offer("ERR e", 9999) == "");
    // 10000 is bucket 10: bucket 0 leaves, the window holds 0 < 3. The
    // tally (d at 300, e at 9999) is reported before the line that passes.
    CHECK(h.offer("ERR f", 10000) ==
          "summary t=10000 quiet key= suppressed=2 first=300 last=9999\n"
          "line t=10000 rule=quiet |ERR f|\n");
    // The tally was reset: nothing is pending at the end.
    CHECK(h.finish() == "");
    CHECK(h.engine().rule_stats(0).passed.get() == 4);
    CHECK(h.engine().rule_stats(0).suppressed.get() == 2);
    CHECK(h.engine().rule_stats(0).summaries.get() == 1);
    CHECK(h.engine().rule_stats(0).lines.get() == 6);
  }
}

TEST_CASE("engine throttle: a line no rule matches moves now, the boundary check reports when room is back") {
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(kThrottle3, mode);
    CHECK(h.offer("ERR a", 1000) == "line t=1000 rule=quiet |ERR a|\n");
    CHECK(h.offer("ERR b", 5000) == "line t=5000 rule=quiet |ERR b|\n");
    CHECK(h.offer("ERR c", 9000) == "line t=9000 rule=quiet |ERR c|\n");
    CHECK(h.offer("ERR d", 9100) == "");
    CHECK(h.offer("ERR e", 9500) == "");
    // Not matched, so not written; it moves now to bucket 10 (window 1..10),
    // which still holds a, b and c: no room, no summary.
    CHECK(h.offer("hello", 10000) == "");
    // Same bucket: no boundary crossed, no check.
    CHECK(h.offer("hello", 10999) == "");
    // Bucket 11: a (bucket 1) leaves, 2 < 3: the summary, at the new now.
    CHECK(h.offer("hello", 11000) == "summary t=11000 quiet key= suppressed=2 first=9100 last=9500\n");
    // Room for one more; the tally was already reported.
    CHECK(h.offer("ERR f", 11001) == "line t=11001 rule=quiet |ERR f|\n");
    CHECK(h.offer("ERR g", 11002) == "");
    CHECK(h.finish() == "summary t=11002 quiet key= suppressed=1 first=11002 last=11002\n");
  }
}

TEST_CASE("engine throttle: tick() runs the same boundary checks without a line") {
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(kThrottle3, mode);
    CHECK(h.offer("ERR a", 1000) == "line t=1000 rule=quiet |ERR a|\n");
    CHECK(h.offer("ERR b", 5000) == "line t=5000 rule=quiet |ERR b|\n");
    CHECK(h.offer("ERR c", 9000) == "line t=9000 rule=quiet |ERR c|\n");
    CHECK(h.offer("ERR d", 9100) == "");
    CHECK(h.offer("ERR e", 9500) == "");
    CHECK(h.tick(9999) == "");   // same bucket as now (9): no boundary
    CHECK(h.tick(10000) == "");  // window 1..10 still holds 3
    CHECK(h.tick(10500) == "");  // same bucket
    CHECK(h.tick(11000) == "summary t=11000 quiet key= suppressed=2 first=9100 last=9500\n");
    CHECK(h.engine().now_ms() == 11000);
    // Time never runs backwards: an older tick neither moves now nor checks.
    CHECK(h.tick(3000) == "");
    CHECK(h.engine().now_ms() == 11000);
    CHECK(h.finish() == "");
  }
}

TEST_CASE("engine throttle: end of input writes the pending summary, once") {
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(kThrottle3, mode);
    CHECK(h.offer("ERR a", 0) == "line t=0 rule=quiet |ERR a|\n");
    CHECK(h.offer("ERR b", 0) == "line t=0 rule=quiet |ERR b|\n");
    CHECK(h.offer("ERR c", 0) == "line t=0 rule=quiet |ERR c|\n");
    CHECK(h.offer("ERR d", 500) == "");
    CHECK(h.offer("ERR e", 700) == "");
    // The window is still full, so no boundary check would report it; the
    // end of input does, at now (700).
    CHECK(h.finish() == "summary t=700 quiet key= suppressed=2 first=500 last=700\n");
    CHECK(h.finish() == "");
  }
}

TEST_CASE("engine throttle: a line too late for the window is decided and counted at now") {
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(kThrottle3, mode);
    CHECK(h.offer("ERR a", 20000) == "line t=20000 rule=quiet |ERR a|\n");
    // Bucket 5 is older than the window at now (11..20): late. Decided at
    // now: the window holds 1 < 3, so it passes, and it counts at now.
    CHECK(h.offer("ERR late1", 5000) == "line t=20000 rule=quiet |ERR late1|\n");
    CHECK(h.offer("ERR b", 20000) == "line t=20000 rule=quiet |ERR b|\n");
    // Full: proves late1 was counted (a + late1 + b = 3).
    CHECK(h.offer("ERR late2", 4000) == "");  // late and suppressed: decided at now = 20000
    CHECK(h.offer("ERR c", 20500) == "");
    // Bucket 20 leaves at 30000 (window 21..30): room again. `first` is the
    // decision time of late2, which is now (20000), not its own 4000.
    CHECK(h.tick(30000) == "summary t=30000 quiet key= suppressed=2 first=20000 last=20500\n");
    CHECK(h.engine().rule_stats(0).late.get() == 2);
  }
}

TEST_CASE("engine throttle: a slightly older line counts in its own bucket") {
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(kThrottle3, mode);
    CHECK(h.offer("ERR a", 20000) == "line t=20000 rule=quiet |ERR a|\n");
    // Bucket 15 is inside the window at now (11..20): not late, counted in
    // bucket 15. Written at now, which a line never moves back.
    CHECK(h.offer("ERR old", 15000) == "line t=20000 rule=quiet |ERR old|\n");
    CHECK(h.offer("ERR b", 20000) == "line t=20000 rule=quiet |ERR b|\n");
    CHECK(h.offer("ERR c", 20100) == "");
    // At 25000 the window is 16..25: bucket 15 left, 2 < 3 -> summary. Had
    // `old` been counted in bucket 20 the window would still be full.
    CHECK(h.tick(25000) == "summary t=25000 quiet key= suppressed=1 first=20100 last=20100\n");
    CHECK(h.engine().rule_stats(0).late.get() == 0);
  }
}

TEST_CASE("engine throttle: a line before any timestamp passes without being counted") {
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(kThrottle3, mode);
    // Not windowed: throttle rules pass it, however many; no time yet.
    for (int i = 0; i < 5; ++i) CHECK(h.offer_untimed("ERR u") == "line t=- rule=quiet |ERR u|\n");
    // The window is empty: exactly Y = 3 timed lines pass.
    CHECK(h.offer("ERR a", 1000) == "line t=1000 rule=quiet |ERR a|\n");
    CHECK(h.offer("ERR b", 1000) == "line t=1000 rule=quiet |ERR b|\n");
    CHECK(h.offer("ERR c", 1000) == "line t=1000 rule=quiet |ERR c|\n");
    CHECK(h.offer("ERR d", 1000) == "");
    // An input that has seen no timestamp yet still is not windowed, even
    // when the window is full; the record's time is the engine's now.
    CHECK(h.offer_untimed("ERR u") == "line t=1000 rule=quiet |ERR u|\n");
    CHECK(h.engine().rule_stats(0).untimed.get() == 6);
    CHECK(h.finish() == "summary t=1000 quiet key= suppressed=1 first=1000 last=1000\n");
  }
}

// ---------------------------------------------------------------- alert

TEST_CASE("engine alert: crossing, cooldown, resolve at a boundary, flapping, the tally carried by the next alert") {
  const char* const rules = R"toml(
[[rule]]
name = "burst"
kind = "alert"
threshold = "3 per 10s"
cooldown = "30s"
resolve = true
  [[rule.event]]
  name = "fail"
  match = 'FAIL'
)toml";
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(rules, mode);
    // Lines only alert rules match are not written.
    CHECK(h.offer("FAIL 1", 0) == "");
    CHECK(h.offer("FAIL 2", 100) == "");
    // 3 >= 3 on an event, no alert yet: alert, carrying its line.
    CHECK(h.offer("FAIL 3", 200) == "alert t=200 burst key= count=3 counts=[3] suppressed=0 |FAIL 3|\n");
    // Still true, 100 ms after the alert (< 30s): tallied.
    CHECK(h.offer("FAIL 4", 300) == "");
    CHECK(h.tick(9000) == "");  // window 0..9 holds 4: still firing
    // Window 1..10 is empty: the condition is false at the boundary check of
    // a firing key, and this episode was announced -> resolved. Its
    // `suppressed`: the lines held back since its alert (window.h; DESIGN.md §5
    // names the field for resolveds without defining it).
    CHECK(h.tick(10000) == "resolved t=10000 burst key= count=0 counts=[0] suppressed=1\n");
    // Flapping: true again at 11200, but only 11000 ms after the alert at
    // 200 (cooldown 30s holds across the resolve): no alert, tally 2, and
    // this episode is not announced.
    CHECK(h.offer("FAIL 5", 11000) == "");
    CHECK(h.offer("FAIL 6", 11100) == "");
    CHECK(h.offer("FAIL 7", 11200) == "");
    // Window 12..21 empty: the key stops firing; nothing was announced for
    // that episode, so nothing is resolved.
    CHECK(h.tick(21000) == "");
    CHECK(h.offer("FAIL 8", 30000) == "");
    CHECK(h.offer("FAIL 9", 30100) == "");
    // 30200 - 200 = 30000 = the cooldown: "least time" is met exactly. The
    // alert carries the 2 lines that met the condition without one (4, 7).
    CHECK(h.offer("FAIL 10", 30200) == "alert t=30200 burst key= count=3 counts=[3] suppressed=2 |FAIL 10|\n");
    CHECK(h.engine().rule_stats(0).events.get() == 10);
    CHECK(h.engine().rule_stats(0).alerts.get() == 2);
    CHECK(h.engine().rule_stats(0).resolveds.get() == 1);
    CHECK(h.engine().rule_stats(0).suppressed.get() == 2);
    // Alert tallies are not summaries: the end of input writes nothing.
    CHECK(h.finish() == "");
  }
}

TEST_CASE("engine alert: resolve on the key's own event") {
  // A ratio can turn false on an event (a threshold cannot: events only add).
  const char* const rules = R"toml(
[[rule]]
name = "ratio"
kind = "alert"
window = "10s"
when = "error >= 2 and error / request > 0.5"
resolve = true
  [[rule.event]]
  name = "request"
  match = 'GET'
  [[rule.event]]
  name = "error"
  match = 'GET \S+ 500'
)toml";
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(rules, mode);
    // A 500 line is both a request and an error (counts in event order).
    CHECK(h.offer("GET /a 500", 0) == "");  // 1 request, 1 error: error >= 2 false
    CHECK(h.offer("GET /b 500", 100) == "alert t=100 ratio key= count=4 counts=[2,2] suppressed=0 |GET /b 500|\n");
    CHECK(h.offer("GET /c 200", 200) == "");  // 2/3 > 0.5: holds, inside the cooldown (= window)
    // 2/4 = 0.5 is not > 0.5: false on the key's event -> resolved, in the
    // alerts group, without a line.
    CHECK(h.offer("GET /d 200", 300) == "resolved t=300 ratio key= count=6 counts=[4,2] suppressed=1\n");
    CHECK(h.tick(10000) == "");  // no longer firing: nothing to resolve
  }
}

// ------------------------------------------------------------ resolve_when

// Hysteresis (SEC's SingleWith2Thresholds): "hyst" fires at 10 and clears
// only below 3; "plain" is the same threshold without resolve_when, for
// contrast. One event per second, so the count falls by one per bucket.
const char* const kHysteresis = R"toml(
[[rule]]
name = "hyst"
kind = "alert"
window = "10s"
when = "err >= 10"
resolve_when = "err < 3"
key = "{host}"
  [[rule.event]]
  name = "err"
  match = 'ERR host=(?P<host>\w+)'

[[rule]]
name = "plain"
kind = "alert"
threshold = "10 per 10s"
resolve = true
  [[rule.event]]
  name = "err"
  match = 'ERR host=a'
)toml";

TEST_CASE("engine resolve_when: fire at when, stay firing between the thresholds, resolve only at resolve_when") {
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(kHysteresis, mode);
    for (int64_t t = 0; t < 9000; t += 1000) CHECK(h.offer("ERR host=a", t) == "");
    // The 10th event in the window: both alert (rules in file order).
    CHECK(h.offer("ERR host=a", 9000) ==
          "alert t=9000 hyst key=a count=10 counts=[10] suppressed=0 |ERR host=a|\n"
          "alert t=9000 plain key= count=10 counts=[10] suppressed=0 |ERR host=a|\n");
    CHECK(h.offer("ERR host=b", 9500) == "");  // key b: a window of its own, 1 event
    // Bucket 0 leaves: 9 < 10. plain resolves; hyst holds the episode: 9 is not < 3.
    CHECK(h.tick(10000) == "resolved t=10000 plain key= count=9 counts=[9] suppressed=0\n");
    // Down to 5 (buckets 5..9): still firing, no record.
    CHECK(h.tick(14000) == "");
    // An event of the key between the thresholds: when false, resolve_when
    // false, still nothing (6000..9000 and 15000: 5).
    CHECK(h.offer("ERR host=a", 15000) == "");
    CHECK(h.tick(17000) == "");  // 8000, 9000, 15000: 3 is not < 3
    // 9000 and 15000: 2 < 3, at a boundary check: resolved, with its counts.
    CHECK(h.tick(18000) == "resolved t=18000 hyst key=a count=2 counts=[2] suppressed=0\n");
    CHECK(h.tick(30000) == "");  // resolved once; key b never fired
    // Re-rise: 10 events in bucket 25 (cooldown since 9000 has passed).
    for (int64_t t = 30000; t < 30900; t += 100) CHECK(h.offer("ERR host=a", t) == "");
    CHECK(h.offer("ERR host=a", 30900) ==
          "alert t=30900 hyst key=a count=10 counts=[10] suppressed=0 |ERR host=a|\n"
          "alert t=30900 plain key= count=10 counts=[10] suppressed=0 |ERR host=a|\n");
    // The whole bucket leaves at once: 0 < 3, both resolve.
    CHECK(h.tick(40000) ==
          "resolved t=40000 hyst key=a count=0 counts=[0] suppressed=0\n"
          "resolved t=40000 plain key= count=0 counts=[0] suppressed=0\n");
    CHECK(h.engine().rule_stats(0).alerts.get() == 2);
    CHECK(h.engine().rule_stats(0).resolveds.get() == 2);
  }
}

TEST_CASE("engine resolve_when: the episode's records are otherwise those without it") {
  // Cooldown 2s: while firing between the thresholds, the condition holding
  // again on an event re-alerts after the cooldown, carrying the lines held
  // back meanwhile; the resolved carries those after the last alert.
  const char* const rules = R"toml(
[[rule]]
name = "hyst"
kind = "alert"
threshold = "3 per 10s"
cooldown = "2s"
resolve_when = "err == 0"
message = "{count} errors, {suppressed} held back"
  [[rule.event]]
  name = "err"
  match = 'ERR'
)toml";
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(rules, mode);
    CHECK(h.offer("ERR", 0) == "");
    CHECK(h.offer("ERR", 0) == "");
    CHECK(h.offer("ERR", 0) ==
          "alert t=0 hyst key= count=3 counts=[3] suppressed=0 |ERR| msg=<3 errors, 0 held back>\n");
    CHECK(h.offer("ERR", 1000) == "");  // holds, inside the cooldown: held back
    CHECK(h.offer("ERR", 2000) ==
          "alert t=2000 hyst key= count=5 counts=[5] suppressed=1 |ERR| msg=<5 errors, 1 held back>\n");
    CHECK(h.offer("ERR", 3000) == "");  // held back again
    CHECK(h.tick(10000) == "");         // bucket 0 leaves: 3 left, the condition holds
    // 2 left (2000, 3000): without resolve_when this would resolve; err == 0 is false.
    CHECK(h.tick(11000) == "");
    CHECK(h.tick(12000) == "");  // 1 left
    // Empty: resolved, carrying the line held back since the last alert, and the message.
    CHECK(h.tick(13000) == "resolved t=13000 hyst key= count=0 counts=[0] suppressed=1 msg=<0 errors, 1 held back>\n");
    CHECK(h.tick(14000) == "");
  }
}

// A throttle of two events: its summaries say how many of the suppressed
// lines were each event (a line of both counts in both).
const char* const kNetThrottle = R"toml(
[[rule]]
name = "net"
kind = "throttle"
threshold = "2 per 10s"
key = "{host}"
  [[rule.event]]
  name = "timeout"
  match = '(?P<host>\w+): .*timed out'
  [[rule.event]]
  name = "refused"
  match = '(?P<host>\w+): .*refused'
)toml";

TEST_CASE("engine throttle: a summary carries per-event counts of its suppressed lines") {
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(kNetThrottle, mode);
    CHECK(h.offer("db1: connect timed out", 0) == "line t=0 rule=net |db1: connect timed out|\n");
    CHECK(h.offer("db1: connect refused", 100) == "line t=100 rule=net |db1: connect refused|\n");
    CHECK(h.offer("db1: connect timed out", 200) == "");
    CHECK(h.offer("db1: connect timed out", 300) == "");
    CHECK(h.offer("db1: connect refused", 400) == "");
    CHECK(h.offer("db1: timed out, then refused", 500) == "");  // both events, one line
    CHECK(h.offer("db2: connect refused", 600) == "line t=600 rule=net |db2: connect refused|\n");
    // Room again at 10000: 4 lines suppressed, 3 timeouts and 2 refusals.
    CHECK(h.tick(10000) == "summary t=10000 net key=db1 suppressed=4 counts=[3,2] first=200 last=500\n");
    // The tally starts over, per event too.
    CHECK(h.offer("db1: connect refused", 10100) == "line t=10100 rule=net |db1: connect refused|\n");
    CHECK(h.offer("db1: connect refused", 10200) == "line t=10200 rule=net |db1: connect refused|\n");
    CHECK(h.offer("db1: connect refused", 10300) == "");
    CHECK(h.finish() == "summary t=10300 net key=db1 suppressed=1 counts=[0,1] first=10300 last=10300\n");
  }
}

TEST_CASE("engine --state: pending per-event counts and a firing episode between the thresholds carry over") {
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness first(kNetThrottle, mode);
    CHECK(first.offer("db1: connect timed out", 0) == "line t=0 rule=net |db1: connect timed out|\n");
    CHECK(first.offer("db1: connect timed out", 100) == "line t=100 rule=net |db1: connect timed out|\n");
    CHECK(first.offer("db1: timed out, then refused", 200) == "");
    CHECK(first.offer("db1: connect refused", 300) == "");
    // The next run reports the summary of both runs' suppressed lines.
    Harness next(first, kNetThrottle, mode);
    CHECK(next.offer("db1: connect refused", 400) == "");
    CHECK(next.tick(10000) == "summary t=10000 net key=db1 suppressed=3 counts=[1,3] first=200 last=400\n");

    Harness a(kHysteresis, mode);
    for (int64_t t = 0; t < 9000; t += 1000) CHECK(a.offer("ERR host=a", t) == "");
    CHECK(a.offer("ERR host=a", 9000) ==
          "alert t=9000 hyst key=a count=10 counts=[10] suppressed=0 |ERR host=a|\n"
          "alert t=9000 plain key= count=10 counts=[10] suppressed=0 |ERR host=a|\n");
    CHECK(a.tick(14000) == "resolved t=14000 plain key= count=5 counts=[5] suppressed=0\n");
    // Saved at 5, between the thresholds: the next run resolves at 2 < 3.
    Harness b(a, kHysteresis, mode);
    CHECK(b.tick(16000) == "");  // 7000, 8000, 9000: 3 is not < 3
    CHECK(b.tick(17000) == "resolved t=17000 hyst key=a count=2 counts=[2] suppressed=0\n");
  }
}

TEST_CASE("engine --state: a pending summary from a state file without counts reports them as 0") {
  // State files written before summaries had counts: the pending tally has
  // no per-event part. The summary still comes, with counts 0 (unknown).
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness first(kNetThrottle, mode);
    CHECK(first.offer("db1: connect timed out", 0) == "line t=0 rule=net |db1: connect timed out|\n");
    CHECK(first.offer("db1: connect timed out", 100) == "line t=100 rule=net |db1: connect timed out|\n");
    CHECK(first.offer("db1: connect refused", 200) == "");
    swthrottle::engine::EngineState st = first.engine().save_state();
    for (auto& rw : st.rules)
      for (auto& k : rw.windows) {
        CHECK(k.window.pending_counts == std::vector<uint64_t>{0, 1});
        k.window.pending_counts.clear();
      }
    Harness next(kNetThrottle, mode);
    CHECK(next.engine().load_state(st).empty());
    CHECK(next.finish() == "summary t=200 net key=db1 suppressed=1 counts=[0,0] first=200 last=200\n");
  }
}

TEST_CASE(
    "engine SIGHUP: a changed resolve_when keeps the windows and the firing state, and decides the next resolve") {
  std::string reloaded = kHysteresis;
  reloaded.replace(reloaded.find("\"err < 3\""), 9, "\"err < 5\"");
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness before(kHysteresis, mode);
    for (int64_t t = 0; t < 9000; t += 1000) CHECK(before.offer("ERR host=a", t) == "");
    CHECK(before.offer("ERR host=a", 9000) ==
          "alert t=9000 hyst key=a count=10 counts=[10] suppressed=0 |ERR host=a|\n"
          "alert t=9000 plain key= count=10 counts=[10] suppressed=0 |ERR host=a|\n");
    CHECK(before.tick(14000) == "resolved t=14000 plain key= count=5 counts=[5] suppressed=0\n");
    // Reload at 5 (firing): only the condition changed, so windows are kept
    // (rule_identity.h) and nothing is flushed.
    Harness after(reloaded, mode);
    std::vector<Record> flushed;
    CHECK(after.engine().adopt(before.engine(), flushed).empty());
    CHECK(flushed.empty());
    // 4 < 5 under the new resolve_when (the old one, < 3, would wait for 17000).
    CHECK(after.tick(15000) == "resolved t=15000 hyst key=a count=4 counts=[4] suppressed=0\n");
  }
}

TEST_CASE("engine SIGHUP: a removed rule's held-back lines are reported as at the end of input") {
  const std::string kept = R"toml(
[[rule]]
name = "other"
kind = "throttle"
threshold = "5 per 10s"
  [[rule.event]]
  name = "x"
  match = 'XYZ'
)toml";
  const std::string both = std::string(kNetThrottle) + kept;
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    // Two runs over the same lines: one ends, the other is reloaded without "net".
    Harness ended(both, mode);
    Harness reloaded(both, mode);
    for (Harness* h : {&ended, &reloaded}) {
      h->offer("db1: connect timed out", 0);
      h->offer("db1: connect timed out", 100);
      h->offer("db1: connect refused", 200);
      h->offer("db2: connect refused", 300);
    }
    Harness after(kept, mode);
    std::vector<Record> flushed;
    CHECK(after.engine().adopt(reloaded.engine(), flushed).empty());
    const std::string at_end = ended.finish();
    CHECK(at_end == "summary t=300 net key=db1 suppressed=1 counts=[0,1] first=200 last=200\n");
    CHECK(describe(flushed) == at_end);
  }
}

TEST_CASE("engine alert: a boundary check never raises an alert") {
  const char* const rules = R"toml(
[[rule]]
name = "ratio"
kind = "alert"
window = "10s"
when = "error / request > 0.5"
  [[rule.event]]
  name = "request"
  match = 'GET'
  [[rule.event]]
  name = "error"
  match = 'GET \S+ 500'
)toml";
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(rules, mode);
    CHECK(h.offer("GET /a 200", 0) == "");     // 0/1
    CHECK(h.offer("GET /b 200", 0) == "");     // 0/2
    CHECK(h.offer("GET /c 500", 5000) == "");  // 1/3
    // Window 1..10: bucket 0 left, 1/1 > 0.5 is true now, but only an
    // event raises an alert.
    CHECK(h.tick(10000) == "");
    CHECK(h.tick(11000) == "");
    CHECK(h.offer("hello", 12000) == "");
    // The next event does: the window 3..12 holds /c and /d, 2 errors of 2 requests.
    CHECK(h.offer("GET /d 500", 12000) == "alert t=12000 ratio key= count=4 counts=[2,2] suppressed=0 |GET /d 500|\n");
  }
}

TEST_CASE("engine alert: a late event changes nothing") {
  const char* const rules = R"toml(
[[rule]]
name = "burst"
kind = "alert"
threshold = "3 per 10s"
  [[rule.event]]
  name = "fail"
  match = 'FAIL'
)toml";
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(rules, mode);
    CHECK(h.offer("FAIL 1", 20000) == "");
    CHECK(h.offer("FAIL 2", 20000) == "");
    // Bucket 5 < 11: late. Not added (else 3 >= 3 would alert here).
    CHECK(h.offer("FAIL late", 5000) == "");
    CHECK(h.offer("FAIL 3", 20100) == "alert t=20100 burst key= count=3 counts=[3] suppressed=0 |FAIL 3|\n");
    // Late again, on a firing key: not evaluated, so not tallied.
    CHECK(h.offer("FAIL late", 6000) == "");
    // 30000: bucket 20 left, the key stops firing (no resolve configured).
    CHECK(h.offer("FAIL 4", 30000) == "");
    CHECK(h.offer("FAIL 5", 30050) == "");
    // 30100 - 20100 = 10000 = the default cooldown (the window). Nothing
    // was held back: the late event was never evaluated.
    CHECK(h.offer("FAIL 6", 30100) == "alert t=30100 burst key= count=3 counts=[3] suppressed=0 |FAIL 6|\n");
    CHECK(h.engine().rule_stats(0).late.get() == 2);
    CHECK(h.engine().rule_stats(0).events.get() == 6);
  }
}

TEST_CASE("engine alert: a line before any timestamp is not windowed") {
  const char* const rules = R"toml(
[[rule]]
name = "one"
kind = "alert"
threshold = "1 per 10s"
  [[rule.event]]
  name = "fail"
  match = 'FAIL'
)toml";
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(rules, mode);
    CHECK(h.offer_untimed("FAIL u") == "");  // not counted, not evaluated, not written
    CHECK(h.offer("FAIL a", 500) == "alert t=500 one key= count=1 counts=[1] suppressed=0 |FAIL a|\n");
    CHECK(h.engine().rule_stats(0).untimed.get() == 1);
  }
}

// ---------------------------------------------------------------- keys

const char* const kPerIp = R"toml(
[[rule]]
name = "per-ip"
kind = "throttle"
threshold = "1 per 10s"
key = "{ip}"
max_keys = 2
  [[rule.event]]
  name = "conn"
  match = 'from (?P<ip>\S+)'
)toml";

TEST_CASE("engine keys: a window per key") {
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(kPerIp, mode);
    CHECK(h.offer("from a", 0) == "line t=0 rule=per-ip |from a|\n");
    CHECK(h.offer("from b", 0) == "line t=0 rule=per-ip |from b|\n");  // b has its own window
    CHECK(h.offer("from a", 100) == "");
    CHECK(h.offer("from b", 200) == "");
    CHECK(h.offer("from a", 300) == "");
    // Both windows have room at 10000; one summary per key. The spec fixes
    // only the rule order; the engine writes keys in byte order.
    CHECK(h.tick(10000) ==
          "summary t=10000 per-ip key=a suppressed=2 first=100 last=300\n"
          "summary t=10000 per-ip key=b suppressed=1 first=200 last=200\n");
    CHECK(h.engine().key_count(0) == 2);
    CHECK(h.engine().rule_stats(0).keys.get() == 2);
    CHECK(h.engine().rule_stats(0).evictions.get() == 0);
  }
}

TEST_CASE("engine keys: max_keys evicts the least recently updated key, a pending tally is flushed") {
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(kPerIp, mode);  // max_keys = 2
    CHECK(h.offer("from a", 0) == "line t=0 rule=per-ip |from a|\n");
    CHECK(h.offer("from b", 10) == "line t=10 rule=per-ip |from b|\n");
    CHECK(h.offer("from a", 20) == "");  // suppressed; a is now the most recently updated
    // c is a third key: b (updated at 10) goes, with nothing pending.
    CHECK(h.offer("from c", 30) == "line t=30 rule=per-ip |from c|\n");
    // b comes back with a fresh window (it passes although the old one was
    // full) and pushes out a (20 < c's 30), whose pending line becomes a
    // summary at now (the lead's decision), written before b's line.
    CHECK(h.offer("from b", 40) ==
          "summary t=40 per-ip key=a suppressed=1 first=20 last=20\n"
          "line t=40 rule=per-ip |from b|\n");
    CHECK(h.offer("from a", 50) == "line t=50 rule=per-ip |from a|\n");  // fresh again; c goes
    CHECK(h.tick(10000) == "");
    CHECK(h.finish() == "");
    CHECK(h.engine().key_count(0) == 2);
    CHECK(h.engine().rule_stats(0).evictions.get() == 3);
    CHECK(h.engine().rule_stats(0).keys.get() == 5);  // a, b, c, b, a
  }
}

TEST_CASE("engine keys: an evicted alert key starts over") {
  const char* const rules = R"toml(
[[rule]]
name = "burst"
kind = "alert"
threshold = "2 per 10s"
key = "{ip}"
max_keys = 1
  [[rule.event]]
  name = "fail"
  match = 'FAIL from (?P<ip>\S+)'
)toml";
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(rules, mode);
    CHECK(h.offer("FAIL from a", 0) == "");
    CHECK(h.offer("FAIL from b", 10) == "");  // evicts a (its count of 1 is forgotten)
    CHECK(h.offer("FAIL from a", 20) == "");  // a: 1 again, not 2; evicts b
    CHECK(h.offer("FAIL from a", 30) == "alert t=30 burst key=a count=2 counts=[2] suppressed=0 |FAIL from a|\n");
    CHECK(h.engine().rule_stats(0).evictions.get() == 2);
  }
}

TEST_CASE("engine keys: key templates use captures, a missing capture is empty") {
  const char* const rules = R"toml(
[[rule]]
name = "who"
kind = "alert"
threshold = "1 per 10s"
key = "{rule}:{user}@{ip}"
  [[rule.event]]
  name = "login"
  match = 'login (?:user=(?P<user>\w+) )?from (?P<ip>\S+)'
  [[rule.event]]
  name = "probe"
  match = 'probe from (?P<ip>\S+)'
)toml";
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(rules, mode);
    CHECK(h.offer("login user=bob from 10.0.0.1", 0) ==
          "alert t=0 who key=who:bob@10.0.0.1 count=1 counts=[1,0] suppressed=0 |login user=bob from 10.0.0.1|\n");
    // The optional group did not take part: user is "".
    CHECK(h.offer("login from 10.0.0.1", 100) ==
          "alert t=100 who key=who:@10.0.0.1 count=1 counts=[1,0] suppressed=0 |login from 10.0.0.1|\n");
    // probe has no `user` group at all: the same key "who:@10.0.0.1", whose
    // window now holds 2 (inside its cooldown: no alert).
    CHECK(h.offer("probe from 10.0.0.1", 200) == "");
    CHECK(h.offer("login user=bob from 10.0.0.1", 300) == "");
    CHECK(h.engine().key_count(0) == 2);
  }
}

// ---------------------------------------------------------------- several rules

TEST_CASE("engine: records of one line come in the four groups, each in rule file order") {
  const char* const rules = R"toml(
[[rule]]
name = "t-err"
kind = "throttle"
threshold = "1 per 10s"
  [[rule.event]]
  name = "err"
  match = 'ERR'

[[rule]]
name = "a-err"
kind = "alert"
threshold = "2 per 10s"
resolve = true
  [[rule.event]]
  name = "err"
  match = 'ERR'

[[rule]]
name = "t-any"
kind = "throttle"
threshold = "2 per 10s"
  [[rule.event]]
  name = "any"
  match = 'ERR|WARN'

[[rule]]
name = "a-any"
kind = "alert"
threshold = "1 per 10s"
  [[rule.event]]
  name = "warn"
  match = 'WARN'
  [[rule.event]]
  name = "err"
  match = 'ERR'
)toml";
  // Group 2 (a summary written because the line passes) cannot come from a
  // single input: a throttle window only gets room again when a bucket leaves
  // it, and the line that moves now across that boundary runs the boundary
  // check (group 1) first, which already reports the tally. Only another
  // input deciding at the same moment can leave a tally for group 2.
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(rules, mode);
    // t-err and t-any pass it (rule = the first, t-err); a-err counts 1;
    // a-any crosses 1 >= 1. Line first, then alerts.
    CHECK(h.offer("ERR 1", 0) ==
          "line t=0 rule=t-err |ERR 1|\n"
          "alert t=0 a-any key= count=1 counts=[0,1] suppressed=0 |ERR 1|\n");
    // t-err suppresses it (so it is not written, although t-any passes and
    // counts it); a-err crosses 2; a-any holds inside its cooldown (tally 1).
    CHECK(h.offer("ERR 2", 100) == "alert t=100 a-err key= count=2 counts=[2] suppressed=0 |ERR 2|\n");
    // t-any is full (2): suppressed; a-any tally 2.
    CHECK(h.offer("WARN 3", 200) == "");
    // Bucket 10: every window is empty. Boundary checks first, in file
    // order: t-err's summary, a-err's resolve, t-any's summary (a-any stops
    // firing without resolve = true). Then the line passes both throttles,
    // and a-any (a line that is both of its events: 2) alerts again,
    // 10000 ms after its last alert, carrying the 2 held back.
    CHECK(h.offer("ERR WARN 4", 10000) ==
          "summary t=10000 t-err key= suppressed=1 first=100 last=100\n"
          "resolved t=10000 a-err key= count=0 counts=[0] suppressed=0\n"
          "summary t=10000 t-any key= suppressed=1 first=200 last=200\n"
          "line t=10000 rule=t-err |ERR WARN 4|\n"
          "alert t=10000 a-any key= count=2 counts=[1,1] suppressed=2 |ERR WARN 4|\n");
    // Only t-any is a throttle that matches: it names the line.
    CHECK(h.offer("WARN 5", 10100) == "line t=10100 rule=t-any |WARN 5|\n");
    CHECK(h.finish() == "");
  }
}

TEST_CASE("engine: what is written, with and without passthrough, alerts in file order") {
  const char* const rules = R"toml(
[[rule]]
name = "t"
kind = "throttle"
threshold = "1 per 10s"
  [[rule.event]]
  name = "err"
  match = 'ERR'

[[rule]]
name = "a1"
kind = "alert"
threshold = "1 per 10s"
  [[rule.event]]
  name = "alert"
  match = 'ALERT'

[[rule]]
name = "a2"
kind = "alert"
threshold = "1 per 10s"
  [[rule.event]]
  name = "any"
  match = 'ALERT|ERR'
)toml";
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    {
      Harness h(rules, mode);  // without passthrough
      CHECK(h.offer_untimed("ALERT u") == "");
      CHECK(h.offer("hello", 0) == "");  // no rule matched it
      CHECK(h.offer("ALERT x", 0) ==     // only alert rules matched: the alerts, not the line
            "alert t=0 a1 key= count=1 counts=[1] suppressed=0 |ALERT x|\n"
            "alert t=0 a2 key= count=1 counts=[1] suppressed=0 |ALERT x|\n");
      CHECK(h.offer("ERR 1", 100) == "line t=100 rule=t |ERR 1|\n");  // a2 holds inside its cooldown
      CHECK(h.offer("ERR 2", 200) == "");
      CHECK(h.finish() == "summary t=200 t key= suppressed=1 first=200 last=200\n");
    }
    {
      Harness h(rules, mode, EngineOptions{.passthrough = true});
      CHECK(h.offer_untimed("ALERT u") == "line t=- rule=- |ALERT u|\n");
      CHECK(h.offer("hello", 0) == "line t=0 rule=- |hello|\n");
      CHECK(h.offer("ALERT x", 0) ==
            "line t=0 rule=- |ALERT x|\n"
            "alert t=0 a1 key= count=1 counts=[1] suppressed=0 |ALERT x|\n"
            "alert t=0 a2 key= count=1 counts=[1] suppressed=0 |ALERT x|\n");
      CHECK(h.offer("ERR 1", 100) == "line t=100 rule=t |ERR 1|\n");
      CHECK(h.offer("ERR 2", 200) == "");  // a throttle suppressed it: not even with passthrough
      CHECK(h.finish() == "summary t=200 t key= suppressed=1 first=200 last=200\n");
    }
  }
}

// ---------------------------------------------------------------- messages

TEST_CASE("engine: message templates") {
  const char* const rules = R"toml(
[[rule]]
name = "logins"
kind = "alert"
threshold = "2 per 10s"
key = "{ip}"
cooldown = "1s"
message = "{rule}: {count} of {threshold} per {window} key={key} user={user} ip={ip} suppressed={suppressed} line=<{line}>"
  [[rule.event]]
  name = "failed"
  match = 'failed user=(?P<user>\w+) from (?P<ip>\S+)'
  [[rule.event]]
  name = "invalid"
  match = 'invalid from (?P<ip>\S+)'

[[rule]]
name = "ratio"
kind = "alert"
window = "10s"
when = "error * 2 > request"
message = "{threshold}|{window}|{count}|{key}|{ip:>4}"
  [[rule.event]]
  name = "request"
  match = 'GET (?P<ip>\S+)'
  [[rule.event]]
  name = "error"
  match = 'GET \S+ 5\d\d'
)toml";
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(rules, mode);
    CHECK(h.offer("failed user=bob from 1.2.3.4", 0) == "");
    // `invalid` has no user group: {user} is empty. {count}: the rule's
    // total in the window; {threshold}: Y; {window}: as written.
    CHECK(h.offer("invalid from 1.2.3.4", 100) ==
          "alert t=100 logins key=1.2.3.4 count=2 counts=[1,1] suppressed=0 |invalid from 1.2.3.4|"
          " msg=<logins: 2 of 2 per 10s key=1.2.3.4 user= ip=1.2.3.4 suppressed=0"
          " line=<invalid from 1.2.3.4>>\n");
    CHECK(h.offer("failed user=eve from 1.2.3.4", 200) == "");  // inside the 1s cooldown: tally 1
    CHECK(h.offer("failed user=eve from 1.2.3.4", 1100) ==
          "alert t=1100 logins key=1.2.3.4 count=4 counts=[3,1] suppressed=1 |failed user=eve from 1.2.3.4|"
          " msg=<logins: 4 of 2 per 10s key=1.2.3.4 user=eve ip=1.2.3.4 suppressed=1"
          " line=<failed user=eve from 1.2.3.4>>\n");
    // A `when` rule: {threshold} is the `when` text. {key} of a rule
    // without key: "". Field format specs apply ({ip:>4}).
    CHECK(h.offer("GET 9 503", 2000) ==
          "alert t=2000 ratio key= count=2 counts=[1,1] suppressed=0 |GET 9 503|"
          " msg=<error * 2 > request|10s|2||   9>\n");
  }
}

// BUG (src/engine/engine.cpp, offer: `values[kFieldEvent] = first_event <
// ... ? rule.event_names[first_event] : ""`): the conditional's type is a
// std::string prvalue, so the field views a temporary that is gone before
// any template renders it. ASan: stack-use-after-scope in Template::render.
// Under ASan this aborts the whole run, so it is excluded there until fixed:
// run with -tce='*{event}*'.
TEST_CASE("engine: {event} in key and message names the first matched event") {
  const char* const rules = R"toml(
[[rule]]
name = "ev"
kind = "alert"
threshold = "1 per 10s"
key = "{event}"
message = "{event} on {key}"
  [[rule.event]]
  name = "first"
  match = 'A'
  [[rule.event]]
  name = "second"
  match = 'B'
)toml";
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(rules, mode);
    CHECK(h.offer("B", 0) == "alert t=0 ev key=second count=1 counts=[0,1] suppressed=0 |B| msg=<second on second>\n");
    // Both events: the spec does not say which one {event} is; the engine
    // takes the first in rule order.
    CHECK(h.offer("A B", 100) ==
          "alert t=100 ev key=first count=2 counts=[1,1] suppressed=0 |A B| msg=<first on first>\n");
  }
}

TEST_CASE("engine: a resolved record carries the rule's message (DESIGN.md §5)") {
  // DESIGN.md §5: "Alerts and resolveds add ... `message` (when the rule has one)".
  const char* const rules = R"toml(
[[rule]]
name = "burst"
kind = "alert"
threshold = "2 per 10s"
key = "{ip}"
resolve = true
message = "{rule} {key} {count}/{threshold} per {window}"
  [[rule.event]]
  name = "fail"
  match = 'FAIL from (?P<ip>\S+)'
)toml";
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(rules, mode);
    CHECK(h.offer("FAIL from a", 0) == "");
    CHECK(h.offer("FAIL from a", 100) ==
          "alert t=100 burst key=a count=2 counts=[2] suppressed=0 |FAIL from a| msg=<burst a 2/2 per 10s>\n");
    CHECK(h.tick(10000) == "resolved t=10000 burst key=a count=0 counts=[0] suppressed=0 msg=<burst a 0/2 per 10s>\n");
  }
}

// ---------------------------------------------------------------- modes

// One long mixed input (several rules, keys, late lines, ticks): the two
// modes must write the same records (DESIGN.md §2: single-threaded, every
// efficient decision equals the accurate one).
TEST_CASE("engine: accurate and efficient write the same records for one input") {
  const char* const rules = R"toml(
[[rule]]
name = "thr"
kind = "throttle"
threshold = "3 per 2s"
key = "{k}"
max_keys = 3
  [[rule.event]]
  name = "e"
  match = 'T k=(?P<k>\w)'

[[rule]]
name = "al"
kind = "alert"
threshold = "4 per 3s"
key = "{k}"
cooldown = "2s"
resolve = true
  [[rule.event]]
  name = "a"
  match = 'A k=(?P<k>\w)'
  [[rule.event]]
  name = "t"
  match = 'T k=(?P<k>\w)'

[[rule]]
name = "any"
kind = "throttle"
threshold = "5 per 1s"
  [[rule.event]]
  name = "x"
  match = 'k='
)toml";
  const uint64_t seed = swthrottle::test::base_seed(20260101);
  INFO("seed " << seed);
  std::string transcript[2];
  for (int mi = 0; mi < 2; ++mi) {
    Harness h(rules, kModes[static_cast<std::size_t>(mi)]);
    std::mt19937_64 rng(seed);
    int64_t t = 0;
    std::string& s = transcript[mi];
    for (int i = 0; i < 3000; ++i) {
      const uint64_t r = rng();
      const int op = static_cast<int>(r % 20);
      t += static_cast<int64_t>((r >> 8) % 150);
      const char key = static_cast<char>('a' + (r >> 16) % 5);
      const std::string kind = op < 9 ? "T" : op < 16 ? "A" : "x";
      int64_t when = t;
      if (op == 16) when = t - static_cast<int64_t>((r >> 24) % 6000);  // sometimes late, sometimes not
      const std::string line = kind + " k=" + std::string(1, key) + " #" + std::to_string(i);
      if (op == 17) {
        s += "tick " + std::to_string(t) + "\n" + h.tick(t);
      } else if (op == 18 && i < 20) {
        s += h.offer_untimed(line);
      } else {
        s += "offer " + line + " @" + std::to_string(when) + "\n" + h.offer(line, when);
      }
    }
    s += "finish\n" + h.finish();
  }
  CHECK(transcript[0].size() > 10000);  // the script exercised something
  CHECK(transcript[0] == transcript[1]);
}

// ---------------------------------------------------------------- concurrency

struct ConcurrentRun {
  uint64_t passed = 0;      // line records
  uint64_t summarized = 0;  // suppressed lines reported by summaries, finish() included
};

// T threads, each with its own Matcher, offer N lines each at the same time
// to one unkeyed throttle rule, all released at once by a latch.
ConcurrentRun run_concurrent(Harness& h, int threads, int lines_per_thread) {
  std::latch start(threads);
  std::vector<ConcurrentRun> per(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      Matcher m = std::move(*Matcher::make(h.rules()));
      MatchResult mr;
      std::vector<Record> out;
      const std::string line = "ERR from thread " + std::to_string(i);
      ConcurrentRun& mine = per[static_cast<std::size_t>(i)];
      start.arrive_and_wait();
      for (int k = 0; k < lines_per_thread; ++k) {
        m.match(line, mr);
        h.engine().offer(LineEvent{line, true, 5000}, mr, out);
        for (const Record& r : out) {
          if (r.type == RecordType::Line) ++mine.passed;
          if (r.type == RecordType::Summary) mine.summarized += r.suppressed;
        }
      }
    });
  }
  for (std::thread& th : pool) th.join();
  ConcurrentRun total;
  for (const ConcurrentRun& p : per) {
    total.passed += p.passed;
    total.summarized += p.summarized;
  }
  std::vector<Record> out;
  h.engine().finish(out);
  for (const Record& r : out) total.summarized += r.suppressed;
  return total;
}

std::string flood_rules(int y) {
  return R"toml(
[[rule]]
name = "flood"
kind = "throttle"
threshold = ")toml" +
         std::to_string(y) + R"toml( per 10s"
  [[rule.event]]
  name = "err"
  match = 'ERR'
)toml";
}

TEST_CASE("engine concurrency: accurate passes exactly min(Y, offered)") {
  constexpr int kThreads = 4;
  for (int round = 0; round < 5; ++round) {
    INFO("round " << round);
    {
      Harness h(flood_rules(100), "accurate");
      const ConcurrentRun r = run_concurrent(h, kThreads, 300);  // 1200 offered
      CHECK(r.passed == 100);
      CHECK(r.summarized == 1200 - 100);  // every suppressed line is reported once
      CHECK(h.engine().rule_stats(0).passed.get() == 100);
      CHECK(h.engine().rule_stats(0).suppressed.get() == 1100);
    }
    {
      Harness h(flood_rules(1000), "accurate");
      const ConcurrentRun r = run_concurrent(h, kThreads, 100);  // 400 offered < Y
      CHECK(r.passed == 400);
      CHECK(r.summarized == 0);
    }
  }
}

TEST_CASE("engine concurrency: efficient passes between Y and Y + T - 1") {
  constexpr int kThreads = 4;
  for (int round = 0; round < 5; ++round) {
    INFO("round " << round);
    {
      Harness h(flood_rules(100), "efficient");
      const ConcurrentRun r = run_concurrent(h, kThreads, 300);
      CHECK(r.passed >= 100);
      CHECK(r.passed <= 100 + kThreads - 1);
      CHECK(r.passed + r.summarized == 1200);  // suppressed lines add up
      CHECK(h.engine().rule_stats(0).passed.get() == r.passed);
    }
    {
      Harness h(flood_rules(1000), "efficient");
      const ConcurrentRun r = run_concurrent(h, kThreads, 100);
      CHECK(r.passed == 400);  // min(Y, offered): never fewer
      CHECK(r.summarized == 0);
    }
  }
}

// ---------------------------------------------------------------- next boundary

TEST_CASE("engine: next_boundary_ms is the next bucket boundary of any rule after now") {
  const char* const rules = R"toml(
[[rule]]
name = "slow"
kind = "throttle"
threshold = "1 per 10s"
  [[rule.event]]
  name = "x"
  match = 'X'

[[rule]]
name = "fast"
kind = "alert"
threshold = "1 per 3s"
  [[rule.event]]
  name = "y"
  match = 'Y'
)toml";
  for (const std::string& mode : kModes) {
    INFO("mode=" << mode);
    Harness h(rules, mode);                             // widths: slow 1000 ms, fast 300 ms
    CHECK(h.engine().next_boundary_ms() == INT64_MAX);  // no time yet: nothing can happen
    CHECK(h.engine().now_ms() == -1);
    CHECK(h.offer_untimed("hello") == "");
    CHECK(h.engine().next_boundary_ms() == INT64_MAX);  // an untimed line does not set now
    CHECK(h.offer("hello", 1500) == "");
    CHECK(h.engine().next_boundary_ms() == 1800);  // min(2000, 6*300)
    CHECK(h.tick(1800) == "");
    CHECK(h.engine().next_boundary_ms() == 2000);  // strictly after now: fast's next is 2100
    CHECK(h.tick(2000) == "");
    CHECK(h.engine().next_boundary_ms() == 2100);
    CHECK(h.tick(1000) == "");  // backwards: now stays
    CHECK(h.engine().now_ms() == 2000);
    CHECK(h.engine().next_boundary_ms() == 2100);
  }
}

}  // namespace
