// CountProfile: what a backtest learns of a rule's window counts while the
// engine decides (engine/count_observer.h): the distribution of the count at
// the close of every bucket in which a key had an event, each key's peak,
// and the highest count per step of log time (the timeline). An alert rule
// is profiled on its own windows; a throttle, whose windows count only what
// passed, on its counting copy (backtest/sweep_plan.h), which counts every
// line it was offered.
//
// Bounded: a key's open bucket is kept only while that bucket is the
// newest; peaks are kept for at most kMaxKeys keys (past that, the half
// with the lowest peaks is forgotten, and a forgotten key starts again from
// its next count); the timeline has at most kMaxSeries points.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "backtest/key_table.h"
#include "backtest/report.h"
#include "backtest/sweep_plan.h"
#include "engine/count_observer.h"
#include "window/tiny_mutex.h"

namespace swthrottle::backtest {

class CountProfile final : public engine::CountObserver {
 public:
  static constexpr std::size_t kMaxKeys = 200'000;

  explicit CountProfile(const SweepPlan& plan);
  // `memo`: the engine's word for the key (see CountObserver): its index
  // among the profile's keys, plus one, checked against the key.
  void counted(uint32_t rule, std::string_view key, int64_t t_ms, uint64_t count,
               std::atomic<uint32_t>* memo = nullptr) override;
  bool observes(uint32_t rule) const override { return rule < profile_of_.size() && profile_of_[rule] >= 0; }
  // Prefetches the key's entry: the engine decides (a sweep's riders
  // included) while it comes in.
  void will_count(uint32_t rule, const std::atomic<uint32_t>& memo) override;

  // After the run: each result's distribution, top keys (at most `top`,
  // highest peak first) and series.
  void fill(std::vector<RuleResult>& results, std::size_t top);
  // The oldest time any profiled rule counted (-1: none).
  int64_t first_ms() const { return first_ms_; }

 private:
  static constexpr int64_t kClosed = INT64_MIN;
  // One key of one rule: its open bucket and its peak, found with one
  // lookup per counted line.
  struct KeyState {
    int64_t bucket = kClosed;  // the bucket whose close is not sampled yet (kClosed: none)
    uint64_t count = 0;        // the count after the key's last event in it
    uint64_t peak = 0;
    int64_t peak_t_ms = 0;
    uint64_t events = 0;
  };
  struct Profile {
    int64_t bucket_ms = 1;
    std::map<uint64_t, uint64_t> samples;  // count -> how many samples
    KeyTable<KeyState> keys;
    std::atomic<std::uintptr_t> entries_at{0};  // keys.entries().data(), read without mu_ by will_count()
    std::vector<uint32_t> open;                 // keys with an open bucket, by index
    int64_t newest_bucket = INT64_MIN;
    Series series;
  };
  void close_older(Profile& p, int64_t bucket);  // samples of every open bucket before `bucket`
  void forget_lowest(Profile& p);                // past kMaxKeys: the half with the lowest peaks
  static void add_to_series(Series& s, int64_t t_ms, uint64_t count);

  // Deciders of several inputs may count at once; one decider, the usual case,
  // finds it free: 4 bytes and one CAS (window/tiny_mutex.h).
  window::TinyMutex mu_;
  std::vector<int32_t> profile_of_;  // by engine rule: index into profiles_, or -1
  std::vector<Profile> profiles_;    // by result
  int64_t first_ms_ = -1;
};

}  // namespace swthrottle::backtest
