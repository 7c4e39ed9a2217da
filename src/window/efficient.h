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
// A window starts with one block of B x E cells that every thread adds to.
// The first time a CAS on it fails (contention), like Java's LongAdder, it
// allocates S stripes of B x E cells, each padded to 128 bytes, and from then
// on a thread adds to its own stripe (stripe_id() mod S); the first block is
// still summed and swept, but no new add starts on it. So an idle key costs
// one block, which the caller may place, unpadded, right after the window
// (make_window_at: a key's slot, window and cells in one allocation), and a
// contended key stops writing the block that shares cache lines with the
// window's own fields.
//
// Previous window (WindowSpec::previous): the ring has 2B slots; a cell B to
// 2B - 1 buckets old is read as the previous window's, never decided on, a
// jump of 2B (not B) starts a new generation, and sweeps clear what is older
// than 2B. Without it everything is as above.
//
// Memory: 88 bytes plus B x E x 8 (2B x E x 8) for the first block; what only a contended
// or suppressing window needs (the stripes, the suppression tally, the summary
// bookkeeping) hangs off one pointer, allocated the first time it is needed.
//
// Exact:
//  - no add is lost: once adds are quiet, read() equals the accepted adds whose
//    bucket is in the window at now (late adds are refused, never half-counted);
//  - single-threaded (and with -j for one input, which decides in order), every
//    decision equals AccurateWindow's;
//  - an alert or resolve transition happens exactly once (CAS on one state word);
//  - suppressed counts of summaries and alerts add up to what was suppressed,
//    and so do the per-event counts of summaries (LineEvents), event by event.
// Approximate, with several threads deciding on one window at once (T):
//  - a throttle passes between min(Y, offered) and Y + T - 1 lines per window
//    position (a pass reads the sum, then adds; at most T-1 adds are in flight);
//  - an alert's counts may miss adds still in flight; `first`/`last` of a
//    summary may include a line of a neighbouring summary, and its per-event
//    counts may leave the events of a line still being tallied to the next.
// Flood path: once a throttle has seen sum >= Y at a position, it latches that
// position and later decisions there cost two loads and a striped tally add.
//
// Thread-safety: every method may be called concurrently. A window is used
// either as a throttle or as an alert, not both (they share the tally).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "window/stripe.h"
#include "window/window.h"

namespace swthrottle::window {

class EfficientWindow final : public Window {
 public:
  // stripes: power of two, 0 = default_stripes().
  explicit EfficientWindow(const WindowSpec& spec, uint32_t stripes = 0);
  // The first block in `cells`: cells_bytes(spec) bytes, 8-aligned, that the
  // caller owns and frees after the window.
  EfficientWindow(const WindowSpec& spec, uint32_t stripes, void* cells);
  ~EfficientWindow() override;
  EfficientWindow(const EfficientWindow&) = delete;
  EfficientWindow& operator=(const EfficientWindow&) = delete;

  AddResult add(int64_t t_ms, uint32_t event, uint64_t n = 1) override;
  void advance(int64_t now_ms) override;
  void read(std::span<uint64_t> out) const override;
  int64_t now_ms() const override { return now_ms_.load(); }

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

  static std::size_t cells_bytes(const WindowSpec& spec) {
    return sizeof(uint64_t) * spec.ring() * std::size_t(spec.events);
  }

  uint32_t stripes() const { return stripes_; }
  bool contended() const { return more() != nullptr; }

 private:
  using Cell = std::atomic<uint64_t>;
  static constexpr int64_t kUnset = INT64_MIN;
  struct alignas(kFalseSharingRange) TallySlot {
    std::atomic<uint64_t> count{0};
    std::atomic<int64_t> last_ms{kUnset};  // latest decision time of a line tallied here since the last summary
  };
  // Allocated the first time the window is contended or suppresses, followed
  // by its S tally slots in the same block: one pointer from the window to
  // both, so a suppression chases no more pointers than with the tally in the
  // window. Padded to its own 128 bytes: every add of a contended key and
  // every suppression reads it, and neither a tally slot's nor a neighbour's
  // writes may evict it.
  struct alignas(kFalseSharingRange) Ext {
    std::atomic<Cell*> more{nullptr};       // S stripes of stride() cells, from the first contention
    std::atomic<uint64_t> reported{0};      // tally total at the last summary or alert
    std::atomic<int64_t> first_ms{kUnset};  // earliest decision time of a suppressed line since the summary
    std::atomic<bool> throttled{false};     // used as a throttle: its tally is pending summaries
    std::atomic<uint32_t> events_n{0};      // n of by_event, stored before by_event is published
    // Per-event tallies of suppressed lines (LineEvents), from the first one:
    // S stripes of event_stride(n) words, then n words "reported" (the
    // per-event totals at the last summary, as `reported` is for the tally).
    std::atomic<Cell*> by_event{nullptr};

    TallySlot* tally() { return std::launder(reinterpret_cast<TallySlot*>(this + 1)); }
    const TallySlot* tally() const { return std::launder(reinterpret_cast<const TallySlot*>(this + 1)); }
  };

  uint64_t advance_to(int64_t t_ms);  // returns the now word after
  // kept: b may be in the previous window too (load()); else older than the window is late.
  AddResult add_at(uint64_t now_word, int64_t b, uint32_t event, uint64_t n, bool kept = false);
  // The window's counts into out (and with the previous window, its counts
  // after them, when out has room); returns the window's total. out may be empty.
  uint64_t sum_at(uint64_t now_word, std::span<uint64_t> out) const;
  void sweep(uint64_t now_word);
  // Calls f(blk) for the first block and, once contended, every stripe.
  template <typename F>
  void for_each_block(F&& f) const;
  // Words per stripe: B*E rounded up to 128 bytes.
  std::size_t stride() const {
    constexpr std::size_t kWords = kFalseSharingRange / sizeof(Cell);
    return (std::size_t(spec_.ring()) * spec_.events + kWords - 1) / kWords * kWords;
  }
  Ext* ext() const { return ext_.load(std::memory_order_acquire); }
  Cell* more() const {
    const Ext* x = ext();
    return x != nullptr ? x->more.load(std::memory_order_acquire) : nullptr;
  }
  Ext* ensure_ext();
  static Ext* new_ext(uint32_t stripes);
  static void delete_ext(Ext* x, uint32_t stripes);
  Cell* ensure_more();
  void tally_add(Ext* x, int64_t decided_ms, LineEvents events = {});
  [[gnu::noinline]] void tally_events(Ext* x, uint32_t stripe, LineEvents events);
  // Words per stripe of per-event tallies: n rounded up to 128 bytes, so
  // stripes do not share lines.
  static std::size_t event_stride(uint32_t n) {
    constexpr std::size_t kWords = kFalseSharingRange / sizeof(Cell);
    return (std::size_t(n) + kWords - 1) / kWords * kWords;
  }
  static std::size_t by_event_words(uint32_t stripes, uint32_t n) { return stripes * event_stride(n) + n; }
  Cell* ensure_by_event(Ext* x, uint32_t n);
  // The per-event growth since the last report, which it then becomes, into
  // out (zeroed first).
  void take_event_counts(Ext* x, std::span<uint64_t> out);
  std::vector<uint64_t> untaken_event_counts(const Ext* x) const;
  uint64_t tally_total(const Ext* x) const;
  uint64_t untaken_tally() const;
  Summary take_summary(std::span<uint64_t> counts_out);
  Summary summary_of(uint64_t suppressed, int64_t first, int64_t last) const;
  uint64_t take_alert_suppressed();
  AlertAction decide_alert(const AlertPolicy& policy, AlertOutcome& out, std::span<uint64_t> counts_out,
                           bool from_event);

  uint32_t stripes_;  // S, a power of two
  bool owns_base_;    // base_ was allocated by the window

  // Default seq_cst on cells, now_ and state_: a pass must see every add that
  // completed before its read began (the T-1 bound), and two adds completing a
  // crossing must not both miss each other (store buffering). On x86 a seq_cst
  // load is a plain mov and every lock cmpxchg is a full barrier anyway.
  std::atomic<uint64_t> now_{0};                    // [gen:8 | newest bucket:56]; only grows
  std::atomic<int64_t> now_ms_{-1};                 // newest time seen (CAS-max)
  std::atomic<uint64_t> saturated_at_{UINT64_MAX};  // throttle latch: a now word where sum >= Y was seen
  std::atomic<uint64_t> saturated_limit_{0};        // the Y it was seen with
  std::atomic<uint64_t> state_{0};                  // alert: [firing:1 | announced:1 | alerted:1 | last alert ms:61]
  Cell* base_;                                      // the first block: B*E cells
  std::atomic<Ext*> ext_{nullptr};                  // release/acquire publication, like its pointers
};

}  // namespace swthrottle::window
