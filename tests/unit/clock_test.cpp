// Clock::wait_until, with the system clock and with a test's FakeClock: a
// wait ends when its condition holds or when the clock reaches the deadline,
// and a FakeClock's deadline is reached by advance(), not by real time.
#include <doctest/doctest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "support/fake_clock.h"
#include "util/clock.h"

using swthrottle::Clock;
using swthrottle::system_clock;
using swthrottle::test::FakeClock;

TEST_CASE("clock: a wait whose condition already holds returns at once, true") {
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock lock(mu);
  FakeClock fake;
  CHECK(fake.wait_for(cv, lock, 60'000, [] { return true; }));
  CHECK(fake.waiting() == 0);
  CHECK(system_clock().wait_for(cv, lock, 60'000, [] { return true; }));
}

TEST_CASE("clock: a deadline already past returns false without waiting") {
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock lock(mu);
  FakeClock fake;
  CHECK_FALSE(fake.wait_until(cv, lock, fake.steady_ms(), [] { return false; }));
  CHECK_FALSE(fake.wait_until(cv, lock, fake.steady_ms() - 5, [] { return false; }));
  CHECK(fake.waiting() == 0);
}

TEST_CASE("clock: a FakeClock wait ends when advance() reaches its deadline, not before") {
  std::mutex mu;
  std::condition_variable cv;
  FakeClock fake;
  const int64_t start = fake.steady_ms();
  std::atomic<int> result{-1};
  std::atomic<int64_t> woke_at{0};
  std::thread waiter([&] {
    std::unique_lock lock(mu);
    result = fake.wait_for(cv, lock, 3'600'000, [] { return false; }) ? 1 : 0;
    woke_at = fake.steady_ms();
  });
  while (fake.waiting() == 0) std::this_thread::yield();
  fake.advance(3'599'999);  // one ms short: still waiting
  for (int i = 0; i < 20 && result == -1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(result == -1);
  fake.advance(1);
  waiter.join();
  CHECK(result == 0);
  CHECK(woke_at == start + 3'600'000);
}

TEST_CASE("clock: a notify with the condition true ends a wait early, true") {
  std::mutex mu;
  std::condition_variable cv;
  bool ready = false;
  for (const Clock* clock : {static_cast<const Clock*>(nullptr), &system_clock()}) {
    FakeClock fake;
    const Clock& c = clock ? *clock : fake;
    ready = false;
    std::atomic<int> result{-1};
    std::thread waiter([&] {
      std::unique_lock lock(mu);
      result = c.wait_for(cv, lock, 3'600'000, [&] { return ready; }) ? 1 : 0;
    });
    {
      std::lock_guard lock(mu);
      ready = true;
    }
    cv.notify_all();
    waiter.join();
    CHECK(result == 1);
  }
}

TEST_CASE("clock: a SystemClock wait times out once real time reaches the deadline") {
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock lock(mu);
  const Clock& c = system_clock();
  const int64_t start = c.steady_ms();
  CHECK_FALSE(c.wait_for(cv, lock, 20, [] { return false; }));
  CHECK(c.steady_ms() - start >= 20);
}
