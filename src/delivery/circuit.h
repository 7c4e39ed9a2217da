// Circuit: one destination's breaker, so that a dead receiver cannot hold
// up the others or be hammered (man page: DELIVERY). Pure: time comes in.
//
// Closed: every attempt goes. After `failures_to_open` failed attempts in a
// row it opens: no attempt for `open_ms`, then half-open: one trial attempt;
// its success closes the circuit, its failure opens it again for twice as
// long (at most max_open_ms).
//
// A success closes the circuit whatever its state (the receiver answered). A
// failure reported while it is Open (an attempt that went before it opened)
// changes nothing. failures_to_open 0 counts as 1.
#pragma once

#include <cstdint>

namespace swthrottle::delivery {

class Circuit {
 public:
  enum class State { Closed, Open, HalfOpen };

  explicit Circuit(uint32_t failures_to_open = 5, int64_t open_ms = 10'000, int64_t max_open_ms = 5 * 60'000);

  // May an attempt go now? (Open -> HalfOpen once open_ms has passed: then
  // true once, until success() or failure().)
  bool allow(int64_t now_ms);
  void success();
  void failure(int64_t now_ms);
  State state() const { return state_; }
  // When an Open circuit lets the next trial through.
  int64_t reopens_at() const { return until_ms_; }

 private:
  uint32_t failures_to_open_;
  int64_t open_ms_, max_open_ms_;
  State state_ = State::Closed;
  uint32_t failures_ = 0;
  int64_t current_open_ms_ = 0;
  int64_t until_ms_ = 0;
  bool trial_out_ = false;
};

}  // namespace swthrottle::delivery
