// FakeClock: a Clock whose time moves only when a test says so.
#pragma once

#include <atomic>
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

 private:
  std::atomic<int64_t> wall_;
  std::atomic<int64_t> steady_;
};

}  // namespace swthrottle::test
