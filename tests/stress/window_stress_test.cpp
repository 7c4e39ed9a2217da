// Concurrency of both window modes, for the ThreadSanitizer build: fixed
// iteration counts, a std::latch start, no timing assertions (DESIGN.md §2-§3).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <latch>
#include <map>
#include <mutex>
#include <random>
#include <span>
#include <thread>
#include <vector>

#include "support/seed.h"
#include "window/core.h"

using namespace swthrottle::window;

namespace {

constexpr int kThreads = 4;

template <typename F>
void run_threads(int n, F&& body) {
  std::latch start(n);
  std::vector<std::thread> ts;
  for (int i = 0; i < n; ++i) {
    ts.emplace_back([&, i] {
      start.arrive_and_wait();
      body(i);
    });
  }
  for (auto& t : ts) t.join();
}

// A window of its own (make_window), or one built into memory of ours, its
// counters right after it, as engine::KeyMap builds a key's (make_window_at).
struct Release {
  bool in_place = false;
  void operator()(Window* w) const {
    if (!in_place) {
      delete w;
      return;
    }
    w->~Window();
    ::operator delete(static_cast<void*>(w));
  }
};
using WindowPtr = std::unique_ptr<Window, Release>;

WindowPtr make(bool accurate, const WindowSpec& s, bool in_place) {
  const Mode m = accurate ? Mode::Accurate : Mode::Efficient;
  const uint32_t stripes = accurate ? 0 : 4;
  if (!in_place) return WindowPtr(make_window(m, s, stripes).release(), Release{false});
  return WindowPtr(make_window_at(::operator new(window_bytes_at(m, s)), m, s, stripes), Release{true});
}

}  // namespace

TEST_CASE("stress: no add is lost (both modes), with time advancing and jitter") {
  const uint64_t base = swthrottle::test::base_seed(7);
  for (bool accurate : {false, true}) {
    for (int round = 0; round < 8; ++round) {
      const WindowSpec spec{10, 8, 2};
      auto w = make(accurate, spec, round % 2 == 1);
      std::atomic<int64_t> clock{0};
      std::vector<std::map<int64_t, uint64_t>> accepted(kThreads);  // per thread: bucket*2+event -> adds
      run_threads(kThreads, [&](int id) {
        std::mt19937_64 rng(base + round * 100 + id);
        for (int i = 0; i < 20000; ++i) {
          int64_t t = clock.fetch_add(1, std::memory_order_relaxed) / 16;
          t -= static_cast<int64_t>(rng() % 120);  // jitter back: some in window, some late
          if (t < 0) t = 0;
          const auto e = static_cast<uint32_t>(rng() % 2);
          if (w->add(t, e) == AddResult::Added) ++accepted[id][bucket_of(t, spec) * 2 + e];
        }
      });
      const int64_t now_b = bucket_of(w->now_ms(), spec);
      std::vector<uint64_t> want(2, 0), got(2, 0);
      for (const auto& m : accepted)
        for (const auto& [k, n] : m)
          if (in_window(k / 2, now_b, spec)) want[k % 2] += n;
      w->read(got);
      CAPTURE(accurate);
      CAPTURE(round);
      CHECK(got == want);
      CHECK(want[0] + want[1] > 0);
    }
  }
}

TEST_CASE("stress: throttle passes min(Y, offered) exactly (accurate), within Y+T-1 (efficient)") {
  for (uint64_t limit : {1u, 7u, 100u, 5000u}) {
    for (bool accurate : {true, false}) {
      const WindowSpec spec{1000, 10, 1};
      auto w = make(accurate, spec, limit % 2 == 1);
      constexpr int kOffers = 1000;
      std::atomic<uint64_t> passed{0}, reported{0};
      run_threads(kThreads, [&](int) {
        uint64_t p = 0, r = 0;
        for (int i = 0; i < kOffers; ++i) {
          ThrottleOutcome o = w->offer_throttle(5000, 5000, limit);  // one bucket: one window position
          if (o.passed) ++p;
          r += o.summary.suppressed;
        }
        passed += p;
        reported += r;
      });
      const uint64_t offered = kThreads * kOffers;
      const uint64_t exact = std::min<uint64_t>(limit, offered);
      CAPTURE(limit);
      CAPTURE(accurate);
      if (accurate) {
        CHECK(passed == exact);
      } else {
        CHECK(passed >= exact);
        CHECK(passed <= limit + kThreads - 1);
      }
      // Every suppressed line is reported exactly once, in some summary.
      reported += w->take_pending().suppressed;
      CHECK(passed + reported == offered);
    }
  }
}

TEST_CASE("stress: per-event counts of summaries add up to the suppressed lines' events, event by event") {
  for (uint64_t limit : {1u, 100u}) {
    for (bool accurate : {true, false}) {
      const WindowSpec spec{1000, 10, 1};
      auto w = make(accurate, spec, limit % 2 == 1);
      constexpr int kOffers = 1000;
      std::mutex mu;
      std::array<uint64_t, 2> suppressed{}, reported{};
      auto add = [](std::array<uint64_t, 2>& to, std::span<const uint64_t> counts) {
        for (std::size_t e = 0; e < counts.size() && e < 2; ++e) to[e] += counts[e];
      };
      run_threads(kThreads, [&](int t) {
        std::array<uint64_t, 2> mine{}, got{};
        for (int i = 0; i < kOffers; ++i) {
          const uint64_t mask = 1 + static_cast<uint64_t>((i + t) % 3);  // event 0, event 1, or both
          std::array<uint64_t, 2> counts{};
          ThrottleOutcome o = w->offer_throttle(5000, 5000, limit, 0, LineEvents{mask, 2}, counts);
          if (!o.passed) {
            if (mask & 1) ++mine[0];
            if (mask & 2) ++mine[1];
          }
          if (o.summary.suppressed != 0) add(got, counts);
        }
        std::lock_guard lock(mu);
        for (int e = 0; e < 2; ++e) {
          suppressed[e] += mine[e];
          reported[e] += got[e];
        }
      });
      std::array<uint64_t, 2> counts{};
      if (w->take_pending(counts).suppressed != 0) add(reported, counts);
      CAPTURE(limit);
      CAPTURE(accurate);
      CHECK(reported == suppressed);
      CHECK(suppressed[0] + suppressed[1] > 0);
    }
  }
}

TEST_CASE("stress: an alert crossing is reported exactly once, and its resolve once") {
  for (bool accurate : {true, false}) {
    for (int round = 0; round < 20; ++round) {
      const WindowSpec spec{1000, 10, 1};
      auto w = make(accurate, spec, round % 2 == 1);
      AtLeast fifty(50);
      AlertPolicy p{&fifty, 3600000, true};
      std::atomic<int> alerts{0}, resolves{0};
      std::atomic<uint64_t> suppressed{0};
      run_threads(kThreads, [&](int) {
        std::vector<uint64_t> c(1);
        for (int i = 0; i < 200; ++i) {
          AlertOutcome o = w->offer_alert(1000, 1000, 1, p, c);
          if (o.action == AlertAction::Alert) ++alerts;
          if (o.action == AlertAction::Resolved) ++resolves;
        }
      });
      CHECK(alerts == 1);
      CHECK(resolves == 0);
      run_threads(kThreads, [&](int) {
        std::vector<uint64_t> c(1);
        for (int i = 0; i < 50; ++i) {
          AlertOutcome o = w->tick_alert(20000 + i, p, c);
          if (o.action == AlertAction::Resolved) ++resolves;
          if (o.action == AlertAction::Alert) ++alerts;
        }
      });
      CAPTURE(accurate);
      CAPTURE(round);
      CHECK(alerts == 1);
      CHECK(resolves == 1);
      CHECK(w->quiet());
      (void)suppressed;
    }
  }
}

TEST_CASE("stress: at most one alert per cooldown, and every alert is reported once") {
  for (bool accurate : {true, false}) {
    const WindowSpec spec{100, 10, 1};
    auto w = make(accurate, spec, accurate);
    AtLeast two(2);
    AlertPolicy p{&two, 1000, false};
    std::vector<std::vector<int64_t>> alert_times(kThreads);
    // Each thread offers at t = 0, 10, 20, ...: the condition holds from the
    // second event on, so an alert is due whenever the cooldown has passed.
    run_threads(kThreads, [&](int id) {
      std::vector<uint64_t> c(1);
      for (int64_t t = 0; t < 10000; t += 10) {
        AlertOutcome o = w->offer_alert(t, t, 1, p, c);
        if (o.action == AlertAction::Alert) alert_times[id].push_back(o.now_ms);
      }
    });
    std::vector<int64_t> all;
    for (const auto& v : alert_times) all.insert(all.end(), v.begin(), v.end());
    std::sort(all.begin(), all.end());
    CAPTURE(accurate);
    REQUIRE(!all.empty());
    CHECK(all.size() <= 10);  // 0..9990 holds at most ten cooldowns of 1000 ms
    for (std::size_t i = 1; i < all.size(); ++i) CHECK(all[i] - all[i - 1] >= 1000);
  }
}
