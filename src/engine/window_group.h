// WindowGroup: the windows of several rules that share one key map, built in
// one piece of memory. `swthrottle backtest` decides every candidate copy of
// a keyed rule (config::Rule::matched_as) on the keys of the rule it copies:
// the copies see the same hits and render the same keys, so their maps would
// hold the same keys in the same recency order and evict the same ones. One
// map whose slots hold a window per member finds a key once for all of them
// (a sweep of ten candidates made ten lookups, each a cache miss, per line).
//
// A candidate that differs from a member only in its condition or cooldown
// (an alert rule with the same window) needs no window of its own: an alert
// window counts every event whatever its rule decides, so the two windows
// would hold the same counts. Such a candidate is an AlertRider of that
// member's window: its own alert state (window/alert_state.h) and tally of
// held-back lines, stepped on the window's counts under riders_mutex(), which
// also covers the window's count, so that a rider decides on the counts its
// line made, as a window of its own would.
//
// A group also keeps, per member, the word a CountObserver may keep with a
// key: `swthrottle backtest` makes every observed keyed rule's map a group
// (of one member, if need be) for it.
//
// As a Window it is its first member, except quiet(), which holds only when
// every member is quiet and no rider is firing: a key stays among its map's
// active ones while any member has something pending or is firing (a
// boundary check of a quiet member's window changes nothing).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "window/alert_state.h"
#include "window/tiny_mutex.h"
#include "window/window.h"

namespace swthrottle::engine {

struct AlertRider {
  window::AlertState state;
  uint64_t held_back = 0;  // lines held back by the cooldown since the last alert
};

class WindowGroup final : public window::Window {
 public:
  // The bytes of a group of these members' windows and `riders` riders, from an aligned address.
  static std::size_t bytes_at(window::Mode mode, std::span<const window::WindowSpec> members, std::size_t riders);
  // Builds the group (each member's window, the riders) at `where`, kWindowAlign-aligned.
  static WindowGroup* make_at(void* where, window::Mode mode, std::span<const window::WindowSpec> members,
                              std::size_t riders);

  ~WindowGroup() override;
  WindowGroup(const WindowGroup&) = delete;
  WindowGroup& operator=(const WindowGroup&) = delete;

  window::Window& member(std::size_t i) const;
  std::size_t members() const { return count_; }
  // Under riders_mutex().
  AlertRider& rider(std::size_t i) const;
  // Member i's word for the engine's CountObserver (count_observer.h).
  std::atomic<uint32_t>& observer_memo(std::size_t i) const;
  window::TinyMutex& riders_mutex() const { return riders_mu_; }

  window::AddResult add(int64_t t_ms, uint32_t event, uint64_t n) override { return first().add(t_ms, event, n); }
  void advance(int64_t now_ms) override { first().advance(now_ms); }
  void read(std::span<uint64_t> out) const override { first().read(out); }
  int64_t now_ms() const override { return first().now_ms(); }
  window::ThrottleOutcome offer_throttle(int64_t t_ms, int64_t now_ms, uint64_t limit, uint32_t event,
                                         window::LineEvents events, std::span<uint64_t> counts_out) override {
    return first().offer_throttle(t_ms, now_ms, limit, event, events, counts_out);
  }
  window::Summary tick_throttle(int64_t now_ms, uint64_t limit, std::span<uint64_t> counts_out) override {
    return first().tick_throttle(now_ms, limit, counts_out);
  }
  window::Summary take_pending(std::span<uint64_t> counts_out) override { return first().take_pending(counts_out); }
  window::AlertOutcome offer_alert(int64_t t_ms, int64_t now_ms, uint64_t events, const window::AlertPolicy& policy,
                                   std::span<uint64_t> counts_out) override {
    return first().offer_alert(t_ms, now_ms, events, policy, counts_out);
  }
  window::AlertOutcome tick_alert(int64_t now_ms, const window::AlertPolicy& policy,
                                  std::span<uint64_t> counts_out) override {
    return first().tick_alert(now_ms, policy, counts_out);
  }
  bool quiet() const override;
  window::WindowState save() const override { return first().save(); }
  void load(const window::WindowState& state) override { first().load(state); }

 private:
  WindowGroup(const window::WindowSpec& first_spec, uint32_t count, uint32_t stride, uint32_t riders)
      : window::Window(first_spec), count_(count), stride_(stride), riders_(riders) {}
  static std::size_t header_bytes();
  window::Window& first() const { return member(0); }

  uint32_t count_;
  uint32_t stride_;  // bytes from one member's window to the next
  uint32_t riders_;
  mutable window::TinyMutex riders_mu_;
};

}  // namespace swthrottle::engine
