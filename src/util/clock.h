// Clocks live at the edges: the core takes time as an argument. This is the
// one place that reads them.
#pragma once

#include <chrono>
#include <cstdint>

namespace swthrottle {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t steady_ms() const = 0;  // monotonic, arbitrary origin
  virtual int64_t wall_ms() const = 0;    // Unix epoch, UTC
};

class SystemClock final : public Clock {
 public:
  int64_t steady_ms() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  int64_t wall_ms() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

// The process's one SystemClock, for callers that take a Clock and are not
// under test.
inline const Clock& system_clock() {
  static const SystemClock clock;
  return clock;
}

// Arrival time (DESIGN.md §4): wall-clock at start plus monotonic time since, so
// times written out read as UTC while a clock step during the run can never
// move a window backwards or forwards.
class ArrivalClock {
 public:
  explicit ArrivalClock(const Clock& c) : clock_(c), wall0_(c.wall_ms()), steady0_(c.steady_ms()) {}
  int64_t now_ms() const { return wall0_ + (clock_.steady_ms() - steady0_); }
  // The steady time at which now_ms() will read `arrival_ms`.
  int64_t steady_at(int64_t arrival_ms) const { return steady0_ + (arrival_ms - wall0_); }

 private:
  const Clock& clock_;
  int64_t wall0_;
  int64_t steady0_;
};

}  // namespace swthrottle
