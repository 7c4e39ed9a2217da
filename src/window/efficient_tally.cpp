// EfficientWindow's tally of held-back lines: striped counters of the lines
// a throttle suppressed (and, for a rule of several events, of each event
// among them), which a summary takes without a reset.
#include <algorithm>
#include <array>

#include "util/atomic_max.h"
#include "window/efficient.h"
#include "window/stripe.h"

namespace swthrottle::window {

void EfficientWindow::tally_events(Ext* x, uint32_t stripe, LineEvents events) {
  Cell* be = ensure_by_event(x, events.of);
  const uint32_t n = x->events_n.load(std::memory_order_relaxed);
  Cell* mine = be + stripe * event_stride(n);
  for (uint64_t m = events.mask; m != 0; m &= m - 1) {
    const auto e = static_cast<uint32_t>(std::countr_zero(m));
    if (e < n) mine[e].fetch_add(1, std::memory_order_relaxed);
  }
}

void EfficientWindow::tally_add(Ext* x, int64_t decided_ms, LineEvents events) {
  const uint32_t stripe = stripe_id() & (stripes_ - 1);
  // The events before the line itself: a summary that takes the line then
  // usually takes its events too. One that races it (several inputs) leaves
  // them to the next summary; none is lost or counted twice. Out of line, so
  // that the flood path of a one-event rule stays as small as it was.
  if (events.of != 0) tally_events(x, stripe, events);
  TallySlot& slot = x->tally()[stripe];
  slot.count.fetch_add(1, std::memory_order_relaxed);
  // The latest and the earliest decision times (a line a moment out of order
  // is decided at its own, older time): in a flood whose times only grow,
  // each is a load of a read-mostly line and at most a store.
  atomic_max(slot.last_ms, decided_ms);
  int64_t first = x->first_ms.load(std::memory_order_relaxed);
  while ((first == kUnset || decided_ms < first) && !x->first_ms.compare_exchange_weak(first, decided_ms)) {
  }
}

uint64_t EfficientWindow::tally_total(const Ext* x) const {
  if (x == nullptr) return 0;
  const TallySlot* t = x->tally();
  uint64_t sum = 0;
  for (uint32_t i = 0; i < stripes_; ++i) sum += t[i].count.load(std::memory_order_relaxed);
  return sum;
}

// The tally not yet reported. reported is read first: a report racing this
// read can only raise it, and reading it after the tally could underflow.
uint64_t EfficientWindow::untaken_tally() const {
  const Ext* x = ext();
  if (x == nullptr) return 0;
  const uint64_t reported = x->reported.load();
  const uint64_t total = tally_total(x);
  return total > reported ? total - reported : 0;
}

std::vector<uint64_t> EfficientWindow::untaken_event_counts(const Ext* x) const {
  std::vector<uint64_t> out;
  const Cell* be = x != nullptr ? x->by_event.load(std::memory_order_acquire) : nullptr;
  if (be == nullptr) return out;
  const uint32_t n = x->events_n.load(std::memory_order_relaxed);
  out.resize(n);
  for (uint32_t e = 0; e < n; ++e) {
    const uint64_t reported = be[stripes_ * event_stride(n) + e].load();
    uint64_t total = 0;
    for (uint32_t i = 0; i < stripes_; ++i) total += be[i * event_stride(n) + e].load(std::memory_order_relaxed);
    out[e] = total > reported ? total - reported : 0;
  }
  return out;
}

// As take_summary() does for the tally, per event: each event's reported
// total only grows (CAS to the larger), so two summaries racing here split
// the growth between them and never count a line twice.
void EfficientWindow::take_event_counts(Ext* x, std::span<uint64_t> out) {
  std::fill(out.begin(), out.end(), 0);
  Cell* be = x->by_event.load(std::memory_order_acquire);
  if (be == nullptr) return;
  const uint32_t n = x->events_n.load(std::memory_order_relaxed);
  // Every event's growth is taken, whether the caller wants it or not: an
  // untaken one would show up in the next summary.
  for (uint32_t e = 0; e < n; ++e) {
    Cell& reported = be[stripes_ * event_stride(n) + e];
    uint64_t prev = reported.load();
    uint64_t total = 0;
    for (uint32_t i = 0; i < stripes_; ++i) total += be[i * event_stride(n) + e].load(std::memory_order_relaxed);
    while (total > prev && !reported.compare_exchange_weak(prev, total)) {
    }
    if (e < out.size()) out[e] = total > prev ? total - prev : 0;
  }
}

// A summary of `suppressed` lines with the earliest and latest decision
// times the tally holds. An add racing the summary may have counted its
// line before setting its times (they then go to the next summary): the
// times are kept in order, first <= last <= now, whatever it did.
Summary EfficientWindow::summary_of(uint64_t suppressed, int64_t first, int64_t last) const {
  if (first == kUnset && last == kUnset) first = last = now_ms_.load();
  if (first == kUnset) first = last;
  if (last == kUnset || last < first) last = first;
  return Summary{suppressed, first, last};
}

// Tallies are never reset (a striped read-then-reset loses counts, cf.
// LongAdder.sumThenReset): a report takes the growth since the last report.
Summary EfficientWindow::take_summary(std::span<uint64_t> counts_out) {
  Ext* x = ext();
  if (x == nullptr) return {};
  TallySlot* t = x->tally();
  const uint64_t total = tally_total(x);
  uint64_t prev = x->reported.load();
  while (total > prev) {
    if (x->reported.compare_exchange_weak(prev, total)) {
      // The times are taken with the tally: the next summary's are its own.
      int64_t last = kUnset;
      for (uint32_t i = 0; i < stripes_; ++i) last = std::max(last, t[i].last_ms.exchange(kUnset));
      const Summary s = summary_of(total - prev, x->first_ms.exchange(kUnset), last);
      take_event_counts(x, counts_out);
      return s;
    }
  }
  return {};
}

}  // namespace swthrottle::window
