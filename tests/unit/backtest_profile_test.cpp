// CountProfile (backtest/count_profile.h): what a backtest learns of a
// rule's window counts, driven here as the engine drives it (counted()).
#include "backtest/count_profile.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backtest/report.h"
#include "backtest/sweep_plan.h"
#include "config/rules.h"

namespace {

using swthrottle::backtest::CountProfile;
using swthrottle::backtest::kMaxSeries;
using swthrottle::backtest::plan_sweep;
using swthrottle::backtest::RuleResult;
using swthrottle::backtest::SweepPlan;
using swthrottle::backtest::SweepRequest;

// keyed: 1m in 10 buckets (6 s each); plain: 1m, no key; flood: a throttle,
// 10s in 10 buckets, profiled on its counting copy (rule 3).
const char* const kRules = R"toml(
[[rule]]
name = "keyed"
kind = "alert"
threshold = "5 per 1m"
key = "{ip}"
  [[rule.event]]
  name = "e"
  match = 'from (?P<ip>\S+)'

[[rule]]
name = "plain"
kind = "alert"
threshold = "5 per 1m"
  [[rule.event]]
  name = "e"
  match = 'x'

[[rule]]
name = "flood"
kind = "throttle"
threshold = "100 per 10s"
  [[rule.event]]
  name = "e"
  match = 'y'
)toml";

constexpr uint32_t kKeyed = 0, kPlain = 1, kFlood = 2, kFloodCounter = 3;
constexpr int64_t kBucket = 6'000;

SweepPlan plan() {
  auto rules = swthrottle::config::parse_rules(kRules, "rules.toml");
  REQUIRE_MESSAGE(rules.ok(), (rules.ok() ? std::string() : rules.error().str()));
  auto p = plan_sweep(std::move(*rules), {}, SweepRequest{});
  REQUIRE(p.ok());
  REQUIRE(p->rules.rules.size() == 4);
  REQUIRE(p->rules.rules[kFloodCounter].name == "flood@offered");
  return std::move(*p);
}

struct Profiled {
  SweepPlan plan_ = plan();
  CountProfile profile{plan_};
  std::vector<RuleResult> fill(std::size_t top = 5) {
    std::vector<RuleResult> results = plan_.results;
    profile.fill(results, top);
    return results;
  }
};

TEST_CASE("backtest profile: one sample per key and bucket with an event, its count at the bucket's close") {
  Profiled p;
  // Key A: three events in bucket 0, then one in bucket 5 (the window moved on).
  p.profile.counted(kKeyed, "A", 0, 1);
  p.profile.counted(kKeyed, "A", 1'000, 2);
  p.profile.counted(kKeyed, "A", 2'000, 3);
  p.profile.counted(kKeyed, "A", 5 * kBucket, 1);
  const auto d = p.fill()[kKeyed].distribution;
  CHECK(d.samples == 2);  // {3, 1}
  CHECK(d.max == 3);
  CHECK(d.p50 == 1);
  CHECK(d.p90 == 3);
  CHECK(d.p99 == 3);
}

TEST_CASE("backtest profile: keys are sampled apart") {
  Profiled p;
  p.profile.counted(kKeyed, "A", 0, 1);
  p.profile.counted(kKeyed, "B", 500, 1);
  p.profile.counted(kKeyed, "A", 1'000, 2);
  p.profile.counted(kKeyed, "B", kBucket + 1, 2);  // B's bucket 0 closed at 1
  p.profile.counted(kKeyed, "A", 2 * kBucket, 4);  // A's bucket 0 closed at 2
  p.profile.counted(kKeyed, "B", 2 * kBucket + 5, 3);
  // Samples: A {2, 4}, B {1, 2, 3}.
  const auto d = p.fill()[kKeyed].distribution;
  CHECK(d.samples == 5);
  CHECK(d.max == 4);
  CHECK(d.p50 == 2);  // sorted 1 2 2 3 4: rank 3
  CHECK(d.p90 == 4);
  CHECK(p.profile.first_ms() == 0);
}

TEST_CASE("backtest profile: percentiles are nearest-rank") {
  Profiled p;
  // One key, one event per bucket, counts 1..100 (each its own sample).
  for (int64_t i = 0; i < 100; ++i) p.profile.counted(kPlain, "", i * kBucket, static_cast<uint64_t>(i + 1));
  const auto d = p.fill()[kPlain].distribution;
  CHECK(d.samples == 100);
  CHECK(d.max == 100);
  CHECK(d.p50 == 50);
  CHECK(d.p90 == 90);
  CHECK(d.p99 == 99);

  Profiled q;
  for (int64_t i = 0; i < 10; ++i) q.profile.counted(kPlain, "", i * kBucket, static_cast<uint64_t>(10 - i));
  const auto e = q.fill()[kPlain].distribution;
  CHECK(e.samples == 10);
  CHECK(e.p50 == 5);
  CHECK(e.p90 == 9);
  CHECK(e.p99 == 10);
}

TEST_CASE("backtest profile: nothing counted") {
  Profiled p;
  const auto results = p.fill();
  CHECK(results[kKeyed].distribution.samples == 0);
  CHECK(results[kKeyed].distribution.max == 0);
  CHECK(results[kKeyed].distribution.p50 == 0);
  CHECK(results[kKeyed].top_keys.empty());
  CHECK(results[kKeyed].series.max.empty());
  CHECK(p.profile.first_ms() == -1);
}

TEST_CASE("backtest profile: only each result's profiled rule counts") {
  Profiled p;
  // A throttle's own windows count only what passed: its counter is profiled, not it.
  p.profile.counted(kFlood, "", 0, 50);
  p.profile.counted(kFloodCounter, "", 0, 7);
  p.profile.counted(kFloodCounter, "", 1'000, 9);
  p.profile.counted(99, "", 0, 1000);  // no such rule
  const auto results = p.fill();
  const auto& flood = results[kFlood];
  CHECK(flood.distribution.samples == 2);
  CHECK(flood.distribution.max == 9);
  CHECK(flood.series.step_ms == 1'000);
  CHECK(flood.series.max == std::vector<uint64_t>{7, 9});
  CHECK(results[kKeyed].distribution.samples == 0);
  CHECK(results[kPlain].distribution.samples == 0);
  CHECK(flood.top_keys.empty());  // not keyed
}

TEST_CASE("backtest profile: each key's peak, and the top keys highest first") {
  Profiled p;
  p.profile.counted(kKeyed, "low", 0, 1);
  p.profile.counted(kKeyed, "high", 1'000, 4);
  p.profile.counted(kKeyed, "high", 2'000, 9);
  p.profile.counted(kKeyed, "high", 30'000, 9);  // the peak again: its first time stays
  p.profile.counted(kKeyed, "high", 31'000, 2);
  p.profile.counted(kKeyed, "mid-b", 3'000, 5);
  p.profile.counted(kKeyed, "mid-a", 4'000, 5);
  p.profile.counted(kKeyed, "mid-a", 5'000, 3);
  const auto all = p.fill(10)[kKeyed].top_keys;
  REQUIRE(all.size() == 4);
  CHECK(all[0].key == "high");
  CHECK(all[0].peak == 9);
  CHECK(all[0].peak_t_ms == 2'000);
  CHECK(all[0].events == 4);
  CHECK(all[1].key == "mid-a");  // equal peaks: by key
  CHECK(all[1].peak == 5);
  CHECK(all[1].peak_t_ms == 4'000);
  CHECK(all[1].events == 2);
  CHECK(all[2].key == "mid-b");
  CHECK(all[3].key == "low");
  CHECK(all[3].peak == 1);

  Profiled q;
  q.profile.counted(kKeyed, "a", 0, 1);
  q.profile.counted(kKeyed, "b", 0, 3);
  q.profile.counted(kKeyed, "c", 0, 2);
  const auto top2 = q.fill(2)[kKeyed].top_keys;
  REQUIRE(top2.size() == 2);
  CHECK(top2[0].key == "b");
  CHECK(top2[1].key == "c");
  // A rule without key lists none.
  Profiled r;
  r.profile.counted(kPlain, "", 0, 3);
  CHECK(r.fill()[kPlain].top_keys.empty());
}

TEST_CASE("backtest profile: the series, the highest count per bucket of time") {
  Profiled p;
  p.profile.counted(kKeyed, "A", 7'000, 2);
  p.profile.counted(kKeyed, "B", 8'000, 5);
  p.profile.counted(kKeyed, "A", 11'000, 3);
  p.profile.counted(kKeyed, "A", 13'000, 1);
  p.profile.counted(kKeyed, "B", 31'000, 4);
  const auto s = p.fill()[kKeyed].series;
  CHECK(s.start_ms == 6'000);
  CHECK(s.step_ms == kBucket);
  CHECK(s.max == std::vector<uint64_t>{5, 1, 0, 0, 4});
}

TEST_CASE("backtest profile: a long series is merged pairwise, keeping the highest") {
  Profiled p;
  std::vector<uint64_t> counts;
  for (int64_t i = 0; i < static_cast<int64_t>(kMaxSeries); ++i) {
    counts.push_back(static_cast<uint64_t>((i * 7919) % 101));
    p.profile.counted(kPlain, "", i * kBucket, counts.back());
  }
  {
    const auto s = p.fill()[kPlain].series;
    CHECK(s.step_ms == kBucket);
    CHECK(s.max == counts);
  }
  // One step past kMaxSeries: twice the step, half the points.
  p.profile.counted(kPlain, "", static_cast<int64_t>(kMaxSeries) * kBucket, 1'000);
  const auto s = p.fill()[kPlain].series;
  CHECK(s.start_ms == 0);
  CHECK(s.step_ms == 2 * kBucket);
  REQUIRE(s.max.size() == kMaxSeries / 2 + 1);
  for (std::size_t k = 0; k < kMaxSeries / 2; ++k) {
    CAPTURE(k);
    CHECK(s.max[k] == std::max(counts[2 * k], counts[2 * k + 1]));
  }
  CHECK(s.max.back() == 1'000);

  // Far later: doubled as often as it takes.
  Profiled q;
  q.profile.counted(kPlain, "", 0, 3);
  q.profile.counted(kPlain, "", 5'000 * kBucket, 4);
  const auto f = q.fill()[kPlain].series;
  CHECK(f.step_ms == 4 * kBucket);
  CHECK(f.max.size() <= kMaxSeries);
  REQUIRE(f.max.size() == 1'251);
  CHECK(f.max.front() == 3);
  CHECK(f.max.back() == 4);
}

TEST_CASE("backtest profile: past kMaxKeys, the keys with the lowest peaks are forgotten") {
  Profiled p;
  constexpr std::size_t n = CountProfile::kMaxKeys + 1;
  auto key = [](std::size_t i) { return "k" + std::to_string(i); };
  for (std::size_t i = 0; i < n; ++i) p.profile.counted(kKeyed, key(i), 0, i + 1);
  // A forgotten key starts again from its next count.
  p.profile.counted(kKeyed, key(0), 1'000, 7);
  const auto top = p.fill(n)[kKeyed].top_keys;
  REQUIRE(top.size() == CountProfile::kMaxKeys / 2 + 1);
  CHECK(top.front().key == key(n - 1));
  CHECK(top.front().peak == n);
  // The half kept: the highest peaks, down to n - kMaxKeys / 2 + 1.
  const auto k0 = std::find_if(top.begin(), top.end(), [&](const auto& k) { return k.key == key(0); });
  REQUIRE(k0 != top.end());
  CHECK(k0->peak == 7);
  CHECK(k0->events == 1);
  CHECK(k0->peak_t_ms == 1'000);
  CHECK(k0 == top.end() - 1);
  CHECK((top.end() - 2)->peak == n - CountProfile::kMaxKeys / 2 + 1);
  CHECK(std::none_of(top.begin(), top.end(), [&](const auto& k) { return k.key == key(1); }));
}

}  // namespace
