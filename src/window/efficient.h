// EfficientWindow: a sliding window with lock-free striped counters.
//
// Each counter cell is one 64-bit word [gen:8 | tag:24 | count:32]. The tag is
// the bucket number (mod 2^24) the count belongs to, in the same word as the
// count, so "reset the stale bucket" and "count the first event of the new
// one" are a single CAS: there is no separate reset that could race with an
// add (Sentinel #2949/#2945) and no add lands in the wrong window. The window's
// position is one word too, now_ = [gen:8 | newest bucket:56]; `gen` changes
// whenever now jumps by a whole window or more, which makes every older cell
// stale at once, however far time jumped (2^33 buckets included), and sweeps
// (CAS stale -> 0) at every such jump and every 2^21 buckets keep tags from
// ever wrapping onto a live bucket.
//
// Threads write their own stripe (stripe_id() mod S) of B x E cells, padded to
// 128 bytes. A window starts with one stripe and allocates the other S-1 the
// first time a CAS on it fails (contention), like Java's LongAdder, so idle
// keys cost one block.
//
// Exact:
//  - no add is lost: once adds are quiet, read() equals the accepted adds whose
//    bucket is in the window at now (late adds are refused, never half-counted);
//  - single-threaded (and with -j for one input, which decides in order), every
//    decision equals AccurateWindow's;
//  - an alert or resolve transition happens exactly once (CAS on one state word);
//  - suppressed counts of summaries and alerts add up to what was suppressed.
// Approximate, with several threads deciding on one window at once (T):
//  - a throttle passes between min(Y, offered) and Y + T - 1 lines per window
//    position (a pass reads the sum, then adds; at most T-1 adds are in flight);
//  - an alert's counts may miss adds still in flight; `first`/`last` of a
//    summary may include a line of a neighbouring summary.
// Flood path: once a throttle has seen sum >= Y at a position, it latches that
// position and later decisions there cost two loads and a striped tally add.
//
// Thread-safety: every method may be called concurrently. A window is used
// either as a throttle or as an alert, not both (they share the tally).
#pragma once

#include <atomic>
#include <cstdint>

#include "window/stripe.h"
#include "window/window.h"

namespace swthrottle::window {

class EfficientWindow final : public Window {
 public:
  // stripes: power of two, 0 = default_stripes().
  explicit EfficientWindow(const WindowSpec& spec, uint32_t stripes = 0);
  ~EfficientWindow() override;
  EfficientWindow(const EfficientWindow&) = delete;
  EfficientWindow& operator=(const EfficientWindow&) = delete;

  AddResult add(int64_t t_ms, uint32_t event, uint64_t n = 1) override;
  void advance(int64_t now_ms) override;
  void read(std::span<uint64_t> out) const override;
  int64_t now_ms() const override { return now_ms_.load(); }

  ThrottleOutcome offer_throttle(int64_t t_ms, int64_t now_ms, uint64_t limit,
                                 uint32_t event = 0) override;
  Summary tick_throttle(int64_t now_ms, uint64_t limit) override;
  Summary take_pending() override;

  AlertOutcome offer_alert(int64_t t_ms, int64_t now_ms, uint64_t events, const AlertPolicy& policy,
                           std::span<uint64_t> counts_out) override;
  AlertOutcome tick_alert(int64_t now_ms, const AlertPolicy& policy,
                          std::span<uint64_t> counts_out) override;
  bool quiet() const override;
  WindowState save() const override;
  void load(const WindowState& state) override;

  uint32_t stripes() const { return stripes_; }
  bool contended() const { return more_.load(std::memory_order_acquire) != nullptr; }

 private:
  using Cell = std::atomic<uint64_t>;
  struct alignas(kFalseSharingRange) TallySlot {
    std::atomic<uint64_t> count{0};
    std::atomic<int64_t> last_ms{0};
  };

  uint64_t advance_to(int64_t t_ms);  // returns the now word after
  AddResult add_at(uint64_t now_word, int64_t b, uint32_t event, uint64_t n);
  uint64_t sum_at(uint64_t now_word, std::span<uint64_t> out) const;  // out may be empty
  void sweep(uint64_t now_word);
  Cell* block(uint32_t s, Cell* more) const { return s == 0 ? base_ : more + std::size_t(s - 1) * stride_; }
  Cell* ensure_more();
  TallySlot* ensure_tally();
  void tally_add(int64_t decided_ms);
  uint64_t tally_total() const;
  uint64_t untaken_tally() const;
  Summary take_summary();
  uint64_t take_alert_suppressed();
  AlertAction decide_alert(const AlertPolicy& policy, AlertOutcome& out, std::span<uint64_t> counts_out,
                          bool from_event);

  uint32_t stripes_;  // S, a power of two
  uint32_t stride_;   // words per stripe block (B*E rounded up to 128 bytes)

  // Default seq_cst on cells, now_ and state_: a pass must see every add that
  // completed before its read began (the T-1 bound), and two adds completing a
  // crossing must not both miss each other (store buffering). On x86 a seq_cst
  // load is a plain mov and every lock cmpxchg is a full barrier anyway.
  std::atomic<uint64_t> now_{0};         // [gen:8 | newest bucket:56]; only grows
  std::atomic<int64_t> now_ms_{-1};      // newest time seen (CAS-max)
  std::atomic<uint64_t> saturated_at_{UINT64_MAX};  // throttle latch: a now word where sum >= Y was seen
  std::atomic<uint64_t> saturated_limit_{0};        // the Y it was seen with
  std::atomic<uint64_t> state_{0};       // alert: [firing:1 | announced:1 | alerted:1 | last alert ms:61]
  Cell* base_;                           // stripe 0, allocated with the window
  std::atomic<Cell*> more_{nullptr};     // stripes 1..S-1 (release/acquire publication)
  std::atomic<TallySlot*> tally_{nullptr};  // S slots, allocated at the first suppression
  std::atomic<uint64_t> reported_{0};    // tally total at the last summary or alert
  std::atomic<int64_t> first_ms_;        // decision time of the first suppressed line since the summary
  std::atomic<bool> throttled_{false};   // used as a throttle: its tally is pending summaries
};

}  // namespace swthrottle::window
