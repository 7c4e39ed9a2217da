// Clocks live at the edges: the core takes time as an argument. This is the
// one place that reads them, and the one way the edges wait on them, so that
// a test's FakeClock drives retries, backoff and timers without sleeping.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace swthrottle {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t steady_ms() const = 0;  // monotonic, arbitrary origin
  virtual int64_t wall_ms() const = 0;    // Unix epoch, UTC

  // Waits on `cv`, with `lock` held as std::condition_variable requires,
  // until `ready()` holds or steady_ms() reaches `deadline_ms`; returns
  // ready(). Whoever makes `ready()` true notifies `cv` under the lock, as
  // with any condition variable; the time running out needs no notify.
  template <class Ready>
  bool wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, int64_t deadline_ms,
                  Ready ready) const {
    while (!ready()) {
      if (steady_ms() >= deadline_ms) return false;
      wait_step(cv, lock, deadline_ms);
    }
    return true;
  }
  template <class Ready>
  bool wait_for(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, int64_t ms, Ready ready) const {
    return wait_until(cv, lock, steady_ms() + ms, ready);
  }

 protected:
  // One wait on `cv` that ends by `deadline_ms` at the latest (steady time).
  // It may end early (a notify, a spurious wake-up): the caller checks.
  virtual void wait_step(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         int64_t deadline_ms) const = 0;
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

 protected:
  void wait_step(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, int64_t deadline_ms) const override {
    cv.wait_until(lock, std::chrono::steady_clock::time_point(std::chrono::milliseconds(deadline_ms)));
  }
};

// The process's one SystemClock, for callers that take a Clock and are not
// under test.
inline const Clock& system_clock() {
  // Never destroyed: the signal thread, detached, may still be waiting on it
  // (a SIGTERM's wait for the run to finish) while the process exits and
  // destroys its statics. Held by a static, so LeakSanitizer sees it reachable.
  static const Clock* const clock = new SystemClock();
  return *clock;
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
