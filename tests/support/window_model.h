// A deliberately naive reference model of one window, written straight from
// DESIGN.md §2-§3: a map from absolute bucket number to counts, no ring, no
// striping, no running totals. Differential tests run the same operations
// through AccurateWindow, EfficientWindow and this model and demand equality.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "window/window.h"

namespace swthrottle::test {

class WindowModel {
 public:
  explicit WindowModel(const window::WindowSpec& s) : spec_(s) {}

  void advance(int64_t t) {
    t = std::max<int64_t>(t, 0);
    now_ms_ = std::max(now_ms_, t);
    now_b_ = std::max(now_b_, t / spec_.width_ms);
  }
  bool late(int64_t b) const { return now_b_ >= 0 && b <= now_b_ - spec_.buckets; }

  // The window's E counts; with spec.previous, then the E counts of the B
  // buckets before the window (previous() in a rule's `when`).
  std::vector<uint64_t> counts() const {
    std::vector<uint64_t> c(spec_.counts_width(), 0);
    const int64_t B = spec_.buckets;
    for (const auto& [b, v] : buckets_) {
      std::size_t at = 0;
      if (b > now_b_) continue;
      if (b > now_b_ - B) at = 0;
      else if (spec_.previous && b > now_b_ - 2 * B) at = spec_.events;
      else continue;
      for (uint32_t e = 0; e < spec_.events; ++e) c[at + e] += v[e];
    }
    return c;
  }
  uint64_t total() const {
    const std::vector<uint64_t> c = counts();
    uint64_t s = 0;
    for (uint32_t e = 0; e < spec_.events; ++e) s += c[e];
    return s;
  }
  void put(int64_t b, uint32_t e) {
    auto& v = buckets_[b];
    v.resize(spec_.events, 0);
    ++v[e];
  }

  window::AddResult add(int64_t t, uint32_t e) {
    advance(t);
    const int64_t b = std::max<int64_t>(t, 0) / spec_.width_ms;
    if (late(b)) return window::AddResult::Late;
    put(b, e);
    return window::AddResult::Added;
  }

  // `ev`: the events of the line; a suppressed one counts in each of them
  // (Summary::counts has ev.of entries once any line tallied events).
  window::ThrottleOutcome offer_throttle(int64_t t, int64_t now, uint64_t limit, window::LineEvents ev = {},
                                         std::span<uint64_t> counts_out = {}) {
    advance(now);
    advance(t);
    window::ThrottleOutcome o;
    t = std::max<int64_t>(t, 0);
    int64_t b = t / spec_.width_ms, at = t;
    if (late(b)) {
      o.late = true;
      b = now_b_;
      at = now_ms_;
    }
    o.now_ms = now_ms_;
    if (total() < limit) {
      put(b, 0);
      o.passed = true;
      o.summary = take_pending(counts_out);
    } else {
      // The earliest and the latest decision times (window.h's Summary).
      if (pending_++ == 0) first_ = last_ = at;
      first_ = std::min(first_, at);
      last_ = std::max(last_, at);
      if (ev.of != 0) {
        pending_events_.resize(ev.of, 0);
        for (uint32_t e = 0; e < ev.of; ++e)
          if (ev.mask >> e & 1) ++pending_events_[e];
      }
    }
    return o;
  }
  window::Summary tick_throttle(int64_t now, uint64_t limit, std::span<uint64_t> counts_out = {}) {
    advance(now);
    if (pending_ == 0 || total() >= limit) return {};
    return take_pending(counts_out);
  }
  // counts_out: the summary's per-event counts when one is returned, zeros
  // for events never tallied; untouched otherwise.
  window::Summary take_pending(std::span<uint64_t> counts_out = {}) {
    window::Summary s;
    if (pending_ == 0) return s;
    s = {pending_, first_, last_};
    for (std::size_t e = 0; e < counts_out.size(); ++e)
      counts_out[e] = e < pending_events_.size() ? pending_events_[e] : 0;
    pending_ = 0;
    std::fill(pending_events_.begin(), pending_events_.end(), 0);
    return s;
  }

  window::AlertOutcome offer_alert(int64_t t, int64_t now, uint64_t mask, const window::AlertPolicy& p,
                                   std::vector<uint64_t>& counts_out) {
    advance(now);
    advance(t);
    window::AlertOutcome o;
    o.now_ms = now_ms_;
    const int64_t b = std::max<int64_t>(t, 0) / spec_.width_ms;
    if (late(b)) {
      o.late = true;
      o.firing = firing_;
      counts_out = counts();
      return o;
    }
    for (uint32_t e = 0; e < spec_.events; ++e)
      if (mask >> e & 1) put(b, e);
    counts_out = counts();
    o.holds = p.condition->holds(counts_out);
    if (o.holds) {
      if (!alerted_ || now_ms_ - last_alert_ >= p.cooldown_ms) {
        o.action = window::AlertAction::Alert;
        o.suppressed = suppressed_;
        suppressed_ = 0;
        alerted_ = true;
        announced_ = true;
        last_alert_ = now_ms_;
      } else {
        ++suppressed_;
        if (!firing_) announced_ = false;
      }
      firing_ = true;
    } else if (firing_ && clears(p, counts_out)) {
      if (announced_ && p.resolve) {
        o.action = window::AlertAction::Resolved;
        o.suppressed = suppressed_;
      }
      firing_ = announced_ = false;
    }
    o.firing = firing_;
    return o;
  }
  window::AlertOutcome tick_alert(int64_t now, const window::AlertPolicy& p, std::vector<uint64_t>& counts_out) {
    advance(now);
    window::AlertOutcome o;
    o.now_ms = now_ms_;
    counts_out = counts();
    if (!firing_) return o;
    o.holds = p.condition->holds(counts_out);
    if (!o.holds && clears(p, counts_out)) {
      if (announced_ && p.resolve) {
        o.action = window::AlertAction::Resolved;
        o.suppressed = suppressed_;
      }
      firing_ = announced_ = false;
    }
    o.firing = firing_;
    return o;
  }
  int64_t now_ms() const { return now_ms_; }

 private:
  // DESIGN.md §3 with resolve_when: a firing key whose condition is false stops
  // firing only where the clear condition (if any) holds.
  static bool clears(const window::AlertPolicy& p, const std::vector<uint64_t>& counts) {
    return p.clear == nullptr || p.clear->holds(counts);
  }

  window::WindowSpec spec_;
  int64_t now_ms_ = -1, now_b_ = -1;
  std::map<int64_t, std::vector<uint64_t>> buckets_;
  uint64_t pending_ = 0;
  int64_t first_ = 0, last_ = 0;
  std::vector<uint64_t> pending_events_;
  bool firing_ = false, announced_ = false, alerted_ = false;
  int64_t last_alert_ = 0;
  uint64_t suppressed_ = 0;
};

}  // namespace swthrottle::test
