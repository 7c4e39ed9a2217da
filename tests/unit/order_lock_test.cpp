// OrderLock (pipeline/order_lock.h): a SIGHUP or SIGUSR1 gets the lock while
// deciders keep taking it shared, and one that gives up lets them go on.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "pipeline/order_lock.h"

using swthrottle::pipeline::OrderLock;
using namespace std::chrono_literals;

namespace {

// Holds the lock shared for about `hold`, busy, as a decider does for a line.
void hold_shared(OrderLock& l, std::chrono::microseconds hold) {
  l.lock_shared();
  const auto until = std::chrono::steady_clock::now() + hold;
  while (std::chrono::steady_clock::now() < until) {
  }
  l.unlock_shared();
}

}  // namespace

TEST_CASE("order lock: try_lock_for gets in while four readers take the lock shared back to back") {
  // With std::shared_mutex and try_lock() polling, a report waited for
  // minutes behind busy deciders (tests/soak/soak.sh).
  OrderLock l;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> shared_taken{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 4; ++i)
    readers.emplace_back([&] {
      while (!stop.load()) {
        hold_shared(l, 200us);
        shared_taken.fetch_add(1);
      }
    });
  int got = 0;
  const auto deadline = std::chrono::steady_clock::now() + 20s;  // a bound for a hang, not a speed goal
  while (got < 20 && std::chrono::steady_clock::now() < deadline) {
    if (!l.try_lock_for(50ms)) continue;
    CHECK_FALSE(l.try_lock_shared());  // exclusive: no reader is in
    ++got;
    l.unlock();
  }
  const uint64_t before = shared_taken.load();
  // The readers go on after the writer is done.
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (shared_taken.load() < before + 100 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  stop = true;
  for (auto& t : readers) t.join();
  CHECK(got == 20);
  CHECK(shared_taken.load() >= before + 100);
}

TEST_CASE("order lock: try_lock_for holds new readers back while it waits, and lets them go when it gives up") {
  OrderLock l;
  l.lock_shared();  // a decider that holds the lock for long (waiting for a receiver)
  CHECK_FALSE(l.try_lock_for(20ms));
  CHECK(l.try_lock_shared());  // gave up: readers are not held back
  l.unlock_shared();

  std::atomic<bool> got{false};
  std::thread writer([&] {
    if (l.try_lock_for(20s)) {
      got = true;
      l.unlock();
    }
  });
  // While the writer asks, a new reader waits (try_lock_shared fails).
  bool held_back = false;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!held_back && std::chrono::steady_clock::now() < deadline) {
    if (l.try_lock_shared()) l.unlock_shared();
    else held_back = true;
  }
  CHECK(held_back);
  CHECK_FALSE(got.load());
  l.unlock_shared();  // the long holder is done: the writer gets in
  writer.join();
  CHECK(got.load());
  CHECK(l.try_lock_shared());
  l.unlock_shared();
}

TEST_CASE("order lock: lock() is exclusive and waits for the readers, try_lock() fails while one holds it") {
  OrderLock l;
  l.lock_shared();
  CHECK_FALSE(l.try_lock());
  std::atomic<bool> got{false};
  std::thread writer([&] {
    l.lock();
    got = true;
    l.unlock();
  });
  CHECK(l.try_lock_shared());  // a waiting lock() does not hold readers back
  l.unlock_shared();
  CHECK_FALSE(got.load());  // readers still hold it
  l.unlock_shared();
  writer.join();
  CHECK(got.load());
  CHECK(l.try_lock());
  CHECK_FALSE(l.try_lock_shared());
  l.unlock();
}
