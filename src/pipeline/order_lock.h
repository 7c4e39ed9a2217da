// OrderLock: the lock that keeps a line's records together (app/app.h).
// Deciders hold it shared from a line's match to its output; the timer,
// finish(), a reload (SIGHUP) and a report (SIGUSR1) hold it exclusive.
//
// Why not std::shared_mutex: the signal thread must go on watching for
// SIGTERM while it waits (a decider may hold the lock for long, waiting for
// room in a delivery queue whose receiver is down), so it cannot block in
// lock(), and polling try_lock() starves under sustained load: with several
// busy deciders, one of them holds the lock at almost every instant (on a
// loaded machine, one preempted while holding it), and a SIGHUP or SIGUSR1
// waited for minutes (tests/soak/soak.sh found it). try_lock_for() waits
// as a writer that new readers give way to: they wait until it has the lock
// or gives up, so it gets in once the lines being decided are done.
//
// lock() (the timer, finish()) waits without holding readers back, as
// glibc's std::shared_mutex does: a timer tick must not stall every input
// behind one decider that waits for a receiver.
//
// Readers pay what they paid on std::shared_mutex, and one atomic load: the
// lock is a std::shared_timed_mutex (a pthread rwlock), with a gate in front
// of lock_shared() that is closed only while a try_lock_for() waits.
//
// Meets the SharedMutex requirements (std::shared_lock, std::unique_lock).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

namespace swthrottle::pipeline {

class OrderLock {
 public:
  void lock_shared();
  bool try_lock_shared();
  void unlock_shared() { rw_.unlock_shared(); }

  void lock() { rw_.lock(); }
  bool try_lock() { return rw_.try_lock(); }
  // Waits at most `within` for the lock; meanwhile new readers wait too.
  // False (readers go on) when it did not get it in time.
  bool try_lock_for(std::chrono::milliseconds within);
  void unlock() { rw_.unlock(); }

 private:
  std::shared_timed_mutex rw_;
  std::atomic<int> asking_{0};  // try_lock_for callers waiting: the gate is closed
  std::mutex gate_mu_;
  std::condition_variable gate_cv_;  // readers at the closed gate
};

}  // namespace swthrottle::pipeline
