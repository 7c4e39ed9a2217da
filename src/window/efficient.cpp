#include "window/efficient.h"

#include "window/accurate.h"
#include "window/alert_state.h"

#include <algorithm>
#include <array>
#include <bit>
#include <new>

#include "util/atomic_max.h"

namespace swthrottle::window {

namespace {

constexpr int kGenShift = 56;
constexpr uint64_t kBucketMask = (uint64_t{1} << kGenShift) - 1;
constexpr uint32_t kTagMask = (1u << 24) - 1;
// Sweeping whenever now crosses a multiple of 2^21 buckets keeps every live
// cell within 2^21 + B buckets of now, far inside the 2^23 a signed 24-bit tag
// difference can tell apart.
constexpr int kSweepShift = 21;

constexpr uint64_t kFiring = uint64_t{1} << 63;
constexpr uint64_t kAnnounced = uint64_t{1} << 62;
constexpr uint64_t kAlerted = uint64_t{1} << 61;
constexpr uint64_t kLastAlertMask = kAlerted - 1;

// state_ holds an AlertState in one word, so that one CAS moves it.
constexpr AlertState unpack_alert_state(uint64_t s) {
  return {(s & kFiring) != 0, (s & kAnnounced) != 0, (s & kAlerted) != 0, static_cast<int64_t>(s & kLastAlertMask)};
}
constexpr uint64_t pack_alert_state(const AlertState& a) {
  return (a.firing ? kFiring : 0) | (a.announced ? kAnnounced : 0) | (a.alerted ? kAlerted : 0) |
         (static_cast<uint64_t>(a.last_alert_ms) & kLastAlertMask);
}

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

// Buckets from cell c's to now word w's: 0 for the newest.
constexpr int32_t cell_age(uint64_t c, uint64_t w) {
  return tag_diff(static_cast<uint32_t>(bucket_of_now(w)) & kTagMask, cell_tag(c));
}

// Is cell c (non-empty) one of the `ring` buckets up to now word w (the
// window's B, or with the previous window 2B)?
constexpr bool cell_in_window(uint64_t c, uint64_t w, uint32_t ring) {
  if (cell_gen(c) != gen_of_now(w)) return false;
  const int32_t age = cell_age(c, w);
  return age >= 0 && age < static_cast<int32_t>(ring);
}

template <typename T>
T* new_aligned_array(std::size_t n) {
  void* p = ::operator new (sizeof(T) * n, std::align_val_t{kFalseSharingRange});
  T* a = static_cast<T*>(p);
  for (std::size_t i = 0; i < n; ++i) new (a + i) T();
  return a;
}

template <typename T>
T* construct_array(void* where, std::size_t n) {
  T* a = static_cast<T*>(where);
  for (std::size_t i = 0; i < n; ++i) new (a + i) T();
  return a;
}

template <typename T>
void delete_aligned_array(T* a, std::size_t n) {
  if (a == nullptr) return;
  for (std::size_t i = 0; i < n; ++i) a[i].~T();
  ::operator delete (a, std::align_val_t{kFalseSharingRange});
}

}  // namespace

// A window of its own (no caller memory): the first block padded to 128 bytes,
// as the stripes are.
EfficientWindow::EfficientWindow(const WindowSpec& spec, uint32_t stripes)
    : Window(spec),
      stripes_(next_pow2(stripes == 0 ? default_stripes() : stripes)),
      owns_base_(true),
      base_(new_aligned_array<Cell>(stride())) {}

// The first block in the caller's memory, unpadded, next to the window's own
// fields and, in a KeyMap, next to other keys' slots. False sharing there is
// acceptable: a key is single-thread in the common case (one input decides it
// at a time), the key's own slot header and window fields are written on
// every decision anyway, and the first contention moves every later add to
// the padded stripes. Padding it would cost an idle key more than the cells.
EfficientWindow::EfficientWindow(const WindowSpec& spec, uint32_t stripes, void* cells)
    : Window(spec),
      stripes_(next_pow2(stripes == 0 ? default_stripes() : stripes)),
      owns_base_(false),
      base_(construct_array<Cell>(cells, cells_bytes(spec) / sizeof(Cell))) {}

EfficientWindow::~EfficientWindow() {
  static_assert(sizeof(TallySlot) % kFalseSharingRange == 0);
  if (owns_base_) delete_aligned_array(base_, stride());
  if (Ext* x = ext_.load()) {
    delete_aligned_array(x->more.load(), stride() * stripes_);
    delete_ext(x, stripes_);
  }
}

EfficientWindow::Ext* EfficientWindow::ensure_ext() {
  Ext* x = ext_.load(std::memory_order_acquire);
  if (x != nullptr) return x;
  Ext* fresh = new_ext(stripes_);
  if (ext_.compare_exchange_strong(x, fresh, std::memory_order_acq_rel)) return fresh;
  delete_ext(fresh, stripes_);  // another thread won
  return x;
}

EfficientWindow::Ext* EfficientWindow::new_ext(uint32_t stripes) {
  static_assert(sizeof(Ext) == kFalseSharingRange && sizeof(TallySlot) == kFalseSharingRange);
  char* p = static_cast<char*>(
      ::operator new (sizeof(Ext) + sizeof(TallySlot) * stripes, std::align_val_t{kFalseSharingRange}));
  Ext* x = new (p) Ext();
  construct_array<TallySlot>(p + sizeof(Ext), stripes);
  return x;
}

void EfficientWindow::delete_ext(Ext* x, uint32_t stripes) {
  delete_aligned_array(x->by_event.load(), by_event_words(stripes, x->events_n.load()));
  TallySlot* t = x->tally();
  for (uint32_t i = 0; i < stripes; ++i) t[i].~TallySlot();
  x->~Ext();
  ::operator delete (static_cast<void*>(x), std::align_val_t{kFalseSharingRange});
}

EfficientWindow::Cell* EfficientWindow::ensure_more() {
  if (stripes_ == 1) return nullptr;
  Ext* x = ensure_ext();
  Cell* m = x->more.load(std::memory_order_acquire);
  if (m != nullptr) return m;
  Cell* fresh = new_aligned_array<Cell>(stride() * stripes_);
  if (x->more.compare_exchange_strong(m, fresh, std::memory_order_acq_rel)) return fresh;
  delete_aligned_array(fresh, stride() * stripes_);  // another thread won
  return m;
}

template <typename F>
void EfficientWindow::for_each_block(F&& f) const {
  f(base_);
  if (Cell* m = more())
    for (uint32_t s = 0; s < stripes_; ++s) f(m + s * stride());
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
    // A jump past the whole ring (the window, and the previous one when it
    // is kept) leaves no cell live: a new generation makes them all stale.
    const bool jump = b - old_b >= spec_.ring();
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
  const std::size_t words = std::size_t(spec_.ring()) * spec_.events;
  for_each_block([&](Cell* blk) {
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
                static_cast<int32_t>(spec_.ring());
      }
      // A CAS from the value examined: if an add got there first, it wins.
      if (stale) blk[i].compare_exchange_strong(c, 0);
    }
  });
}

AddResult EfficientWindow::add_at(uint64_t w, int64_t b, uint32_t event, uint64_t n, bool kept) {
  const int64_t nb = bucket_of_now(w);
  if (b < (kept ? oldest_kept(nb, spec_) : oldest_in_window(nb, spec_))) return AddResult::Late;
  const uint32_t gen = gen_of_now(w);
  const std::size_t idx = std::size_t(slot_of(b, spec_)) * spec_.events + event;
  Cell* const m = more();
  Cell* cell = m != nullptr ? &m[(stripe_id() & (stripes_ - 1)) * stride() + idx] : &base_[idx];
  const bool watch_contention = m == nullptr && stripes_ > 1;
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
  const uint32_t E = spec_.events;
  uint64_t total = 0;
  for_each_block([&](const Cell* blk) {
    for (uint32_t slot = 0; slot < spec_.ring(); ++slot) {
      for (uint32_t e = 0; e < E; ++e) {
        const uint64_t c = blk[std::size_t(slot) * E + e].load();
        if (cell_count(c) == 0 || !cell_in_window(c, w, spec_.ring())) continue;
        // A cell of the previous window (kept ones only) is read, never summed.
        const std::size_t at = cell_age(c, w) < static_cast<int32_t>(spec_.buckets) ? e : std::size_t(E) + e;
        if (at == e) total += cell_count(c);
        if (at < out.size()) out[at] += cell_count(c);
      }
    }
  });
  return total;
}

AddResult EfficientWindow::add(int64_t t_ms, uint32_t event, uint64_t n) {
  const uint64_t w = advance_to(t_ms);
  return add_at(w, bucket_near(w, t_ms, spec_), event, n);
}

void EfficientWindow::advance(int64_t now_ms) { advance_to(now_ms); }

void EfficientWindow::read(std::span<uint64_t> out) const { sum_at(now_.load(), out); }

EfficientWindow::Cell* EfficientWindow::ensure_by_event(Ext* x, uint32_t n) {
  Cell* be = x->by_event.load(std::memory_order_acquire);
  if (be != nullptr) return be;
  n = std::min<uint32_t>(n, 64);
  Cell* fresh = new_aligned_array<Cell>(by_event_words(stripes_, n));
  // Every offer to a window gives the same n, so a racing thread stores the same.
  x->events_n.store(n, std::memory_order_relaxed);
  if (x->by_event.compare_exchange_strong(be, fresh, std::memory_order_acq_rel)) return fresh;
  delete_aligned_array(fresh, by_event_words(stripes_, n));  // another thread won
  return be;
}

ThrottleOutcome EfficientWindow::offer_throttle(int64_t t_ms, int64_t now_ms, uint64_t limit, uint32_t event,
                                                LineEvents events, std::span<uint64_t> counts_out) {
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
        out.summary = take_summary(counts_out);
        return out;
      }
      saturated_limit_.store(limit);
      saturated_at_.store(w);
    }
    Ext* x = ensure_ext();
    if (!x->throttled.load(std::memory_order_relaxed)) x->throttled.store(true, std::memory_order_relaxed);
    tally_add(x, decided_at, events);
    return out;
  }
}

Summary EfficientWindow::tick_throttle(int64_t now_ms, uint64_t limit, std::span<uint64_t> counts_out) {
  const uint64_t w = advance_to(now_ms);
  const Ext* x = ext();
  if (x == nullptr || tally_total(x) == x->reported.load()) return {};
  if (sum_at(w, {}) >= limit) return {};
  return take_summary(counts_out);
}

Summary EfficientWindow::take_pending(std::span<uint64_t> counts_out) { return take_summary(counts_out); }

uint64_t EfficientWindow::take_alert_suppressed() {
  Ext* x = ext();
  if (x == nullptr) return 0;
  const uint64_t total = tally_total(x);
  uint64_t prev = x->reported.load();
  while (total > prev && !x->reported.compare_exchange_weak(prev, total)) {
  }
  return total > prev ? total - prev : 0;
}

AlertOutcome EfficientWindow::offer_alert(int64_t t_ms, int64_t now_ms, uint64_t events, const AlertPolicy& policy,
                                          std::span<uint64_t> counts_out) {
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
AlertAction EfficientWindow::decide_alert(const AlertPolicy& policy, AlertOutcome& out, std::span<uint64_t> counts_out,
                                          bool from_event) {
  std::array<uint64_t, 64> counts;  // sum_at zeroes the words it uses: E, or 2E <= 64 with the previous window
  const std::span<uint64_t> cs(counts.data(), spec_.counts_width());
  const int64_t now = out.now_ms;
  for (;;) {
    const uint64_t s = state_.load();
    sum_at(now_.load(), cs);
    out.holds = policy.condition->holds(cs);
    const AlertState from = unpack_alert_state(s);
    const bool clear = clears(policy, from.firing, out.holds, cs);
    const AlertStep step = next_alert_state(from, out.holds, clear, from_event, now, policy);
    const uint64_t next = step.changed ? pack_alert_state(step.next) : s;
    const AlertAction action = step.action;
    if (next != s) {
      uint64_t expected = s;
      if (!state_.compare_exchange_strong(expected, next)) continue;
    }
    if (out.holds && from_event && action == AlertAction::None) tally_add(ensure_ext(), now);
    if (action == AlertAction::Alert) out.suppressed = take_alert_suppressed();
    if (action == AlertAction::Resolved) out.suppressed = untaken_tally();
    out.firing = (next & kFiring) != 0;
    std::copy_n(cs.begin(), std::min(cs.size(), counts_out.size()), counts_out.begin());
    return action;
  }
}

AlertOutcome EfficientWindow::tick_alert(int64_t now_ms, const AlertPolicy& policy, std::span<uint64_t> counts_out) {
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
  const Ext* x = ext();
  return x == nullptr || !x->throttled.load(std::memory_order_relaxed) || tally_total(x) == x->reported.load();
}

WindowState EfficientWindow::save() const {
  WindowState st;
  // The alert state, then the bucket, then the time: each is set after the
  // one read after it (advance_to() raises now_ms_ before it moves now_), so
  // a save racing a decision still gives an alert time and buckets that are
  // not ahead of now_ms, as state/state_validation.h checks on load.
  const AlertState a = unpack_alert_state(state_.load());
  const uint64_t w = now_.load();
  st.now_ms = now_ms_.load();
  const int64_t nb = bucket_of_now(w);
  std::vector<std::vector<uint64_t>> by_age(spec_.ring(), std::vector<uint64_t>(spec_.events, 0));
  for_each_block([&](const Cell* blk) {
    for (std::size_t i = 0; i < std::size_t(spec_.ring()) * spec_.events; ++i) {
      const uint64_t c = blk[i].load();
      if (cell_count(c) == 0 || !cell_in_window(c, w, spec_.ring())) continue;
      by_age[static_cast<std::size_t>(cell_age(c, w))][i % spec_.events] += cell_count(c);
    }
  });
  for (int64_t age = spec_.ring() - 1; age >= 0; --age) {
    auto& counts = by_age[static_cast<std::size_t>(age)];
    if (std::all_of(counts.begin(), counts.end(), [](uint64_t v) { return v == 0; })) continue;
    if (nb - age < 0) continue;
    st.buckets.push_back({nb - age, std::move(counts)});
  }
  const uint64_t untaken = untaken_tally();
  st.firing = a.firing;
  st.announced = a.announced;
  st.alerted = a.alerted;
  st.last_alert_ms = a.last_alert_ms;
  const Ext* x = ext();
  if (x != nullptr && x->throttled.load(std::memory_order_relaxed)) {
    if (untaken != 0) {
      const TallySlot* t = x->tally();
      int64_t last = kUnset;
      for (uint32_t i = 0; i < stripes_; ++i) last = std::max(last, t[i].last_ms.load());
      st.pending = summary_of(untaken, x->first_ms.load(), last);
      st.pending_counts = untaken_event_counts(x);
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
    if (bk.bucket > bucket_of_now(w)) continue;
    for (uint32_t e = 0; e < spec_.events && e < bk.counts.size(); ++e)
      if (bk.counts[e] != 0) add_at(w, bk.bucket, e, bk.counts[e], /*kept=*/true);
  }
  const uint64_t untaken = st.pending.suppressed != 0 ? st.pending.suppressed : st.alert_suppressed;
  if (untaken != 0) {
    Ext* x = ensure_ext();
    if (st.pending.suppressed != 0) x->throttled.store(true, std::memory_order_relaxed);
    TallySlot& slot = x->tally()[stripe_id() & (stripes_ - 1)];
    slot.count.fetch_add(untaken, std::memory_order_relaxed);
    if (st.pending.suppressed != 0) {
      atomic_max(slot.last_ms, st.pending.last_ms);
      x->first_ms.store(st.pending.first_ms);
    }
    if (st.pending.suppressed != 0 && !st.pending_counts.empty()) {
      const auto n = static_cast<uint32_t>(std::min<std::size_t>(st.pending_counts.size(), 64));
      Cell* be = ensure_by_event(x, n);
      const uint32_t have = x->events_n.load(std::memory_order_relaxed);
      Cell* mine = be + (stripe_id() & (stripes_ - 1)) * event_stride(have);
      for (uint32_t e = 0; e < n && e < have; ++e) mine[e].fetch_add(st.pending_counts[e], std::memory_order_relaxed);
    }
  }
  state_.store(pack_alert_state({st.firing, st.announced, st.alerted, st.last_alert_ms}));
}

}  // namespace swthrottle::window
