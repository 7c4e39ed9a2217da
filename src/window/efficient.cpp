#include "window/efficient.h"

#include "window/accurate.h"

#include <algorithm>
#include <array>
#include <bit>
#include <new>

namespace swthrottle::window {

namespace {

constexpr int kGenShift = 56;
constexpr uint64_t kBucketMask = (uint64_t{1} << kGenShift) - 1;
constexpr uint32_t kTagMask = (1u << 24) - 1;
// Sweeping whenever now crosses a multiple of 2^21 buckets keeps every live
// cell within 2^21 + B buckets of now, far inside the 2^23 a signed 24-bit tag
// difference can tell apart.
constexpr int kSweepShift = 21;
constexpr int64_t kUnset = INT64_MIN;

constexpr uint64_t kFiring = uint64_t{1} << 63;
constexpr uint64_t kAnnounced = uint64_t{1} << 62;
constexpr uint64_t kAlerted = uint64_t{1} << 61;
constexpr uint64_t kLastAlertMask = kAlerted - 1;

constexpr uint32_t gen_of_now(uint64_t w) { return static_cast<uint32_t>(w >> kGenShift); }
constexpr int64_t bucket_of_now(uint64_t w) { return static_cast<int64_t>(w & kBucketMask); }
constexpr uint64_t make_now(uint32_t gen, int64_t b) {
  return (uint64_t{gen & 0xffu} << kGenShift) | (static_cast<uint64_t>(b) & kBucketMask);
}

constexpr uint32_t cell_gen(uint64_t c) { return static_cast<uint32_t>(c >> 56); }
constexpr uint32_t cell_tag(uint64_t c) { return static_cast<uint32_t>(c >> 32) & kTagMask; }
constexpr uint32_t cell_count(uint64_t c) { return static_cast<uint32_t>(c); }
constexpr uint64_t make_cell(uint32_t gen, int64_t b, uint32_t count) {
  return (uint64_t{gen & 0xffu} << 56) | (uint64_t{static_cast<uint32_t>(b) & kTagMask} << 32) | count;
}
// a - b on the 8-bit generation ring and the 24-bit tag ring.
constexpr int gen_diff(uint32_t a, uint32_t b) { return static_cast<int8_t>(static_cast<uint8_t>(a - b)); }
constexpr int32_t tag_diff(uint32_t a, uint32_t b) {
  auto d = static_cast<int32_t>((a - b) & kTagMask);
  return d >= (1 << 23) ? d - (1 << 24) : d;
}

// Bucket of t, without a division when t falls in the newest bucket of w.
inline int64_t bucket_near(uint64_t w, int64_t t_ms, const WindowSpec& s) {
  t_ms = clamp_time(t_ms);
  const int64_t nb = static_cast<int64_t>(w & kBucketMask);
  const int64_t start = nb * s.width_ms;
  if (t_ms >= start && t_ms - start < s.width_ms) [[likely]]
    return nb;
  return bucket_of(t_ms, s);
}

// Is cell c (non-empty) counted in the window at now word w?
constexpr bool cell_in_window(uint64_t c, uint64_t w, uint32_t buckets) {
  if (cell_gen(c) != gen_of_now(w)) return false;
  const int32_t age = tag_diff(static_cast<uint32_t>(bucket_of_now(w)) & kTagMask, cell_tag(c));
  return age >= 0 && age < static_cast<int32_t>(buckets);
}

template <typename T>
T* new_aligned_array(std::size_t n) {
  void* p = ::operator new(sizeof(T) * n, std::align_val_t{kFalseSharingRange});
  T* a = static_cast<T*>(p);
  for (std::size_t i = 0; i < n; ++i) new (a + i) T();
  return a;
}

template <typename T>
void delete_aligned_array(T* a, std::size_t n) {
  if (a == nullptr) return;
  for (std::size_t i = 0; i < n; ++i) a[i].~T();
  ::operator delete(a, std::align_val_t{kFalseSharingRange});
}

void atomic_max(std::atomic<int64_t>& a, int64_t v) {
  int64_t cur = a.load();
  while (cur < v && !a.compare_exchange_weak(cur, v)) {
  }
}

}  // namespace

EfficientWindow::EfficientWindow(const WindowSpec& spec, uint32_t stripes)
    : Window(spec),
      stripes_(next_pow2(stripes == 0 ? default_stripes() : stripes)),
      stride_(static_cast<uint32_t>((std::size_t(spec.buckets) * spec.events * sizeof(uint64_t) +
                                     kFalseSharingRange - 1) /
                                    kFalseSharingRange * (kFalseSharingRange / sizeof(uint64_t)))),
      base_(new_aligned_array<Cell>(stride_)),
      first_ms_(kUnset) {
  static_assert(sizeof(TallySlot) % kFalseSharingRange == 0);
}

EfficientWindow::~EfficientWindow() {
  delete_aligned_array(base_, stride_);
  delete_aligned_array(more_.load(), std::size_t(stride_) * (stripes_ - 1));
  delete_aligned_array(tally_.load(), stripes_);
}

EfficientWindow::Cell* EfficientWindow::ensure_more() {
  Cell* m = more_.load(std::memory_order_acquire);
  if (m != nullptr || stripes_ == 1) return m;
  Cell* fresh = new_aligned_array<Cell>(std::size_t(stride_) * (stripes_ - 1));
  if (more_.compare_exchange_strong(m, fresh, std::memory_order_acq_rel)) return fresh;
  delete_aligned_array(fresh, std::size_t(stride_) * (stripes_ - 1));  // another thread won
  return m;
}

uint64_t EfficientWindow::advance_to(int64_t t_ms) {
  t_ms = clamp_time(t_ms);
  atomic_max(now_ms_, t_ms);
  uint64_t cur = now_.load();
  // The common case, a time inside the newest bucket, needs no division.
  const int64_t start = bucket_of_now(cur) * spec_.width_ms;
  if (t_ms >= start && t_ms - start < spec_.width_ms) [[likely]]
    return cur;
  const int64_t b = bucket_of(t_ms, spec_);
  while (bucket_of_now(cur) < b) {
    const int64_t old_b = bucket_of_now(cur);
    const bool jump = b - old_b >= spec_.buckets;
    const uint64_t next = make_now(jump ? gen_of_now(cur) + 1 : gen_of_now(cur), b);
    if (now_.compare_exchange_weak(cur, next)) {
      // Only the thread that moved now sweeps; others never wait for it.
      if (jump || (old_b >> kSweepShift) != (b >> kSweepShift)) sweep(next);
      return next;
    }
  }
  return cur;
}

void EfficientWindow::sweep(uint64_t w) {
  Cell* more = more_.load(std::memory_order_acquire);
  const uint32_t n = more ? stripes_ : 1;
  const std::size_t words = std::size_t(spec_.buckets) * spec_.events;
  for (uint32_t s = 0; s < n; ++s) {
    Cell* blk = block(s, more);
    for (std::size_t i = 0; i < words; ++i) {
      uint64_t c = blk[i].load();
      if (cell_count(c) == 0) continue;
      // Stale: an older generation, or this generation but out of the window
      // on the old side. A cell of a newer generation or a newer bucket is
      // live (another thread moved on): leave it.
      bool stale;
      const int g = gen_diff(cell_gen(c), gen_of_now(w));
      if (g != 0) {
        stale = g < 0;
      } else {
        stale = tag_diff(static_cast<uint32_t>(bucket_of_now(w)) & kTagMask, cell_tag(c)) >=
                static_cast<int32_t>(spec_.buckets);
      }
      // A CAS from the value examined: if an add got there first, it wins.
      if (stale) blk[i].compare_exchange_strong(c, 0);
    }
  }
}

AddResult EfficientWindow::add_at(uint64_t w, int64_t b, uint32_t event, uint64_t n) {
  if (b < oldest_in_window(bucket_of_now(w), spec_)) return AddResult::Late;
  const uint32_t gen = gen_of_now(w);
  const std::size_t idx = std::size_t(slot_of(b, spec_)) * spec_.events + event;
  const uint32_t s = stripe_id() & (stripes_ - 1);
  Cell* more = more_.load(std::memory_order_acquire);
  Cell* cell = (more != nullptr && s != 0) ? &block(s, more)[idx] : &base_[idx];
  const bool watch_contention = more == nullptr && stripes_ > 1;
  const auto add_n = static_cast<uint32_t>(std::min<uint64_t>(n, UINT32_MAX));
  uint64_t c = cell->load();
  for (;;) {
    uint64_t next;
    const uint32_t count = cell_count(c);
    const int g = gen_diff(cell_gen(c), gen);
    if (count == 0 || g < 0) {
      next = make_cell(gen, b, add_n);  // empty or stale: reset and add in one step
    } else if (g > 0) {
      return AddResult::Late;  // the window jumped past b since w was read
    } else {
      const int32_t d = tag_diff(cell_tag(c), static_cast<uint32_t>(b) & kTagMask);
      if (d == 0) {
        // Saturates at 2^32-1 per cell, i.e. per bucket, stripe and event.
        next = (c & ~uint64_t{UINT32_MAX}) | std::min<uint64_t>(uint64_t{count} + add_n, UINT32_MAX);
      } else if (d < 0) {
        next = make_cell(gen, b, add_n);  // the slot holds an older bucket: stale
      } else {
        return AddResult::Late;  // the slot holds a newer bucket, so b has left the window
      }
    }
    // Why no add is lost: every change to a cell is a CAS from the exact value
    // examined above, so a concurrent add or reset is never overwritten unseen.
    if (watch_contention) {
      if (cell->compare_exchange_strong(c, next)) return AddResult::Added;
      ensure_more();  // first contention: spread later adds over stripes
      continue;
    }
    if (cell->compare_exchange_weak(c, next)) return AddResult::Added;
  }
}

uint64_t EfficientWindow::sum_at(uint64_t w, std::span<uint64_t> out) const {
  std::fill(out.begin(), out.end(), 0);
  Cell* more = more_.load(std::memory_order_acquire);
  const uint32_t n = more ? stripes_ : 1;
  const uint32_t E = spec_.events;
  uint64_t total = 0;
  for (uint32_t s = 0; s < n; ++s) {
    const Cell* blk = block(s, more);
    for (uint32_t slot = 0; slot < spec_.buckets; ++slot) {
      for (uint32_t e = 0; e < E; ++e) {
        const uint64_t c = blk[std::size_t(slot) * E + e].load();
        if (cell_count(c) == 0 || !cell_in_window(c, w, spec_.buckets)) continue;
        total += cell_count(c);
        if (e < out.size()) out[e] += cell_count(c);
      }
    }
  }
  return total;
}

AddResult EfficientWindow::add(int64_t t_ms, uint32_t event, uint64_t n) {
  const uint64_t w = advance_to(t_ms);
  return add_at(w, bucket_near(w, t_ms, spec_), event, n);
}

void EfficientWindow::advance(int64_t now_ms) { advance_to(now_ms); }

void EfficientWindow::read(std::span<uint64_t> out) const { sum_at(now_.load(), out); }

EfficientWindow::TallySlot* EfficientWindow::ensure_tally() {
  TallySlot* t = tally_.load(std::memory_order_acquire);
  if (t != nullptr) return t;
  TallySlot* fresh = new_aligned_array<TallySlot>(stripes_);
  if (tally_.compare_exchange_strong(t, fresh, std::memory_order_acq_rel)) return fresh;
  delete_aligned_array(fresh, stripes_);
  return t;
}

void EfficientWindow::tally_add(int64_t decided_ms) {
  TallySlot& slot = ensure_tally()[stripe_id() & (stripes_ - 1)];
  slot.count.fetch_add(1, std::memory_order_relaxed);
  slot.last_ms.store(decided_ms, std::memory_order_relaxed);
  // Set once per summary: in a flood this is a load of a read-mostly line.
  if (first_ms_.load(std::memory_order_relaxed) == kUnset) {
    int64_t expected = kUnset;
    first_ms_.compare_exchange_strong(expected, decided_ms);
  }
}

uint64_t EfficientWindow::tally_total() const {
  const TallySlot* t = tally_.load(std::memory_order_acquire);
  if (t == nullptr) return 0;
  uint64_t sum = 0;
  for (uint32_t i = 0; i < stripes_; ++i) sum += t[i].count.load(std::memory_order_relaxed);
  return sum;
}

// The tally not yet reported. reported_ is read first: a report racing this
// read can only raise it, and reading it after the tally could underflow.
uint64_t EfficientWindow::untaken_tally() const {
  const uint64_t reported = reported_.load();
  const uint64_t total = tally_total();
  return total > reported ? total - reported : 0;
}

// Tallies are never reset (a striped read-then-reset loses counts, cf.
// LongAdder.sumThenReset): a report takes the growth since the last report.
Summary EfficientWindow::take_summary() {
  const TallySlot* t = tally_.load(std::memory_order_acquire);
  if (t == nullptr) return {};
  const uint64_t total = tally_total();
  uint64_t prev = reported_.load();
  while (total > prev) {
    if (reported_.compare_exchange_weak(prev, total)) {
      Summary s;
      s.suppressed = total - prev;
      int64_t last = kUnset;
      for (uint32_t i = 0; i < stripes_; ++i) {
        if (t[i].count.load(std::memory_order_relaxed) != 0)
          last = std::max(last, t[i].last_ms.load(std::memory_order_relaxed));
      }
      const int64_t first = first_ms_.exchange(kUnset);
      s.last_ms = last;
      s.first_ms = first == kUnset ? last : first;
      return s;
    }
  }
  return {};
}

ThrottleOutcome EfficientWindow::offer_throttle(int64_t t_ms, int64_t now_ms, uint64_t limit,
                                                uint32_t event) {
  ThrottleOutcome out;
  for (;;) {
    // The window moves to the later of now and t; t may be older (its own
    // bucket, or late).
    const uint64_t w = advance_to(std::max(now_ms, t_ms));
    int64_t b = bucket_near(w, t_ms, spec_);
    int64_t decided_at = clamp_time(t_ms);
    out.late = false;
    if (b < oldest_in_window(bucket_of_now(w), spec_)) {  // decided and counted at now
      out.late = true;
      b = bucket_of_now(w);
      decided_at = now_ms_.load();
    }
    out.now_ms = now_ms_.load();
    // The latch is sound because at a fixed position the window sum never
    // decreases: only adds happen there; resets hit buckets outside it.
    // Also sound after a reload that changed Y: the latch says "sum >= the
    // limit it was set with", which implies sum >= any limit no larger.
    if (saturated_at_.load() != w || saturated_limit_.load() < limit) {
      if (sum_at(w, {}) < limit) {
        // A concurrent advance can make b late between the read and the add:
        // decide again at the new position.
        if (add_at(w, b, event, 1) == AddResult::Late) continue;
        out.passed = true;
        out.summary = take_summary();
        return out;
      }
      saturated_limit_.store(limit);
      saturated_at_.store(w);
    }
    if (!throttled_.load(std::memory_order_relaxed)) throttled_.store(true, std::memory_order_relaxed);
    tally_add(decided_at);
    return out;
  }
}

Summary EfficientWindow::tick_throttle(int64_t now_ms, uint64_t limit) {
  const uint64_t w = advance_to(now_ms);
  if (tally_total() == reported_.load()) return {};
  if (sum_at(w, {}) >= limit) return {};
  return take_summary();
}

Summary EfficientWindow::take_pending() { return take_summary(); }

uint64_t EfficientWindow::take_alert_suppressed() {
  const uint64_t total = tally_total();
  uint64_t prev = reported_.load();
  while (total > prev && !reported_.compare_exchange_weak(prev, total)) {
  }
  return total > prev ? total - prev : 0;
}

AlertOutcome EfficientWindow::offer_alert(int64_t t_ms, int64_t now_ms, uint64_t events,
                                          const AlertPolicy& policy, std::span<uint64_t> counts_out) {
  const uint64_t w0 = advance_to(std::max(now_ms, t_ms));
  AlertOutcome out;
  const int64_t b = bucket_near(w0, t_ms, spec_);
  bool late = b < oldest_in_window(bucket_of_now(w0), spec_);
  for (uint64_t m = events; m != 0 && !late; m &= m - 1) {
    const auto e = static_cast<uint32_t>(std::countr_zero(m));
    // Late here only if the window moved past b meanwhile. Events already
    // added stay counted: they were accepted inside the window.
    if (e < spec_.events && add_at(w0, b, e, 1) == AddResult::Late) late = true;
  }
  out.now_ms = now_ms_.load();
  if (late) {
    out.late = true;
    out.firing = (state_.load() & kFiring) != 0;
    read(counts_out);
    return out;
  }
  out.action = decide_alert(policy, out, counts_out, /*from_event=*/true);
  return out;
}

// One attempt reads the state, *then* the counts, then CASes from that state:
// if another thread changed the state meanwhile, the CAS fails and the counts
// are read again. So no decision rests on counts older than the state it
// replaces (a stale "false" cannot resolve a crossing that just alerted).
AlertAction EfficientWindow::decide_alert(const AlertPolicy& policy, AlertOutcome& out,
                                          std::span<uint64_t> counts_out, bool from_event) {
  std::array<uint64_t, 64> counts;  // sum_at zeroes the E words it uses
  const std::span<uint64_t> cs(counts.data(), spec_.events);
  const int64_t now = out.now_ms;
  for (;;) {
    const uint64_t s = state_.load();
    sum_at(now_.load(), cs);
    out.holds = policy.condition->holds(cs);
    uint64_t next = s;
    AlertAction action = AlertAction::None;
    if (out.holds && from_event) {
      const bool alerted = (s & kAlerted) != 0;
      const auto last = static_cast<int64_t>(s & kLastAlertMask);
      if (!alerted || now - last >= policy.cooldown_ms) {
        next = kFiring | kAnnounced | kAlerted | (static_cast<uint64_t>(now) & kLastAlertMask);
        action = AlertAction::Alert;
      } else {
        // Inside the cooldown. A key that was not firing starts an episode
        // that is not announced (so it will not be resolved either).
        next = (s & kFiring) ? s : ((s | kFiring) & ~kAnnounced);
      }
    } else if (!out.holds && (s & kFiring) != 0) {
      next = s & ~(kFiring | kAnnounced);
      if ((s & kAnnounced) && policy.resolve) action = AlertAction::Resolved;
    }
    if (next != s) {
      uint64_t expected = s;
      if (!state_.compare_exchange_strong(expected, next)) continue;
    }
    if (out.holds && from_event && action == AlertAction::None) tally_add(now);
    if (action == AlertAction::Alert) out.suppressed = take_alert_suppressed();
    if (action == AlertAction::Resolved) out.suppressed = untaken_tally();
    out.firing = (next & kFiring) != 0;
    std::copy_n(cs.begin(), std::min(cs.size(), counts_out.size()), counts_out.begin());
    return action;
  }
}

AlertOutcome EfficientWindow::tick_alert(int64_t now_ms, const AlertPolicy& policy,
                                         std::span<uint64_t> counts_out) {
  advance_to(now_ms);
  AlertOutcome out;
  out.now_ms = now_ms_.load();
  if ((state_.load() & kFiring) == 0) {  // the common case: nothing to check
    read(counts_out);
    return out;
  }
  out.action = decide_alert(policy, out, counts_out, /*from_event=*/false);
  return out;
}

bool EfficientWindow::quiet() const {
  if ((state_.load() & kFiring) != 0) return false;
  // An alert's tally waits for the next alert; only a throttle's is pending output.
  return !throttled_.load(std::memory_order_relaxed) || tally_total() == reported_.load();
}

WindowState EfficientWindow::save() const {
  WindowState st;
  st.now_ms = now_ms_.load();
  const uint64_t w = now_.load();
  const int64_t nb = bucket_of_now(w);
  std::vector<std::vector<uint64_t>> by_age(spec_.buckets, std::vector<uint64_t>(spec_.events, 0));
  Cell* more = more_.load(std::memory_order_acquire);
  const uint32_t n = more ? stripes_ : 1;
  for (uint32_t s = 0; s < n; ++s) {
    const Cell* blk = block(s, more);
    for (std::size_t i = 0; i < std::size_t(spec_.buckets) * spec_.events; ++i) {
      const uint64_t c = blk[i].load();
      if (cell_count(c) == 0 || !cell_in_window(c, w, spec_.buckets)) continue;
      const int32_t age = tag_diff(static_cast<uint32_t>(nb) & kTagMask, cell_tag(c));
      by_age[static_cast<std::size_t>(age)][i % spec_.events] += cell_count(c);
    }
  }
  for (int64_t age = spec_.buckets - 1; age >= 0; --age) {
    auto& counts = by_age[static_cast<std::size_t>(age)];
    if (std::all_of(counts.begin(), counts.end(), [](uint64_t v) { return v == 0; })) continue;
    if (nb - age < 0) continue;
    st.buckets.push_back({nb - age, std::move(counts)});
  }
  const uint64_t untaken = untaken_tally();
  const uint64_t s = state_.load();
  st.firing = (s & kFiring) != 0;
  st.announced = (s & kAnnounced) != 0;
  st.alerted = (s & kAlerted) != 0;
  st.last_alert_ms = static_cast<int64_t>(s & kLastAlertMask);
  if (throttled_.load(std::memory_order_relaxed)) {
    if (untaken != 0) {
      const TallySlot* t = tally_.load(std::memory_order_acquire);
      int64_t last = kUnset;
      for (uint32_t i = 0; i < stripes_; ++i)
        if (t[i].count.load(std::memory_order_relaxed) != 0) last = std::max(last, t[i].last_ms.load());
      const int64_t first = first_ms_.load();
      st.pending = Summary{untaken, first == kUnset ? last : first, last};
    }
  } else {
    st.alert_suppressed = untaken;
  }
  return st;
}

void EfficientWindow::load(const WindowState& st) {
  if (st.now_ms >= 0) advance_to(st.now_ms);
  const uint64_t w = now_.load();
  for (const auto& bk : st.buckets) {
    if (!in_window(bk.bucket, bucket_of_now(w), spec_)) continue;
    for (uint32_t e = 0; e < spec_.events && e < bk.counts.size(); ++e)
      if (bk.counts[e] != 0) add_at(w, bk.bucket, e, bk.counts[e]);
  }
  const uint64_t untaken = st.pending.suppressed != 0 ? st.pending.suppressed : st.alert_suppressed;
  if (st.pending.suppressed != 0) throttled_.store(true, std::memory_order_relaxed);
  if (untaken != 0) {
    TallySlot& slot = ensure_tally()[stripe_id() & (stripes_ - 1)];
    slot.count.fetch_add(untaken, std::memory_order_relaxed);
    slot.last_ms.store(st.pending.last_ms, std::memory_order_relaxed);
    if (st.pending.suppressed != 0) first_ms_.store(st.pending.first_ms);
  }
  uint64_t s = static_cast<uint64_t>(st.last_alert_ms) & kLastAlertMask;
  if (st.firing) s |= kFiring;
  if (st.announced) s |= kAnnounced;
  if (st.alerted) s |= kAlerted;
  state_.store(s);
}

std::unique_ptr<Window> make_window(Mode mode, const WindowSpec& spec, uint32_t stripes) {
  if (mode == Mode::Accurate) return std::make_unique<AccurateWindow>(spec);
  return std::make_unique<EfficientWindow>(spec, stripes);
}

}  // namespace swthrottle::window
