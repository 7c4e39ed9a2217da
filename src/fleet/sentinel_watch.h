// SentinelWatch: a thread subscribed to the sentinels' +switch-master
// channel, so that the fleet thread connects to a new primary the moment
// Sentinel has promoted it, instead of after its next failure or backoff
// (DESIGN.md §8.9: a failover is one on_unreachable episode, as long as
// Sentinel takes and not longer).
//
// It holds one subscription at a time, to the first sentinel that takes it;
// when that one fails, the next is tried at once, and after a round of
// failures it waits (on the clock: 100 ms doubling to 5 s) and tries again.
// A message missed meanwhile is caught by the fleet thread's own check of
// the primary every 10 s (FleetServer::still_current).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fleet/credentials.h"
#include "fleet/endpoint.h"
#include "fleet/redis_connection.h"
#include "util/clock.h"

namespace swthrottle::fleet {

class SentinelWatch {
 public:
  // Starts the thread: `moved` is called on it for every +switch-master of
  // the primary named `master`. `clock` outlives this.
  SentinelWatch(std::vector<Address> sentinels, std::string master, std::chrono::milliseconds timeout,
                Credentials credentials, const Clock& clock, std::function<void()> moved);
  ~SentinelWatch();  // stops the thread (a poll on its stop pipe), joins it
  SentinelWatch(const SentinelWatch&) = delete;
  SentinelWatch& operator=(const SentinelWatch&) = delete;

  // Subscriptions taken so far (tests wait for the first).
  uint64_t subscriptions() const { return subscriptions_.load(); }

 private:
  void run();
  bool subscribe(RedisConnection& c, const Address& sentinel);
  // Reads messages until the connection fails or stop; calls moved_.
  void listen(RedisConnection& c);
  bool stopping();

  std::vector<Address> sentinels_;
  std::string master_;
  std::chrono::milliseconds timeout_;
  Credentials credentials_;
  const Clock& clock_;
  std::function<void()> moved_;
  std::atomic<uint64_t> subscriptions_{0};

  std::mutex mu_;
  std::condition_variable stop_cv_;  // the wait between rounds of failures
  bool stop_ = false;                // guarded by mu_
  int stop_pipe_[2] = {-1, -1};      // written once to end listen()'s poll
  std::thread thread_;
};

}  // namespace swthrottle::fleet
