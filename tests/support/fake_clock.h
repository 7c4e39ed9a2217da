// FakeClock: a Clock whose time moves only when a test says so. Code waiting
// on it (Clock::wait_until) wakes when advance() reaches its deadline, not
// after real time: a 60 s backoff takes one advance(60'000).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "util/clock.h"

namespace swthrottle::test {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t wall_ms = 1'795'255'200'000, int64_t steady_ms = 1'000)
      : wall_(wall_ms), steady_(steady_ms) {}
  int64_t steady_ms() const override { return steady_.load(); }
  int64_t wall_ms() const override { return wall_.load(); }
  void advance(int64_t ms) {
    steady_ += ms;
    wall_ += ms;
  }
  // How many threads are in a wait on this clock now: a test advances once
  // the thread it drives is waiting, so the step it takes is the one meant.
  int waiting() const { return waiting_.load(); }

 protected:
  // advance() cannot notify the waiter's condition variable (it does not
  // know it, nor may it take the waiter's lock), so a wait looks at the
  // fake time again after at most a millisecond of real time.
  void wait_step(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, int64_t) const override {
    ++waiting_;
    cv.wait_for(lock, std::chrono::milliseconds(1));
    --waiting_;
  }

 private:
  std::atomic<int64_t> wall_;
  std::atomic<int64_t> steady_;
  mutable std::atomic<int> waiting_{0};
};

}  // namespace swthrottle::test
