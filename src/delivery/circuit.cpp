#include "delivery/circuit.h"

#include <algorithm>

namespace swthrottle::delivery {

Circuit::Circuit(uint32_t failures_to_open, int64_t open_ms, int64_t max_open_ms)
    : failures_to_open_(std::max<uint32_t>(failures_to_open, 1)),
      open_ms_(std::max<int64_t>(open_ms, 0)),
      max_open_ms_(std::max(max_open_ms, open_ms_)),
      current_open_ms_(open_ms_) {}

bool Circuit::allow(int64_t now_ms) {
  switch (state_) {
    case State::Closed: return true;
    case State::Open:
      if (now_ms < until_ms_) return false;
      state_ = State::HalfOpen;
      trial_out_ = true;
      return true;
    case State::HalfOpen:
      // One trial at a time: the next attempt waits for its verdict.
      if (trial_out_) return false;
      trial_out_ = true;
      return true;
  }
  return false;
}

void Circuit::success() {
  // Whatever the state, the receiver just answered: it is up.
  state_ = State::Closed;
  failures_ = 0;
  current_open_ms_ = open_ms_;
  trial_out_ = false;
}

void Circuit::failure(int64_t now_ms) {
  switch (state_) {
    case State::Closed:
      if (++failures_ < failures_to_open_) return;
      current_open_ms_ = open_ms_;
      break;
    case State::HalfOpen:
      // The trial failed: the receiver is still down; look again later, and
      // less often each time it is still down.
      current_open_ms_ =
          std::min(current_open_ms_ > max_open_ms_ / 2 ? max_open_ms_ : current_open_ms_ * 2, max_open_ms_);
      break;
    case State::Open:
      // A late failure of an attempt that went before the circuit opened:
      // it is already open, and the wait already counts from that opening.
      return;
  }
  state_ = State::Open;
  until_ms_ = now_ms + current_open_ms_;
  failures_ = 0;
  trial_out_ = false;
}

}  // namespace swthrottle::delivery
