// Both window modes, single-threaded: exact behaviour (DESIGN.md §2-§3) and a
// differential test against the naive model in tests/support/window_model.h.
#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <vector>

#include "support/seed.h"
#include "support/window_model.h"
#include "window/core.h"

using namespace swthrottle::window;
using swthrottle::test::WindowModel;

namespace {

struct Counts {
  std::vector<uint64_t> v;
};

template <typename W>
std::vector<uint64_t> read_counts(const W& w, uint32_t events) {
  std::vector<uint64_t> c(events, 99);
  w.read(c);
  return c;
}

template <typename W>
W make(int64_t width, uint32_t buckets, uint32_t events) {
  return W(WindowSpec{width, buckets, events});
}

using U = std::vector<uint64_t>;

}  // namespace

TEST_CASE_TEMPLATE("window: counts slide out exactly at the bucket edge", W, AccurateWindow, EfficientWindow) {
  W w(WindowSpec{1000, 3, 1});  // 3 s window of 1 s buckets
  CHECK(w.now_ms() == -1);
  CHECK(read_counts(w, 1) == U{0});
  CHECK(w.add(0, 0) == AddResult::Added);
  CHECK(w.add(999, 0) == AddResult::Added);
  CHECK(w.add(1000, 0) == AddResult::Added);
  w.advance(2999);  // window = buckets 0..2
  CHECK(read_counts(w, 1) == U{3});
  w.advance(3000);  // buckets 1..3: bucket 0 (two events) is stale
  CHECK(read_counts(w, 1) == U{1});
  w.advance(3999);
  CHECK(read_counts(w, 1) == U{1});
  w.advance(4000);
  CHECK(read_counts(w, 1) == U{0});
  CHECK(w.now_ms() == 4000);
}

TEST_CASE_TEMPLATE("window: time going backwards never moves the window back", W, AccurateWindow, EfficientWindow) {
  W w(WindowSpec{1000, 3, 2});
  CHECK(w.add(5000, 0) == AddResult::Added);
  CHECK(w.add(4000, 1) == AddResult::Added);  // older but inside: its own bucket
  CHECK(w.add(3000, 1) == AddResult::Added);  // oldest bucket still inside
  CHECK(w.add(2999, 0) == AddResult::Late);   // too old: reported, not counted
  CHECK(w.now_ms() == 5000);
  CHECK(read_counts(w, 2) == (U{1, 2}));
  w.advance(10);  // a clock step back changes nothing
  CHECK(w.now_ms() == 5000);
  CHECK(read_counts(w, 2) == (U{1, 2}));
  w.advance(6000);  // bucket 3 leaves
  CHECK(read_counts(w, 2) == (U{1, 1}));
}

TEST_CASE_TEMPLATE("window: one bucket and a 1 ms bucket", W, AccurateWindow, EfficientWindow) {
  W one(WindowSpec{60000, 1, 1});
  one.add(0, 0);
  one.add(59999, 0);
  CHECK(read_counts(one, 1) == U{2});
  CHECK(one.add(60000, 0) == AddResult::Added);
  CHECK(read_counts(one, 1) == U{1});
  CHECK(one.add(59999, 0) == AddResult::Late);

  W ms(WindowSpec{1, 1, 1});
  ms.add(7, 0);
  ms.add(7, 0);
  CHECK(read_counts(ms, 1) == U{2});
  ms.add(8, 0);
  CHECK(read_counts(ms, 1) == U{1});
}

TEST_CASE_TEMPLATE("window: gaps far beyond the window, and tag aliasing", W, AccurateWindow, EfficientWindow) {
  W w(WindowSpec{1, 10, 1});
  for (int i = 0; i < 3; ++i) w.add(5, 0);
  // 2^24 and 2^32 buckets later the ring slot and any narrow tag coincide.
  const int64_t gaps[] = {int64_t{1} << 24, int64_t{1} << 32, int64_t{1} << 33, (int64_t{1} << 33) + 3};
  int64_t t = 5;
  for (int64_t gap : gaps) {
    t += gap;
    CAPTURE(t);
    w.advance(t);
    CHECK(read_counts(w, 1) == U{0});
    CHECK(w.add(t, 0) == AddResult::Added);
    CHECK(read_counts(w, 1) == U{1});
    CHECK(w.add(t - 10, 0) == AddResult::Late);
    w.add(t, 0);
    w.add(t, 0);
    CHECK(read_counts(w, 1) == U{3});
  }
}

// previous(): a 3 s window of 1 s buckets that also keeps the 3 s before it.
// Reads give 2E counts: the window's, then the previous window's.
TEST_CASE_TEMPLATE("window: the previous window, kept in the same ring", W, AccurateWindow, EfficientWindow) {
  WindowSpec spec{1000, 3, 2};
  spec.previous = 1;
  W w(spec);
  CHECK(spec.ring() == 6);
  CHECK(w.add(500, 0) == AddResult::Added);   // bucket 0
  CHECK(w.add(1500, 1) == AddResult::Added);  // bucket 1
  CHECK(w.add(2500, 0) == AddResult::Added);  // bucket 2
  CHECK(read_counts(w, 4) == (U{2, 1, 0, 0}));
  CHECK(read_counts(w, 2) == (U{2, 1}));  // a read of E counts: the window's only
  w.advance(3000);                        // bucket 0 goes to the previous window
  CHECK(read_counts(w, 4) == (U{1, 1, 1, 0}));
  CHECK(w.add(999, 0) == AddResult::Late);  // the previous window is read, never added to
  CHECK(w.add(2000, 0) == AddResult::Added);
  CHECK(read_counts(w, 4) == (U{2, 1, 1, 0}));
  w.advance(5000);  // window 3..5; previous 0..2
  CHECK(read_counts(w, 4) == (U{0, 0, 3, 1}));
  w.advance(6000);  // previous 1..3: bucket 0 leaves the ring
  CHECK(read_counts(w, 4) == (U{0, 0, 2, 1}));
  w.advance(8999);  // previous 3..5: nothing left
  CHECK(read_counts(w, 4) == (U{0, 0, 0, 0}));
  // A jump of more than the window but less than the ring keeps what became
  // the previous window; a jump of the whole ring keeps nothing.
  w.add(9000, 0);
  w.add(9500, 1);
  w.advance(13000);  // window 11..13, previous 8..10
  CHECK(read_counts(w, 4) == (U{0, 0, 1, 1}));
  w.add(13000, 0);
  w.advance(19000);  // window 17..19, previous 14..16
  CHECK(read_counts(w, 4) == (U{0, 0, 0, 0}));
  // Saved and loaded, the previous window comes back too.
  w.add(19000, 0);
  w.advance(21000);
  w.add(21000, 1);
  const WindowState st = w.save();
  CHECK(st.buckets.size() == 2);
  W back(spec);
  back.load(st);
  CHECK(read_counts(back, 4) == (U{1, 1, 0, 0}));
  back.advance(22000);  // window 20..22, previous 17..19
  CHECK(read_counts(back, 4) == (U{0, 1, 1, 0}));
}

// A condition sees the previous window's counts after the window's.
TEST_CASE_TEMPLATE("window: a spike condition over the previous window", W, AccurateWindow, EfficientWindow) {
  struct Spike final : Condition {  // error >= 3 * previous(error) and previous(error) >= 2
    bool holds(std::span<const uint64_t> c) const override { return c.size() == 2 && c[0] >= 3 * c[1] && c[1] >= 2; }
  } spike;
  WindowSpec spec{1000, 2, 1};
  spec.previous = 1;
  W w(spec);
  const AlertPolicy policy{&spike, 0, true};
  U c(2);
  // Two errors a second for 4 s: never 3 times the previous window (empty at first: below the minimum).
  for (int64_t t = 0; t < 4000; t += 500) CHECK(w.offer_alert(t, t, 1, policy, c).action == AlertAction::None);
  CHECK(c == (U{4, 4}));
  // Then 12 in one second: 2 + 10 against 4 fires; 2 + 12 at the end.
  AlertOutcome o;
  for (int64_t t = 4000; t < 4012; ++t) o = w.offer_alert(t, t, 1, policy, c);
  CHECK(o.firing);
  CHECK(c == (U{14, 4}));
  // Two more at 5 s (14 and 13 against 4: still firing); at 6 s the window is 2 against 2 + 12: resolved.
  for (int64_t t = 5000; t < 6000; t += 500) w.offer_alert(t, t, 1, policy, c);
  o = w.tick_alert(6000, policy, c);
  CHECK(c == (U{2, 14}));
  CHECK(o.action == AlertAction::Resolved);
}

TEST_CASE_TEMPLATE("window: throttle passes Y per window with summaries", W, AccurateWindow, EfficientWindow) {
  W w(WindowSpec{1000, 10, 1});  // Y = 3 per 10 s
  for (int i = 0; i < 3; ++i) {
    ThrottleOutcome o = w.offer_throttle(100 + i, 100 + i, 3);
    CHECK(o.passed);
    CHECK(o.summary.suppressed == 0);
  }
  ThrottleOutcome s1 = w.offer_throttle(200, 200, 3);
  CHECK_FALSE(s1.passed);
  ThrottleOutcome s2 = w.offer_throttle(9999, 9999, 3);  // bucket 9: still full
  CHECK_FALSE(s2.passed);
  CHECK_FALSE(w.quiet());
  // No room yet at 10099 (bucket 10; bucket 0 with three passes left, so room)
  Summary none = w.tick_throttle(9999, 3);
  CHECK(none.suppressed == 0);
  Summary room = w.tick_throttle(10000, 3);
  CHECK(room.suppressed == 2);
  CHECK(room.first_ms == 200);
  CHECK(room.last_ms == 9999);
  CHECK(w.quiet());
  ThrottleOutcome p = w.offer_throttle(10001, 10001, 3);
  CHECK(p.passed);
  CHECK(p.summary.suppressed == 0);  // already reported by the boundary check
}

TEST_CASE_TEMPLATE("window: throttle summary rides on the next passing line", W, AccurateWindow, EfficientWindow) {
  W w(WindowSpec{1000, 1, 1});  // Y = 1 per 1 s
  CHECK(w.offer_throttle(0, 0, 1).passed);
  CHECK_FALSE(w.offer_throttle(10, 10, 1).passed);
  CHECK_FALSE(w.offer_throttle(20, 20, 1).passed);
  ThrottleOutcome o = w.offer_throttle(1000, 1000, 1);
  CHECK(o.passed);
  CHECK(o.summary.suppressed == 2);
  CHECK(o.summary.first_ms == 10);
  CHECK(o.summary.last_ms == 20);
  CHECK(w.take_pending().suppressed == 0);
  CHECK_FALSE(w.offer_throttle(1500, 1500, 1).passed);
  Summary end = w.take_pending();  // end of input
  CHECK(end.suppressed == 1);
  CHECK(end.first_ms == 1500);
}

TEST_CASE_TEMPLATE("window: a late throttle line is decided and counted at now", W, AccurateWindow, EfficientWindow) {
  W w(WindowSpec{1000, 2, 1});  // Y = 2 per 2 s
  CHECK(w.offer_throttle(5000, 5000, 2).passed);
  ThrottleOutcome late = w.offer_throttle(1000, 5000, 2);
  CHECK(late.late);
  CHECK(late.passed);  // counted at now: the window is now full
  ThrottleOutcome late2 = w.offer_throttle(1200, 5300, 2);
  CHECK(late2.late);
  CHECK_FALSE(late2.passed);
  Summary s = w.take_pending();
  CHECK(s.suppressed == 1);
  CHECK(s.first_ms == 5300);  // decided at now, not at its own time
}

TEST_CASE_TEMPLATE("window: alert once per crossing, cooldown across flaps, resolve", W, AccurateWindow,
                   EfficientWindow) {
  W w(WindowSpec{1000, 10, 1});  // 3 per 10 s
  AtLeast three(3);
  AlertPolicy p{&three, 60000, true};
  U c(1);
  CHECK(w.offer_alert(0, 0, 1, p, c).action == AlertAction::None);
  CHECK(w.offer_alert(1, 1, 1, p, c).action == AlertAction::None);
  AlertOutcome a = w.offer_alert(2, 2, 1, p, c);
  CHECK(a.action == AlertAction::Alert);
  CHECK(a.suppressed == 0);
  CHECK(c == U{3});
  CHECK(a.firing);
  AlertOutcome more = w.offer_alert(3, 3, 1, p, c);  // still true, inside cooldown
  CHECK(more.action == AlertAction::None);
  CHECK(more.holds);
  CHECK(c == U{4});
  // The window empties: the boundary check resolves the announced episode.
  AlertOutcome r = w.tick_alert(10000, p, c);
  CHECK(r.action == AlertAction::Resolved);
  CHECK(c == U{0});
  CHECK_FALSE(r.firing);
  CHECK(w.tick_alert(11000, p, c).action == AlertAction::None);  // once only
  // Flap inside the cooldown: firing again, not announced, so no resolve later.
  for (int64_t t : {20000, 20001, 20002}) CHECK(w.offer_alert(t, t, 1, p, c).action == AlertAction::None);
  CHECK_FALSE(w.quiet());
  CHECK(w.tick_alert(30000, p, c).action == AlertAction::None);
  CHECK(w.quiet());
  // After the cooldown the next crossing alerts, carrying the lines that met
  // the condition without an alert since the previous one: 3 (t=3) + 1 (t=20002).
  for (int64_t t : {60002, 60003}) CHECK(w.offer_alert(t, t, 1, p, c).action == AlertAction::None);
  AlertOutcome again = w.offer_alert(60004, 60004, 1, p, c);
  CHECK(again.action == AlertAction::Alert);
  CHECK(again.suppressed == 2);
}

TEST_CASE_TEMPLATE("window: a late alert event changes nothing", W, AccurateWindow, EfficientWindow) {
  W w(WindowSpec{1000, 2, 1});
  AtLeast one(1);
  AlertPolicy p{&one, 0, false};
  U c(1);
  w.advance(10000);
  AlertOutcome o = w.offer_alert(100, 10000, 1, p, c);
  CHECK(o.late);
  CHECK(o.action == AlertAction::None);
  CHECK(c == U{0});
  CHECK(w.quiet());
}

TEST_CASE_TEMPLATE("window: multi-event counts and a when-style condition", W, AccurateWindow, EfficientWindow) {
  struct Ratio final : Condition {  // error / request > 0.5 and request >= 2
    bool holds(std::span<const uint64_t> c) const override { return c[0] >= 2 && c[1] * 2 > c[0]; }
  } ratio;
  W w(WindowSpec{1000, 5, 2});
  AlertPolicy p{&ratio, 0, false};
  U c(2);
  CHECK(w.offer_alert(0, 0, 0b01, p, c).action == AlertAction::None);  // request
  AlertOutcome a = w.offer_alert(1, 1, 0b11, p, c);                    // request + error
  CHECK(c == (U{2, 1}));
  CHECK(a.action == AlertAction::None);  // 1/2 is not > 0.5
  AlertOutcome b = w.offer_alert(2, 2, 0b11, p, c);
  CHECK(c == (U{3, 2}));
  CHECK(b.action == AlertAction::Alert);
}

TEST_CASE("window: TypedWindow over an enum class") {
  enum class Http { Request, Error, count };
  TypedWindow<Http, AccurateWindow> a(60000, 10);
  TypedWindow<Http> e(60000, 10);
  for (auto* w : {&a}) {
    w->add(0, Http::Request);
    w->add(1, Http::Error);
    w->add(2, Http::Error);
    CHECK(w->count(Http::Request) == 1);
    CHECK(w->count(Http::Error) == 2);
    CHECK(w->counts().total() == 3);
  }
  e.add(0, Http::Error, 5);
  CHECK(e.count(Http::Error) == 5);
  CHECK(TypedWindow<Http>::mask(Http::Error) == 2);
  CHECK(e.offer_throttle(1, 6, Http::Request).passed);
  CHECK_FALSE(e.offer_throttle(2, 6, Http::Request).passed);
}

TEST_CASE("window: make_window_at builds the window at the given address, its counters after it") {
  const WindowSpec spec{1000, 10, 3};
  // An idle key's window is its object and one unpadded block of counters.
  CHECK(window_bytes_at(Mode::Efficient, spec) == sizeof(EfficientWindow) + 10 * 3 * 8);
  CHECK(window_bytes_at(Mode::Accurate, spec) == sizeof(AccurateWindow) + (1 + 10) * 3 * 8);
  for (Mode mode : {Mode::Accurate, Mode::Efficient}) {
    INFO("mode=" << (mode == Mode::Accurate ? "accurate" : "efficient"));
    // Dirty memory: the window must not rely on it being zero.
    std::vector<uint64_t> mem(window_bytes_at(mode, spec) / 8 + 1, ~uint64_t{0});
    Window* w = make_window_at(mem.data(), mode, spec, 2);
    CHECK(static_cast<void*>(w) == mem.data());
    CHECK(w->spec().buckets == 10);
    CHECK(w->now_ms() == -1);
    CHECK(read_counts(*w, 3) == U{0, 0, 0});
    CHECK(w->add(5000, 2, 4) == AddResult::Added);
    CHECK(read_counts(*w, 3) == U{0, 0, 4});
    CHECK(w->quiet());
    CHECK(mem.back() == ~uint64_t{0});  // nothing written past window_bytes_at()
    if (mode == Mode::Efficient) {
      auto* e = dynamic_cast<EfficientWindow*>(w);
      REQUIRE(e != nullptr);
      CHECK(e->stripes() == 2);
      CHECK_FALSE(e->contended());
    } else {
      CHECK(dynamic_cast<AccurateWindow*>(w) != nullptr);
    }
    w->~Window();
  }
}

TEST_CASE("window: make_window picks the mode") {
  auto a = make_window(Mode::Accurate, WindowSpec{1000, 10, 1});
  auto e = make_window(Mode::Efficient, WindowSpec{1000, 10, 1}, 4);
  CHECK(dynamic_cast<AccurateWindow*>(a.get()) != nullptr);
  auto* ew = dynamic_cast<EfficientWindow*>(e.get());
  REQUIRE(ew != nullptr);
  CHECK(ew->stripes() == 4);
  CHECK_FALSE(ew->contended());
}

// ---------------------------------------------------------------------------
// Differential: seeded random operations through both modes and the model.

namespace {

struct Gen {
  std::mt19937_64 rng;
  int64_t now = 0;
  uint64_t r(uint64_t n) { return n == 0 ? 0 : rng() % n; }
  // Next line time: mostly forward, some small steps back, late lines, jumps.
  int64_t next_time(const WindowSpec& s) {
    const int64_t X = s.length_ms();
    const uint64_t k = r(100);
    int64_t t;
    if (k < 60) t = now + static_cast<int64_t>(r(static_cast<uint64_t>(2 * s.width_ms)));
    else if (k < 75) t = now - static_cast<int64_t>(r(static_cast<uint64_t>(X)));          // back, mostly in window
    else if (k < 85) t = now - X - static_cast<int64_t>(r(static_cast<uint64_t>(3 * X)));  // late
    else if (k < 95) t = now + X + static_cast<int64_t>(r(static_cast<uint64_t>(3 * X)));  // jump past the window
    else if (k < 98) t = now + (int64_t{1} << (31 + r(3))) * s.width_ms / (s.width_ms > 1000 ? 1000 : 1);
    else t = now;
    if (t < 0) t = 0;
    now = std::max(now, t);
    return t;
  }
};

struct RatioCond final : Condition {
  bool holds(std::span<const uint64_t> c) const override {
    if (c.size() < 2) return !c.empty() && c[0] >= 2;
    return c[0] >= 2 && c[1] * 3 >= c[0];
  }
};

void check_same(const ThrottleOutcome& m, const ThrottleOutcome& o) {
  CHECK(o.passed == m.passed);
  CHECK(o.late == m.late);
  CHECK(o.now_ms == m.now_ms);
  CHECK(o.summary.suppressed == m.summary.suppressed);
  if (m.summary.suppressed != 0) {
    CHECK(o.summary.first_ms == m.summary.first_ms);
    CHECK(o.summary.last_ms == m.summary.last_ms);
  }
}

// A clear condition for hysteresis: the sum of the counts is at most y.
struct AtMost final : Condition {
  explicit AtMost(uint64_t at_most) : y(at_most) {}
  bool holds(std::span<const uint64_t> c) const override {
    uint64_t sum = 0;
    for (uint64_t v : c) sum += v;
    return sum <= y;
  }
  uint64_t y;
};

void check_same(const AlertOutcome& m, const AlertOutcome& o) {
  CHECK(o.action == m.action);
  CHECK(o.late == m.late);
  CHECK(o.holds == m.holds);
  CHECK(o.firing == m.firing);
  CHECK(o.suppressed == m.suppressed);
  CHECK(o.now_ms == m.now_ms);
}

}  // namespace

TEST_CASE("window: differential against the reference model") {
  const uint64_t base = swthrottle::test::base_seed(20261121);
  MESSAGE("differential base seed " << base << " (replay: SWTHROTTLE_SEED=" << base << ")");
  const int64_t widths[] = {1, 7, 1000};
  const uint32_t bucket_counts[] = {1, 2, 3, 10};
  for (uint64_t i = 0; i < 240; ++i) {
    const uint64_t seed = base + i;
    INFO("seed " << seed);
    Gen g{std::mt19937_64(seed)};
    WindowSpec spec{widths[g.r(3)], bucket_counts[g.r(4)], static_cast<uint32_t>(1 + g.r(3))};
    // Half of the windows also keep the previous window (previous()): their
    // reads and conditions see 2E counts; throttles must not notice.
    spec.previous = (seed / 3) % 2;
    const uint32_t width = spec.counts_width();
    WindowModel model(spec);
    AccurateWindow acc(spec);
    EfficientWindow eff(spec, 4);
    const int kind = static_cast<int>(seed % 3);  // 0 count, 1 throttle, 2 alert
    const uint64_t limit = std::array<uint64_t, 4>{1, 2, 5, 1000}[g.r(4)];
    AtLeast at_least(limit);
    RatioCond ratio;
    const int64_t cooldowns[] = {0, spec.width_ms, spec.length_ms(), 3 * spec.length_ms()};
    AlertPolicy policy{g.r(2) ? static_cast<const Condition*>(&at_least) : &ratio, cooldowns[g.r(4)], g.r(2) == 1};
    // resolve_when in a third of the runs: clear only at half the limit or less.
    AtMost at_most(limit / 2);
    if (g.r(3) == 0) policy.clear = &at_most;
    // Per-event tallies of suppressed lines in half of the throttle runs.
    const uint32_t tallied = g.r(2) == 0 ? spec.events : 0;
    g.now = static_cast<int64_t>(g.r(1u << 20));
    for (int op = 0; op < 300; ++op) {
      INFO("op " << op);
      const int64_t t = g.next_time(spec);
      const int64_t now = g.now;
      if (kind == 0) {
        const auto e = static_cast<uint32_t>(g.r(spec.events));
        const AddResult r = model.add(t, e);
        CHECK(acc.add(t, e) == r);
        CHECK(eff.add(t, e) == r);
        if (g.r(4) == 0) {
          model.advance(now);
          acc.advance(now);
          eff.advance(now);
        }
        const U want = model.counts();
        CHECK(read_counts(acc, width) == want);
        CHECK(read_counts(eff, width) == want);
      } else if (kind == 1) {
        // A summary's per-event counts, or the sentinel where none was taken.
        U cm(tallied, 77), ca(tallied, 77), ce(tallied, 77);
        if (g.r(8) == 0) {
          const Summary m = model.tick_throttle(now, limit, cm);
          const Summary a = acc.tick_throttle(now, limit, ca);
          const Summary e = eff.tick_throttle(now, limit, ce);
          check_same(ThrottleOutcome{false, false, 0, m}, ThrottleOutcome{false, false, 0, a});
          check_same(ThrottleOutcome{false, false, 0, m}, ThrottleOutcome{false, false, 0, e});
        } else {
          const LineEvents ev{1 + g.r((uint64_t{1} << spec.events) - 1), tallied};
          const ThrottleOutcome m = model.offer_throttle(t, now, limit, ev, cm);
          check_same(m, acc.offer_throttle(t, now, limit, 0, ev, ca));
          check_same(m, eff.offer_throttle(t, now, limit, 0, ev, ce));
        }
        CHECK(ca == cm);
        CHECK(ce == cm);
      } else {
        U cm, ca(width), ce(width);
        if (g.r(6) == 0) {
          const AlertOutcome m = model.tick_alert(now, policy, cm);
          check_same(m, acc.tick_alert(now, policy, ca));
          check_same(m, eff.tick_alert(now, policy, ce));
        } else {
          const uint64_t mask = 1 + g.r((uint64_t{1} << spec.events) - 1);
          const AlertOutcome m = model.offer_alert(t, now, mask, policy, cm);
          check_same(m, acc.offer_alert(t, now, mask, policy, ca));
          check_same(m, eff.offer_alert(t, now, mask, policy, ce));
        }
        CHECK(ca == cm);
        CHECK(ce == cm);
      }
      CHECK(acc.now_ms() == model.now_ms());
      CHECK(eff.now_ms() == model.now_ms());
    }
    if (kind == 1) {
      U cm(tallied, 77), ca(tallied, 77), ce(tallied, 77);
      const Summary m = model.take_pending(cm), a = acc.take_pending(ca), e = eff.take_pending(ce);
      CHECK(a.suppressed == m.suppressed);
      CHECK(e.suppressed == m.suppressed);
      CHECK(ca == cm);
      CHECK(ce == cm);
    }
  }
}

TEST_CASE("window: save and load continue exactly, in either mode") {
  const uint64_t base = swthrottle::test::base_seed(4242);
  MESSAGE("save/load base seed " << base);
  for (uint64_t i = 0; i < 90; ++i) {
    const uint64_t seed = base + i;
    INFO("seed " << seed);
    Gen g{std::mt19937_64(seed)};
    WindowSpec spec{std::array<int64_t, 3>{1, 7, 1000}[g.r(3)], std::array<uint32_t, 3>{1, 3, 10}[g.r(3)],
                    static_cast<uint32_t>(1 + g.r(2))};
    const int kind = static_cast<int>(seed % 2);       // 0 throttle, 1 alert
    spec.previous = kind == 1 && (seed / 2) % 2 == 1;  // the previous window is saved and loaded too
    const uint64_t limit = std::array<uint64_t, 3>{1, 3, 8}[g.r(3)];
    AtLeast at_least(limit);
    AlertPolicy policy{&at_least, std::array<int64_t, 3>{0, spec.length_ms(), 5 * spec.length_ms()}[g.r(3)], true};
    AtMost at_most(limit / 2);  // resolve_when in half the runs: a firing state carried between thresholds
    if (g.r(2) == 0) policy.clear = &at_most;
    WindowModel model(spec);
    std::unique_ptr<Window> a = make_window(Mode::Accurate, spec);
    std::unique_ptr<Window> e = make_window(Mode::Efficient, spec, 2);
    g.now = static_cast<int64_t>(g.r(1u << 20));
    for (int op = 0; op < 200; ++op) {
      INFO("op " << op);
      if (op % 50 == 49) {  // a new run: state saved, loaded into fresh windows (modes swapped)
        WindowState sa = a->save(), se = e->save();
        CHECK(sa.buckets.size() == se.buckets.size());
        CHECK(sa.pending.suppressed == se.pending.suppressed);
        CHECK(sa.pending_counts == se.pending_counts);
        CHECK(sa.alert_suppressed == se.alert_suppressed);
        auto a2 = make_window(Mode::Efficient, spec, 2);
        auto e2 = make_window(Mode::Accurate, spec);
        a2->load(sa);
        e2->load(se);
        a = std::move(a2);
        e = std::move(e2);
      }
      const int64_t t = g.next_time(spec);
      const int64_t now = g.now;
      if (kind == 0) {
        const LineEvents ev{1 + g.r((uint64_t{1} << spec.events) - 1), spec.events};
        U cm(spec.events, 77), ca(spec.events, 77), ce(spec.events, 77);
        const ThrottleOutcome m = model.offer_throttle(t, now, limit, ev, cm);
        check_same(m, a->offer_throttle(t, now, limit, 0, ev, ca));
        check_same(m, e->offer_throttle(t, now, limit, 0, ev, ce));
        CHECK(ca == cm);
        CHECK(ce == cm);
      } else {
        U cm, ca(spec.counts_width()), ce(spec.counts_width());
        const uint64_t mask = 1 + g.r((uint64_t{1} << spec.events) - 1);
        const AlertOutcome m = model.offer_alert(t, now, mask, policy, cm);
        check_same(m, a->offer_alert(t, now, mask, policy, ca));
        check_same(m, e->offer_alert(t, now, mask, policy, ce));
        CHECK(ca == cm);
        CHECK(ce == cm);
      }
    }
  }
}

TEST_CASE("window: a window built in place decides as one of its own") {
  const uint64_t base = swthrottle::test::base_seed(777);
  MESSAGE("in-place base seed " << base);
  for (uint64_t i = 0; i < 60; ++i) {
    const uint64_t seed = base + i;
    INFO("seed " << seed);
    Gen g{std::mt19937_64(seed)};
    const WindowSpec spec{std::array<int64_t, 3>{1, 7, 1000}[g.r(3)], std::array<uint32_t, 3>{1, 3, 10}[g.r(3)],
                          static_cast<uint32_t>(1 + g.r(3))};
    const Mode mode = seed % 2 == 0 ? Mode::Accurate : Mode::Efficient;
    const bool throttle = g.r(2) == 0;
    const uint64_t limit = std::array<uint64_t, 3>{1, 3, 8}[g.r(3)];
    AtLeast at_least(limit);
    const AlertPolicy policy{&at_least, spec.length_ms(), true};
    std::unique_ptr<Window> own = make_window(mode, spec, 2);
    std::vector<uint64_t> mem(window_bytes_at(mode, spec) / 8);
    Window* at = make_window_at(mem.data(), mode, spec, 2);
    g.now = static_cast<int64_t>(g.r(1u << 20));
    for (int op = 0; op < 200; ++op) {
      INFO("op " << op);
      const int64_t t = g.next_time(spec);
      const int64_t now = g.now;
      U co(spec.events), ca(spec.events);
      if (throttle) {
        if (g.r(8) == 0) {
          const Summary so = own->tick_throttle(now, limit), sa = at->tick_throttle(now, limit);
          check_same(ThrottleOutcome{false, false, 0, so}, ThrottleOutcome{false, false, 0, sa});
        } else {
          check_same(own->offer_throttle(t, now, limit), at->offer_throttle(t, now, limit));
        }
      } else {
        const uint64_t mask = 1 + g.r((uint64_t{1} << spec.events) - 1);
        check_same(own->offer_alert(t, now, mask, policy, co), at->offer_alert(t, now, mask, policy, ca));
      }
      CHECK(read_counts(*own, spec.events) == read_counts(*at, spec.events));
      CHECK(own->quiet() == at->quiet());
      if (op % 40 == 39) {
        const WindowState so = own->save(), sa = at->save();
        CHECK(so.now_ms == sa.now_ms);
        CHECK(so.buckets.size() == sa.buckets.size());
        CHECK(so.pending.suppressed == sa.pending.suppressed);
        CHECK(so.alert_suppressed == sa.alert_suppressed);
        CHECK(so.firing == sa.firing);
      }
    }
    CHECK(own->take_pending().suppressed == at->take_pending().suppressed);
    at->~Window();
  }
}
