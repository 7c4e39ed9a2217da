// TinyMutex: a 4-byte mutex for AccurateWindow. Every key of an accurate keyed
// rule has one, and std::mutex (a pthread_mutex_t) is 40 bytes on Linux.
//
// Drepper's "mutex 3" (Futexes Are Tricky, 2011) over std::atomic wait/notify,
// which libstdc++ maps to a futex for a 32-bit word: uncontended, lock is one
// CAS and unlock one exchange, as with glibc's default mutex (which does not
// spin either); contended, a waiter sleeps in the kernel. Not recursive, no
// try_lock: AccurateWindow needs neither. ThreadSanitizer sees the
// happens-before edges through the acquire CAS/exchange and the release
// exchange.
#pragma once

#include <atomic>
#include <cstdint>

namespace swthrottle::window {

class TinyMutex {
 public:
  void lock() {
    uint32_t c = kUnlocked;
    if (state_.compare_exchange_strong(c, kLocked, std::memory_order_acquire, std::memory_order_relaxed)) [[likely]]
      return;
    // Someone holds it: announce a waiter (kContended), so that the unlock
    // wakes one, and sleep until the word changes.
    while (state_.exchange(kContended, std::memory_order_acquire) != kUnlocked)
      state_.wait(kContended, std::memory_order_relaxed);
  }

  void unlock() {
    if (state_.exchange(kUnlocked, std::memory_order_release) == kContended) state_.notify_one();
  }

 private:
  static constexpr uint32_t kUnlocked = 0;
  static constexpr uint32_t kLocked = 1;     // no waiter
  static constexpr uint32_t kContended = 2;  // locked, maybe waiters
  std::atomic<uint32_t> state_{kUnlocked};
};

}  // namespace swthrottle::window
