// The signal thread: sigwait on signals every thread blocks, so handlers
// run as ordinary code with ordinary locks. INT/TERM stop, HUP reloads the
// rules, USR1 writes the stats.
#include <chrono>
#include <cstdlib>
#include <string>

#include "app/app.h"
#include "util/stderr.h"

namespace swthrottle::app {

std::unique_lock<pipeline::OrderLock> App::order_watching_stop() {
  // A decider may hold the order lock shared for long: one waiting for room
  // in a delivery queue whose receiver is down. Meanwhile a SIGINT/SIGTERM
  // must still stop the run, and stopping is what frees that decider. So the
  // lock is asked for in turns: 50 ms in which deciders that have not taken
  // it yet wait (a busy run lets it in at once: pipeline/order_lock.h), then
  // 20 ms in which they go on (other inputs are not stalled for long behind
  // one stuck decider) and a stop is looked for.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  std::unique_lock order(order_, std::defer_lock);
  while (!order.try_lock_for(std::chrono::milliseconds(50))) {
    const timespec ts{0, 20'000'000};  // 20 ms
    if (const int sig = ::sigtimedwait(&stop, nullptr, &ts); sig == SIGINT || sig == SIGTERM) {
      stop_signal_ = sig;
      request_stop(sig);
    }
  }
  return order;
}

void App::signal_loop(sigset_t set) {
  for (;;) {
    int sig = 0;
    if (stop_signal_ != 0) {
      sig = stop_signal_;  // came while a reload or a report waited for the order lock
    } else if (sigwait(&set, &sig) != 0) {
      continue;
    }
    if (sig == SIGUSR1 || sig == SIGHUP) {
      // Under signal_mu_: run() waits for this before main() returns, so a
      // reload is never cut off halfway by the process exiting.
      std::lock_guard work(signal_mu_);
      if (exiting_) continue;
      if (sig == SIGUSR1) {
        // Exclusive: deciders add their per-line counts once per batch, after
        // its records are out; a report between the two would count lines
        // written but not yet read.
        std::string text;
        {
          auto order = order_watching_stop();
          text = stats_text();
        }
        print_error(text);
      } else {
        reload();
      }
    } else if (sig == SIGINT || sig == SIGTERM) {
      request_stop(sig);
      // Deciders reading a followed file wake at once; one blocked in
      // read(2) on a pipe cannot be woken: finish without it.
      std::unique_lock lock(mu_);
      if (!clock_.wait_for(cv_, lock, 500, [this] { return finished_; })) {
        lock.unlock();
        // One blocked in write(2) on an output nobody reads holds the order
        // lock that finish() needs: the output is given up, the decider sees
        // it closed and ends, and run() finishes (the state is saved).
        if (sink_.abandon(std::string(sig == SIGINT ? "SIGINT" : "SIGTERM") +
                          ": standard output took nothing for 0.5s; the records not written by now are dropped")) {
          lock.lock();
          if (clock_.wait_for(cv_, lock, 5'000, [this] { return finished_; })) return;
          lock.unlock();
        }
        finish();
        std::_Exit(exit_status());  // as run() would have returned
      }
      return;
    }
  }
}

}  // namespace swthrottle::app
