// clamp_future (state/clamp_future.h): a --state dated ahead of the wall
// clock is clamped, and its windows dated ahead start fresh.
#include "state/clamp_future.h"

#include <doctest/doctest.h>

namespace {

namespace sw = swthrottle;

constexpr int64_t kWall = 1'795'255'200'000;  // 2026-11-21T10:00:00Z
constexpr int64_t k2099 = 4'070'908'800'000;  // 2099-01-01T00:00:00Z

sw::engine::EngineState state(int64_t now, int64_t last_log, std::initializer_list<int64_t> window_nows) {
  sw::engine::EngineState st;
  st.now_ms = now;
  st.last_log_ms = last_log;
  sw::engine::RuleWindows rw;
  rw.rule = "burst";
  for (const int64_t n : window_nows) {
    sw::engine::RuleWindows::Keyed k;
    k.key = std::to_string(n);
    k.window.now_ms = n;
    rw.windows.push_back(k);
  }
  st.rules.push_back(rw);
  return st;
}

TEST_CASE("clamp_future: a state ahead of the wall clock is clamped and its future windows start fresh") {
  auto st = state(k2099, k2099, {kWall - 5000, k2099});
  CHECK(sw::state::clamp_future(st, kWall, 60'000) ==
        "its time 2099-01-01T00:00:00.000Z is more than 1m ahead of the wall clock (2026-11-21T10:00:00.000Z, "
        "setting max_future); clamped to the wall clock, 1 windows dated ahead of it start fresh");
  CHECK(st.now_ms == kWall);
  CHECK(st.last_log_ms == kWall);
  REQUIRE(st.rules[0].windows.size() == 1);
  CHECK(st.rules[0].windows[0].window.now_ms == kWall - 5000);
}

TEST_CASE("clamp_future: within the bound, or with the bound off, nothing changes") {
  for (const int64_t bound : {int64_t{60'000}, int64_t{-1}}) {
    CAPTURE(bound);
    auto st = state(kWall + 60'000, kWall - 1, {kWall + 60'000});
    CHECK(sw::state::clamp_future(st, kWall, bound).empty());
    CHECK(st.now_ms == kWall + 60'000);
    CHECK(st.last_log_ms == kWall - 1);
    CHECK(st.rules[0].windows.size() == 1);
  }
  auto off = state(k2099, -1, {k2099});
  CHECK(sw::state::clamp_future(off, kWall, -1).empty());
  CHECK(off.now_ms == k2099);
  // Only the last log time ahead: both are clamped, a -1 stays -1.
  auto log_only = state(-1, k2099, {});
  CHECK(!sw::state::clamp_future(log_only, kWall, 60'000).empty());
  CHECK(log_only.now_ms == -1);
  CHECK(log_only.last_log_ms == kWall);
}

}  // namespace
