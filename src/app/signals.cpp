// The signal thread: sigwait on signals every thread blocks, so handlers
// run as ordinary code with ordinary locks. INT/TERM stop, HUP reloads the
// rules, USR1 writes the stats.
#include <chrono>
#include <cstdlib>

#include "app/app.h"
#include "util/stderr.h"

namespace swthrottle::app {

void App::signal_loop(sigset_t set) {
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
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
          std::unique_lock order(order_);
          text = stats_text();
        }
        print_error(text);
      } else {
        reload();
      }
    } else if (sig == SIGINT || sig == SIGTERM) {
      request_stop();
      // Deciders reading a followed file wake at once; one blocked in
      // read(2) on a pipe cannot be woken: finish without it.
      std::unique_lock lock(mu_);
      if (!cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return finished_; })) {
        lock.unlock();
        finish();
        std::_Exit(exit_status());  // as run() would have returned
      }
      return;
    }
  }
}

}  // namespace swthrottle::app
