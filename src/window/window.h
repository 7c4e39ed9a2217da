// The Window interface of swthrottle's sliding-window core. Programs include
// "window/core.h", which brings in both implementations and TypedWindow.
//
// A window of X ms split into B buckets counts E event types per bucket and
// decides "throttle" (pass at most Y per window) and "alert" (raise once a
// condition over the counts holds, with cooldown and resolve) for one
// (rule, key). Time is always an argument in milliseconds; nothing here reads
// a clock. Two implementations share the Window interface:
//
//   AccurateWindow  (window/accurate.h)  one mutex; every decision is exact
//   EfficientWindow (window/efficient.h) lock-free striped cells; adds are
//                    never lost, a throttle may pass up to T-1 extra lines
//
// TypedWindow (window/typed.h) wraps either with an `enum class` of events.
//
// Two times go into a decision: `t`, the event's own time (bucket it counts
// in), and `now`, the newest time the caller has seen anywhere (the window's
// position). The window keeps its own now = max(every t and now given), so
// time never runs backwards inside it; callers that have no global clock pass
// now = t. An event whose bucket is older than the window at now is late.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "window/bucket.h"
#include "window/distinct_state.h"
#include "window/mode.h"

namespace swthrottle::window {

enum class AddResult { Added, Late };

// A condition over a window's per-event counts (the `when` of a rule).
class Condition {
 public:
  virtual ~Condition() = default;
  virtual bool holds(std::span<const uint64_t> counts) const = 0;
};

// Sum of all counts >= y: what `threshold = "Y per X"` means.
class AtLeast final : public Condition {
 public:
  explicit AtLeast(uint64_t y) : y_(y) {}
  bool holds(std::span<const uint64_t> counts) const override {
    uint64_t sum = 0;
    for (uint64_t c : counts) sum += c;
    return sum >= y_;
  }

 private:
  uint64_t y_;
};

struct AlertPolicy {
  const Condition* condition = nullptr;
  int64_t cooldown_ms = 0;  // least time between two alerts
  bool resolve = false;     // report when a announced condition stops holding
  // The condition that ends a firing episode once `condition` is false
  // (hysteresis: fire at >= 10, clear below 3). Null: `condition` false ends it.
  const Condition* clear = nullptr;
};

// Suppressed lines of a throttle since the last summary. suppressed == 0: none.
struct Summary {
  uint64_t suppressed = 0;
  // The earliest and latest decision times of the suppressed lines (lines a
  // moment out of order are decided at their own, older time): first_ms <=
  // last_ms <= the window's now whenever suppressed != 0, which a --state
  // load checks.
  int64_t first_ms = 0;
  int64_t last_ms = 0;
};

// The events a throttled line matched (bit i: event i of its rule), out of
// `of` events. A suppressed line adds one to each of them in the pending
// summary's per-event counts: how many of its lines matched each event (a
// line of two events counts in both). of == 0: no per-event tally. Every
// offer to one window gives the same `of`, at most 64.
struct LineEvents {
  uint64_t mask = 0;
  uint32_t of = 0;
};

struct ThrottleOutcome {
  bool passed = false;  // false: suppressed (and tallied)
  bool late = false;    // too old for the window: decided and counted at now
  int64_t now_ms = 0;   // the window's now after this step
  Summary summary;      // when passed: the tally to report before the line
};

enum class AlertAction { None, Alert, Resolved };

// "alert", "resolved"; "none" for None, which is never written.
constexpr std::string_view to_string(AlertAction a) {
  switch (a) {
    case AlertAction::Alert: return "alert";
    case AlertAction::Resolved: return "resolved";
    case AlertAction::None: break;
  }
  return "none";
}

struct AlertOutcome {
  AlertAction action = AlertAction::None;
  bool late = false;    // too old: nothing was added or evaluated
  bool holds = false;   // the condition at this step
  bool firing = false;  // after this step
  // Alert: lines that met the condition without an alert since the previous
  // alert. Resolved: those of the episode that ends (after its alert).
  uint64_t suppressed = 0;
  int64_t now_ms = 0;
};

// Everything a window holds, for --state: saved at the end of one run and
// loaded into a fresh window by the next, which then decides exactly as one
// long run would have.
struct WindowState {
  struct Bucket {
    int64_t bucket = 0;            // absolute bucket number, inside the window (or the previous one)
    std::vector<uint64_t> counts;  // E counts
  };
  int64_t now_ms = -1;
  std::vector<Bucket> buckets;           // oldest first; only buckets with a count
  Summary pending;                       // throttle: suppressed lines not yet reported
  std::vector<uint64_t> pending_counts;  // their per-event counts (LineEvents); empty: none tallied
  bool firing = false;                   // alert state
  bool announced = false;
  bool alerted = false;
  int64_t last_alert_ms = 0;
  uint64_t alert_suppressed = 0;
  DistinctState distinct{};  // a rule with `distinct`: its values (empty for any other window)
};

// A window for one (rule, key). See the implementations for which calls are
// exact and which are thread-safe; both are safe to call from several threads.
class Window {
 public:
  virtual ~Window() = default;

  const WindowSpec& spec() const { return spec_; }

  // Counting only (no decision): adds n to `event` at t. Late -> nothing added.
  virtual AddResult add(int64_t t_ms, uint32_t event, uint64_t n = 1) = 0;
  // Moves the window to now (never backwards).
  virtual void advance(int64_t now_ms) = 0;
  // Per-event counts in the window at its current now into out (size E).
  // A spec with `previous`: out may take counts_width() = 2E, the previous
  // window's E counts after the window's; so does every condition.
  virtual void read(std::span<uint64_t> out) const = 0;
  // Newest time seen, or -1 before any.
  virtual int64_t now_ms() const = 0;

  // Throttle: pass when the window holds fewer than `limit` counts, counting
  // the passed line as `event`; else suppress and tally (per event of
  // `events` too). The first per-event tally allocates once per window.
  //
  // counts_out, here and in the two below: whenever a summary is returned
  // (suppressed != 0), it receives the summary's per-event counts, zeros for
  // events not tallied; otherwise it is left as it was. A span, as for
  // alerts, so that the per-line path returns plain values.
  virtual ThrottleOutcome offer_throttle(int64_t t_ms, int64_t now_ms, uint64_t limit, uint32_t event = 0,
                                         LineEvents events = {}, std::span<uint64_t> counts_out = {}) = 0;
  // Boundary check of a throttle at now: when lines are pending and the
  // window has room again (< limit), returns their summary and resets the tally.
  virtual Summary tick_throttle(int64_t now_ms, uint64_t limit, std::span<uint64_t> counts_out = {}) = 0;
  // End of input / exit: the pending summary, whatever the window holds.
  virtual Summary take_pending(std::span<uint64_t> counts_out = {}) = 0;

  // Alert: adds one count for every bit of `events` at t, then evaluates the
  // policy's condition at now. counts_out (size E, or counts_width()) receives
  // the counts seen.
  virtual AlertOutcome offer_alert(int64_t t_ms, int64_t now_ms, uint64_t events, const AlertPolicy& policy,
                                   std::span<uint64_t> counts_out) = 0;
  // Boundary check of an alert at now: a firing key whose condition no longer
  // holds stops firing (Resolved when it was announced and policy.resolve).
  // Never raises an alert.
  virtual AlertOutcome tick_alert(int64_t now_ms, const AlertPolicy& policy, std::span<uint64_t> counts_out) = 0;

  // Nothing pending and not firing: boundary checks can skip this window.
  virtual bool quiet() const = 0;

  // A copy of the state. Exact when no other thread is using the window.
  virtual WindowState save() const = 0;
  // Replaces the state of a window that has not been used yet.
  virtual void load(const WindowState& state) = 0;

 protected:
  explicit Window(const WindowSpec& spec) : spec_(spec) {}
  WindowSpec spec_;
};

// A window of the given mode. `stripes` (efficient only; 0 = default_stripes()).
std::unique_ptr<Window> make_window(Mode mode, const WindowSpec& spec, uint32_t stripes = 0);

// A window built into memory the caller allocates, for containers of many
// windows (engine::KeyMap keeps a key, its window and the window's counters
// in one allocation). window_bytes_at(): the bytes from `where`, counters
// included. make_window_at() returns the window, at `where` itself;
// `where` must be kWindowAlign-aligned. The caller ends it with
// `w->~Window()` and then frees the memory.
inline constexpr std::size_t kWindowAlign = alignof(uint64_t);
std::size_t window_bytes_at(Mode mode, const WindowSpec& spec);
Window* make_window_at(void* where, Mode mode, const WindowSpec& spec, uint32_t stripes = 0);

}  // namespace swthrottle::window
