// AccurateWindow: a sliding window whose every decision is exact.
//
// Exact: one mutex makes "advance, add, read, decide and change state" a single
// step, so with any number of threads a throttle passes exactly min(Y, offered)
// lines per window position, no count is ever lost, and an alert crossing (or a
// resolve) is decided exactly once. The only inexactness is the bucket
// granularity every window has: the window covers (X - w, X] (see bucket.h).
//
// Layout: a ring of B slots x E counters plus running totals per event
// (subtract-on-evict), so reads are O(E) and an advance clears at most B slots
// whatever the gap (2^33 buckets included). Every slot inside the window holds
// exactly its bucket: advancing clears each slot as its bucket leaves. With
// the previous window (WindowSpec::previous) the ring has 2B slots and a
// second row of E totals: a bucket leaving the window moves its counts from
// the first row to the second, and leaves the second B buckets later.
//
// Late events (older than the window at now) are never added: add() and
// offer_alert() report them; offer_throttle() decides and counts them at now.
// A time older than now but inside the window goes into its own bucket; time
// never moves the window backwards.
//
// Thread-safety: every method may be called concurrently. Cost: one
// uncontended lock (~15 ns); contended on one hot key, calls serialize. The
// lock is a 4-byte TinyMutex: every key of an accurate keyed rule has one.
//
// Memory: 104 bytes plus (1 + B) x E counters (2 + 2B with the previous
// window), which either the window allocates or the caller provides (make_window_at: a key's slot holds its
// window and counters in one allocation).
#pragma once

#include <cstddef>
#include <memory>

#include "window/alert_state.h"
#include "window/tiny_mutex.h"
#include "window/window.h"

namespace swthrottle::window {

class AccurateWindow final : public Window {
 public:
  explicit AccurateWindow(const WindowSpec& spec);
  // Counts in `storage`: storage_bytes(spec) bytes, 8-aligned, that the caller
  // owns and frees after the window.
  AccurateWindow(const WindowSpec& spec, void* storage);
  ~AccurateWindow() override;
  AccurateWindow(const AccurateWindow&) = delete;
  AccurateWindow& operator=(const AccurateWindow&) = delete;

  static std::size_t storage_bytes(const WindowSpec& spec) {
    return sizeof(uint64_t) * (spec.counts_width() + std::size_t(spec.ring()) * spec.events);
  }

  AddResult add(int64_t t_ms, uint32_t event, uint64_t n = 1) override;
  void advance(int64_t now_ms) override;
  void read(std::span<uint64_t> out) const override;
  int64_t now_ms() const override;

  ThrottleOutcome offer_throttle(int64_t t_ms, int64_t now_ms, uint64_t limit, uint32_t event = 0,
                                 LineEvents events = {}, std::span<uint64_t> counts_out = {}) override;
  Summary tick_throttle(int64_t now_ms, uint64_t limit, std::span<uint64_t> counts_out = {}) override;
  Summary take_pending(std::span<uint64_t> counts_out = {}) override;

  AlertOutcome offer_alert(int64_t t_ms, int64_t now_ms, uint64_t events, const AlertPolicy& policy,
                           std::span<uint64_t> counts_out) override;
  AlertOutcome tick_alert(int64_t now_ms, const AlertPolicy& policy, std::span<uint64_t> counts_out) override;
  bool quiet() const override;
  WindowState save() const override;
  void load(const WindowState& state) override;

 private:
  // All private helpers expect mu_ held.
  void advance_locked(int64_t t_ms);
  void add_locked(int64_t b, uint32_t event, uint64_t n);
  uint64_t total_locked() const;
  void copy_totals_locked(std::span<uint64_t> out) const;
  Summary take_pending_locked(std::span<uint64_t> counts_out);
  void tally_events_locked(LineEvents events);
  AlertState alert_state_locked() const;
  // Stores step.next and reports step.action in out, with the held-back
  // lines it carries (Alert also starts a new tally).
  void apply_alert_step_locked(const AlertStep& step, AlertOutcome& out);
  // A bucket leaving the window at its entering slot's bucket k (previous window: into the second row).
  void leave_window_locked(int64_t k);
  // load(): a saved bucket into its slot and its row of totals.
  void load_bucket_locked(int64_t b, std::span<const uint64_t> counts);
  uint64_t* counts(uint32_t slot) { return data_ + spec_.counts_width() + std::size_t(slot) * spec_.events; }
  const uint64_t* counts(uint32_t slot) const {
    return data_ + spec_.counts_width() + std::size_t(slot) * spec_.events;
  }
  // E totals of the window, then (previous window) E of the window before it.
  uint64_t* totals() { return data_; }
  const uint64_t* totals() const { return data_; }
  uint64_t* previous_totals() { return data_ + spec_.events; }

  // Members ordered so that the lock and the flags share one word.
  mutable TinyMutex mu_;  // guards everything below but owns_data_ and data_ (the pointer)
  // Alert state of this (rule, key).
  bool firing_ = false;
  bool announced_ = false;  // an alert was written for the current firing episode
  bool alerted_ = false;    // an alert was ever written (cooldown applies)
  const bool owns_data_;    // data_ was allocated by the window
  int64_t now_b_ = kNoBucket;
  int64_t now_ms_ = -1;
  // E running totals (2E with the previous window), then B (2B) slots of E counters.
  uint64_t* const data_;

  // Throttle: lines suppressed since the last summary.
  uint64_t pending_ = 0;
  int64_t first_ms_ = 0;
  int64_t last_ms_ = 0;
  // Their per-event counts (LineEvents): [0] is the number of events n, then
  // n counts. Allocated at the first suppression that tallies events, so a
  // window that never suppresses a multi-event rule's line pays 8 bytes.
  std::unique_ptr<uint64_t[]> pending_events_;

  // Alert (with firing_, announced_ and alerted_ above).
  int64_t last_alert_ms_ = 0;
  uint64_t alert_suppressed_ = 0;
};

}  // namespace swthrottle::window
