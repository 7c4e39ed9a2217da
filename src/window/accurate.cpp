#include "window/accurate.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>

namespace swthrottle::window {

namespace {

uint64_t* zeroed(void* storage, std::size_t bytes) {
  auto* p = static_cast<uint64_t*>(storage);
  std::uninitialized_fill_n(p, bytes / sizeof(uint64_t), uint64_t{0});
  return p;
}

}  // namespace

AccurateWindow::AccurateWindow(const WindowSpec& spec)
    : Window(spec), owns_data_(true), data_(new uint64_t[storage_bytes(spec) / sizeof(uint64_t)]()) {}

AccurateWindow::AccurateWindow(const WindowSpec& spec, void* storage)
    : Window(spec), owns_data_(false), data_(zeroed(storage, storage_bytes(spec))) {}

AccurateWindow::~AccurateWindow() {
  if (owns_data_) delete[] data_;
}

void AccurateWindow::advance_locked(int64_t t_ms) {
  t_ms = clamp_time(t_ms);
  if (t_ms > now_ms_) now_ms_ = t_ms;
  // The common case, a time inside the newest bucket, needs no division.
  if (now_b_ != kNoBucket && t_ms >= now_b_ * spec_.width_ms && t_ms - now_b_ * spec_.width_ms < spec_.width_ms)
      [[likely]]
    return;
  const int64_t b = bucket_of(t_ms, spec_);
  if (now_b_ == kNoBucket) {  // everything is zero: nothing to clear
    now_b_ = b;
    return;
  }
  if (b <= now_b_) return;
  const int64_t gap = b - now_b_;
  if (gap >= spec_.ring()) {  // every slot left the ring; O(B*E) whatever the gap
    std::memset(data_, 0, storage_bytes(spec_));
  } else {
    // Buckets now_b_+1 .. b enter the window; for each, the bucket B before
    // it leaves the window, and the slot it reuses is cleared.
    for (int64_t k = now_b_ + 1; k <= b; ++k) leave_window_locked(k);
  }
  now_b_ = b;
}

void AccurateWindow::leave_window_locked(int64_t k) {
  const uint32_t E = spec_.events;
  uint64_t* entering = counts(slot_of(k, spec_));
  if (!spec_.previous) {  // the slot held bucket k - B, which leaves the window
    for (uint32_t e = 0; e < E; ++e) {
      totals()[e] -= entering[e];
      entering[e] = 0;
    }
    return;
  }
  // Bucket k - 2B leaves the previous window (and the ring): its slot is k's.
  for (uint32_t e = 0; e < E; ++e) {
    previous_totals()[e] -= entering[e];
    entering[e] = 0;
  }
  // Bucket k - B goes from the window to the previous one (before bucket 0: none).
  if (k < spec_.buckets) return;
  const uint64_t* leaving = counts(slot_of(k - spec_.buckets, spec_));
  for (uint32_t e = 0; e < E; ++e) {
    totals()[e] -= leaving[e];
    previous_totals()[e] += leaving[e];
  }
}

void AccurateWindow::add_locked(int64_t b, uint32_t event, uint64_t n) {
  counts(slot_of(b, spec_))[event] += n;
  totals()[event] += n;
}

uint64_t AccurateWindow::total_locked() const {
  uint64_t sum = 0;
  for (uint32_t e = 0; e < spec_.events; ++e) sum += totals()[e];
  return sum;
}

void AccurateWindow::copy_totals_locked(std::span<uint64_t> out) const {
  const std::size_t n = std::min<std::size_t>(out.size(), spec_.counts_width());
  std::copy_n(totals(), n, out.begin());
}

AddResult AccurateWindow::add(int64_t t_ms, uint32_t event, uint64_t n) {
  std::lock_guard lock(mu_);
  advance_locked(t_ms);
  const int64_t b = bucket_of(t_ms, spec_);
  if (is_late(b, now_b_, spec_)) return AddResult::Late;
  add_locked(b, event, n);
  return AddResult::Added;
}

void AccurateWindow::advance(int64_t now_ms) {
  std::lock_guard lock(mu_);
  advance_locked(now_ms);
}

void AccurateWindow::read(std::span<uint64_t> out) const {
  std::lock_guard lock(mu_);
  copy_totals_locked(out);
}

int64_t AccurateWindow::now_ms() const {
  std::lock_guard lock(mu_);
  return now_ms_;
}

ThrottleOutcome AccurateWindow::offer_throttle(int64_t t_ms, int64_t now_ms, uint64_t limit, uint32_t event,
                                               LineEvents events, std::span<uint64_t> counts_out) {
  std::lock_guard lock(mu_);
  advance_locked(std::max(now_ms, t_ms));
  ThrottleOutcome out;
  int64_t b = bucket_of(t_ms, spec_);
  int64_t decided_at = clamp_time(t_ms);
  if (is_late(b, now_b_, spec_)) {  // a throttle limits what is written now
    out.late = true;
    b = now_b_;
    decided_at = now_ms_;
  }
  out.now_ms = now_ms_;
  if (total_locked() < limit) {
    add_locked(b, event, 1);
    out.passed = true;
    out.summary = take_pending_locked(counts_out);
  } else {
    if (pending_++ == 0) {
      first_ms_ = last_ms_ = decided_at;
    } else {
      first_ms_ = std::min(first_ms_, decided_at);
      last_ms_ = std::max(last_ms_, decided_at);
    }
    tally_events_locked(events);
  }
  return out;
}

void AccurateWindow::tally_events_locked(LineEvents events) {
  if (events.of == 0) return;
  const uint32_t n = std::min<uint32_t>(events.of, 64);
  if (!pending_events_) {
    pending_events_ = std::make_unique<uint64_t[]>(n + 1);  // zeroed
    pending_events_[0] = n;
  }
  const uint64_t have = pending_events_[0];
  for (uint64_t m = events.mask; m != 0; m &= m - 1) {
    const auto e = static_cast<uint64_t>(std::countr_zero(m));
    if (e < have) ++pending_events_[1 + e];
  }
}

Summary AccurateWindow::take_pending_locked(std::span<uint64_t> counts_out) {
  Summary s;
  if (pending_ == 0) return s;
  s = Summary{pending_, first_ms_, last_ms_};
  pending_ = 0;
  std::fill(counts_out.begin(), counts_out.end(), 0);
  if (pending_events_) {
    uint64_t* c = pending_events_.get() + 1;
    const auto n = static_cast<std::size_t>(pending_events_[0]);
    std::copy_n(c, std::min(n, counts_out.size()), counts_out.begin());
    std::fill_n(c, n, 0);
  }
  return s;
}

Summary AccurateWindow::tick_throttle(int64_t now_ms, uint64_t limit, std::span<uint64_t> counts_out) {
  std::lock_guard lock(mu_);
  advance_locked(now_ms);
  if (pending_ == 0 || total_locked() >= limit) return {};
  return take_pending_locked(counts_out);
}

Summary AccurateWindow::take_pending(std::span<uint64_t> counts_out) {
  std::lock_guard lock(mu_);
  return take_pending_locked(counts_out);
}

AlertOutcome AccurateWindow::offer_alert(int64_t t_ms, int64_t now_ms, uint64_t events, const AlertPolicy& policy,
                                         std::span<uint64_t> counts_out) {
  std::lock_guard lock(mu_);
  advance_locked(std::max(now_ms, t_ms));
  AlertOutcome out;
  out.now_ms = now_ms_;
  const int64_t b = bucket_of(t_ms, spec_);
  if (is_late(b, now_b_, spec_)) {  // a late event changes nothing
    out.late = true;
    out.firing = firing_;
    copy_totals_locked(counts_out);
    return out;
  }
  for (uint64_t m = events; m != 0; m &= m - 1) {
    const auto e = static_cast<uint32_t>(std::countr_zero(m));
    if (e < spec_.events) add_locked(b, e, 1);
  }
  copy_totals_locked(counts_out);
  out.holds = policy.condition->holds(std::span<const uint64_t>(totals(), spec_.counts_width()));
  const bool clear = clears(policy, firing_, out.holds, std::span<const uint64_t>(totals(), spec_.counts_width()));
  apply_alert_step_locked(
      next_alert_state(alert_state_locked(), out.holds, clear, /*from_event=*/true, now_ms_, policy), out);
  if (out.holds && out.action == AlertAction::None) ++alert_suppressed_;  // held back by the cooldown
  return out;
}

void AccurateWindow::load_bucket_locked(int64_t b, std::span<const uint64_t> c) {
  if (now_b_ == kNoBucket || b > now_b_ || b < oldest_kept(now_b_, spec_)) return;
  uint64_t* row = in_window(b, now_b_, spec_) ? totals() : previous_totals();
  for (uint32_t e = 0; e < spec_.events && e < c.size(); ++e) {
    counts(slot_of(b, spec_))[e] += c[e];
    row[e] += c[e];
  }
}

AlertState AccurateWindow::alert_state_locked() const { return {firing_, announced_, alerted_, last_alert_ms_}; }

void AccurateWindow::apply_alert_step_locked(const AlertStep& step, AlertOutcome& out) {
  if (step.changed) {
    firing_ = step.next.firing;
    announced_ = step.next.announced;
    alerted_ = step.next.alerted;
    last_alert_ms_ = step.next.last_alert_ms;
  }
  if (step.action != AlertAction::None) {
    out.action = step.action;
    out.suppressed = alert_suppressed_;
    if (step.action == AlertAction::Alert) alert_suppressed_ = 0;
  }
  out.firing = firing_;
}

AlertOutcome AccurateWindow::tick_alert(int64_t now_ms, const AlertPolicy& policy, std::span<uint64_t> counts_out) {
  std::lock_guard lock(mu_);
  advance_locked(now_ms);
  AlertOutcome out;
  out.now_ms = now_ms_;
  copy_totals_locked(counts_out);
  if (!firing_) return out;
  out.holds = policy.condition->holds(std::span<const uint64_t>(totals(), spec_.counts_width()));
  const bool clear = clears(policy, firing_, out.holds, std::span<const uint64_t>(totals(), spec_.counts_width()));
  apply_alert_step_locked(
      next_alert_state(alert_state_locked(), out.holds, clear, /*from_event=*/false, now_ms_, policy), out);
  return out;
}

bool AccurateWindow::quiet() const {
  std::lock_guard lock(mu_);
  return pending_ == 0 && !firing_;
}

WindowState AccurateWindow::save() const {
  std::lock_guard lock(mu_);
  WindowState st;
  st.now_ms = now_ms_;
  if (now_b_ != kNoBucket) {
    for (int64_t b = std::max<int64_t>(0, oldest_kept(now_b_, spec_)); b <= now_b_; ++b) {
      const uint64_t* c = counts(slot_of(b, spec_));
      if (std::all_of(c, c + spec_.events, [](uint64_t v) { return v == 0; })) continue;
      st.buckets.push_back({b, std::vector<uint64_t>(c, c + spec_.events)});
    }
  }
  st.pending = Summary{pending_, first_ms_, last_ms_};
  if (pending_events_ && pending_ != 0)
    st.pending_counts.assign(pending_events_.get() + 1, pending_events_.get() + 1 + pending_events_[0]);
  st.firing = firing_;
  st.announced = announced_;
  st.alerted = alerted_;
  st.last_alert_ms = last_alert_ms_;
  st.alert_suppressed = alert_suppressed_;
  return st;
}

void AccurateWindow::load(const WindowState& st) {
  std::lock_guard lock(mu_);
  if (st.now_ms >= 0) advance_locked(st.now_ms);
  for (const auto& bk : st.buckets) load_bucket_locked(bk.bucket, bk.counts);
  pending_ = st.pending.suppressed;
  first_ms_ = st.pending.first_ms;
  last_ms_ = st.pending.last_ms;
  pending_events_.reset();
  if (!st.pending_counts.empty()) {
    const auto n = static_cast<uint32_t>(std::min<std::size_t>(st.pending_counts.size(), 64));
    pending_events_ = std::make_unique<uint64_t[]>(n + 1);
    pending_events_[0] = n;
    std::copy_n(st.pending_counts.begin(), n, pending_events_.get() + 1);
  }
  firing_ = st.firing;
  announced_ = st.announced;
  alerted_ = st.alerted;
  last_alert_ms_ = st.last_alert_ms;
  alert_suppressed_ = st.alert_suppressed;
}

}  // namespace swthrottle::window
