// DistinctWindow: the window of one key of a rule with `distinct`: an
// alert window of the rule's events (either mode) and a DistinctCount of
// the values its lines render (window/distinct_count.h), decided together.
//
// A condition sees the events' counts, then the count of distinct values
// (counts[E], `distinct` in the `when` language). One lock (a TinyMutex,
// in either mode) makes "count the events and the value, read, decide" one
// step: a set of values is not kept lock-free here, so decisions of a
// distinct rule are exact in both modes. Lock order: this window's lock,
// then the inner window's (accurate mode).
//
// Built in place, in one piece with its inner window and counters (a
// key's slot, engine/keymap.h): DistinctWindow, then the inner window.
// Internal to src/engine/.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "engine/window_maker.h"
#include "window/distinct_count.h"
#include "window/tiny_mutex.h"
#include "window/window.h"

namespace swthrottle::engine {

class DistinctWindow final : public window::Window {
 public:
  static const WindowMaker& maker();

  ~DistinctWindow() override;
  DistinctWindow(const DistinctWindow&) = delete;
  DistinctWindow& operator=(const DistinctWindow&) = delete;

  struct Outcome {
    window::AlertOutcome alert;
    window::DistinctCount::Count distinct;
  };
  // An alert rule's line: its events counted and its value (its hash; none
  // when the template rendered nothing) added at t, then the policy decides
  // on counts_out = [the events' counts..., distinct] (size E + 1).
  Outcome offer_distinct(int64_t t_ms, int64_t now_ms, uint64_t events, std::optional<uint64_t> value,
                         const window::AlertPolicy& policy, std::span<uint64_t> counts_out);
  // The boundary check, as tick_alert, also telling whether the count is estimated.
  Outcome tick_distinct(int64_t now_ms, const window::AlertPolicy& policy, std::span<uint64_t> counts_out);

  window::AddResult add(int64_t t_ms, uint32_t event, uint64_t n) override;
  void advance(int64_t now_ms) override;
  // The events' counts, then (room permitting) the count of distinct values.
  void read(std::span<uint64_t> out) const override;
  int64_t now_ms() const override;
  // A distinct rule is an alert rule: a throttle's calls go to the inner window.
  window::ThrottleOutcome offer_throttle(int64_t t_ms, int64_t now_ms, uint64_t limit, uint32_t event,
                                         window::LineEvents events, std::span<uint64_t> counts_out) override;
  window::Summary tick_throttle(int64_t now_ms, uint64_t limit, std::span<uint64_t> counts_out) override;
  window::Summary take_pending(std::span<uint64_t> counts_out) override;
  window::AlertOutcome offer_alert(int64_t t_ms, int64_t now_ms, uint64_t events, const window::AlertPolicy& policy,
                                   std::span<uint64_t> counts_out) override;
  window::AlertOutcome tick_alert(int64_t now_ms, const window::AlertPolicy& policy,
                                  std::span<uint64_t> counts_out) override;
  bool quiet() const override;
  window::WindowState save() const override;
  void load(const window::WindowState& state) override;

 private:
  DistinctWindow(const window::WindowSpec& spec, window::Window* inner);
  static std::size_t bytes_at(window::Mode mode, const window::WindowSpec& spec);
  static window::Window* make_at(void* where, window::Mode mode, const window::WindowSpec& spec);
  static std::size_t header_bytes();

  mutable window::TinyMutex mu_;  // guards distinct_ and every call into inner_
  window::DistinctCount distinct_;
  window::Window* inner_;  // in the same memory, after this object
};

}  // namespace swthrottle::engine
