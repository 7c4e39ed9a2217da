#include "backtest/count_profile.h"

#include <algorithm>
#include <cmath>

namespace swthrottle::backtest {

CountProfile::CountProfile(const SweepPlan& plan) : profile_of_(plan.slots.size(), -1), profiles_(plan.results.size()) {
  for (std::size_t r = 0; r < plan.slots.size(); ++r) {
    const PlanSlot& s = plan.slots[r];
    if (s.result == PlanSlot::kNone) continue;
    const bool throttle = plan.results[s.result].kind == config::RuleKind::Throttle;
    const bool profiled = throttle ? s.role == PlanSlot::Role::Counter : s.role == PlanSlot::Role::Rule;
    if (!profiled) continue;
    profile_of_[r] = static_cast<int32_t>(s.result);
    profiles_[s.result].bucket_ms = std::max<int64_t>(1, plan.results[s.result].bucket_ms);
    profiles_[s.result].series.step_ms = profiles_[s.result].bucket_ms;
  }
}

void CountProfile::will_count(uint32_t rule, const std::atomic<uint32_t>& memo) {
  if (rule >= profile_of_.size() || profile_of_[rule] < 0) return;
  const uint32_t m = memo.load(std::memory_order_relaxed);
  if (m == 0) return;
  const Profile& p = profiles_[static_cast<std::size_t>(profile_of_[rule])];
  // An address only: a stale table or index makes a useless fetch, never a read.
  const std::uintptr_t at = p.entries_at.load(std::memory_order_relaxed);
  if (at != 0) __builtin_prefetch(reinterpret_cast<const void*>(at + (m - 1) * sizeof(KeyTable<KeyState>::Entry)));
}

void CountProfile::counted(uint32_t rule, std::string_view key, int64_t t_ms, uint64_t count,
                           std::atomic<uint32_t>* memo) {
  if (rule >= profile_of_.size() || profile_of_[rule] < 0) return;
  std::lock_guard lock(mu_);
  if (first_ms_ < 0 || t_ms < first_ms_) first_ms_ = t_ms;
  Profile& p = profiles_[static_cast<std::size_t>(profile_of_[rule])];
  const int64_t bucket = t_ms / p.bucket_ms;
  if (bucket > p.newest_bucket) {
    // Buckets before this one are over for every key: their samples are
    // taken now, so that only the keys of the newest bucket stay open.
    close_older(p, bucket);
    p.newest_bucket = bucket;
  }
  // The memo is checked: forget_lowest() moves keys, and a key evicted
  // from the engine comes back with a word of 0.
  uint32_t index = 0;
  const uint32_t m = memo != nullptr ? memo->load(std::memory_order_relaxed) : 0;
  if (m != 0 && m <= p.keys.size() && p.keys.at(m - 1).key == key) {
    index = m - 1;
  } else {
    index = p.keys.find_or_add(key);
    p.entries_at.store(reinterpret_cast<std::uintptr_t>(p.keys.entries().data()), std::memory_order_relaxed);
    if (memo != nullptr) memo->store(index + 1, std::memory_order_relaxed);
  }
  KeyState& k = p.keys.at(index).value;
  if (k.bucket != bucket) {
    if (k.bucket != kClosed) {
      ++p.samples[k.count];  // a line older than its open bucket: that bucket closes here
    } else {
      p.open.push_back(index);
    }
    k.bucket = bucket;
  }
  k.count = count;
  ++k.events;
  if (count > k.peak) {
    k.peak = count;
    k.peak_t_ms = t_ms;
  }
  add_to_series(p.series, t_ms, count);
  if (p.keys.size() > kMaxKeys) forget_lowest(p);
}

void CountProfile::close_older(Profile& p, int64_t bucket) {
  std::size_t kept = 0;
  for (uint32_t index : p.open) {
    KeyState& k = p.keys.at(index).value;
    if (k.bucket < bucket) {
      ++p.samples[k.count];
      k.bucket = kClosed;
    } else {
      p.open[kept++] = index;
    }
  }
  p.open.resize(kept);
}

void CountProfile::forget_lowest(Profile& p) {
  // Every open bucket is sampled first: the indices into `keys` change.
  close_older(p, INT64_MAX);
  std::vector<std::pair<uint64_t, uint32_t>> by_peak;  // peak, index
  by_peak.reserve(p.keys.size());
  for (std::size_t i = 0; i < p.keys.size(); ++i)
    by_peak.emplace_back(p.keys.entries()[i].value.peak, static_cast<uint32_t>(i));
  const std::size_t keep = kMaxKeys / 2;
  std::nth_element(by_peak.begin(), by_peak.begin() + static_cast<std::ptrdiff_t>(keep), by_peak.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<bool> kept(p.keys.size(), false);
  for (std::size_t i = 0; i < keep && i < by_peak.size(); ++i) kept[by_peak[i].second] = true;
  const auto* first = p.keys.entries().data();
  p.keys.keep_only([&](const auto& e) { return kept[static_cast<std::size_t>(&e - first)]; });
  p.entries_at.store(reinterpret_cast<std::uintptr_t>(p.keys.entries().data()), std::memory_order_relaxed);
}

void CountProfile::add_to_series(Series& s, int64_t t_ms, uint64_t count) {
  if (s.max.empty()) {
    s.start_ms = t_ms - t_ms % s.step_ms;
    s.max.push_back(count);
    return;
  }
  int64_t i = t_ms < s.start_ms ? 0 : (t_ms - s.start_ms) / s.step_ms;
  while (i >= static_cast<int64_t>(kMaxSeries)) {
    // Twice the step: neighbours merged by their maximum.
    std::vector<uint64_t> merged((s.max.size() + 1) / 2);
    for (std::size_t j = 0; j < s.max.size(); ++j) merged[j / 2] = std::max(merged[j / 2], s.max[j]);
    s.max = std::move(merged);
    s.step_ms *= 2;
    i = (t_ms - s.start_ms) / s.step_ms;
  }
  if (static_cast<std::size_t>(i) >= s.max.size()) s.max.resize(static_cast<std::size_t>(i) + 1, 0);
  s.max[static_cast<std::size_t>(i)] = std::max(s.max[static_cast<std::size_t>(i)], count);
}

namespace {

// Nearest rank: the smallest count with at least q of the samples at or below it.
uint64_t percentile(const std::map<uint64_t, uint64_t>& samples, uint64_t total, double q) {
  const auto rank = static_cast<uint64_t>(std::max<double>(1, std::ceil(q * static_cast<double>(total))));
  uint64_t seen = 0;
  for (const auto& [count, n] : samples) {
    seen += n;
    if (seen >= rank) return count;
  }
  return samples.empty() ? 0 : samples.rbegin()->first;
}

}  // namespace

void CountProfile::fill(std::vector<RuleResult>& results, std::size_t top) {
  std::lock_guard lock(mu_);
  for (std::size_t r = 0; r < results.size() && r < profiles_.size(); ++r) {
    Profile& p = profiles_[r];
    close_older(p, INT64_MAX);
    Distribution& d = results[r].distribution;
    d = {};
    for (const auto& [count, n] : p.samples) d.samples += n;
    if (d.samples > 0) {
      d.max = p.samples.rbegin()->first;
      d.p50 = percentile(p.samples, d.samples, 0.50);
      d.p90 = percentile(p.samples, d.samples, 0.90);
      d.p99 = percentile(p.samples, d.samples, 0.99);
    }
    results[r].series = p.series;
    if (!results[r].keyed) continue;
    std::vector<KeyPeak> peaks;
    peaks.reserve(p.keys.size());
    for (const auto& [name, k] : p.keys.entries()) peaks.push_back(KeyPeak{name, k.peak, k.peak_t_ms, k.events, 0});
    std::sort(peaks.begin(), peaks.end(),
              [](const KeyPeak& a, const KeyPeak& b) { return a.peak != b.peak ? a.peak > b.peak : a.key < b.key; });
    if (peaks.size() > top) peaks.resize(top);
    results[r].top_keys = std::move(peaks);
  }
}

}  // namespace swthrottle::backtest
