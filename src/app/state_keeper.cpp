#include "app/state_keeper.h"

#include <signal.h>

#include "config/duration.h"
#include "fleet/rule_fleet.h"
#include "state/clamp_future.h"
#include "state/state_validation.h"
#include "util/stderr.h"

namespace swthrottle::app {

StateKeeper::StateKeeper(const cli::Options& options, const Clock& clock)
    : wait_ms_(options.state_wait_ms), clock_(clock) {
  if (!options.state_file.empty()) file_ = std::make_unique<state::StateFile>(options.state_file);
}

const std::string& StateKeeper::path() const {
  static const std::string none;
  return file_ ? file_->path() : none;
}

StateKeeper::Opened StateKeeper::lock() {
  // SIGINT/SIGTERM are blocked here and the signal thread is not running
  // yet: sleep in sigtimedwait so that they end the wait.
  int stopped_by = 0;
  auto pause = [&stopped_by](int64_t ms) {
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    const timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
    const int sig = ::sigtimedwait(&stop, nullptr, &ts);
    if (sig == SIGINT || sig == SIGTERM) stopped_by = sig;
    return stopped_by == 0;
  };
  auto locked = file_->lock_for_run_within(
      wait_ms_, [](const std::string& m) { print_message(m); }, pause, clock_);
  // A lock file that cannot be made: said, and the run goes on (its saves
  // will say their own errors).
  if (!locked) print_message(locked.error().str());
  if (!locked || *locked == state::StateFile::Wait::Locked) return Opened::Loaded;
  const std::string lp = file_->lock_path();
  if (*locked == state::StateFile::Wait::Busy)
    print_message("--state " + file_->path() + ": another run still holds " + lp + " after --state-wait " +
                  (wait_ms_ == 0 ? std::string("0") : config::format_duration(wait_ms_)) +
                  "; nothing was read (exit 4)");
  else
    print_message(std::string(stopped_by == SIGINT ? "SIGINT" : "SIGTERM") + " while waiting for " + lp +
                  "; nothing was read (exit 4)");
  return Opened::Busy;
}

StateKeeper::Opened StateKeeper::open(pipeline::Generation& g, std::atomic<int64_t>& last_log_ms) {
  if (!file_) return Opened::Loaded;
  if (lock() == Opened::Busy) return Opened::Busy;
  std::string warning;
  engine::EngineState st = file_->load(warning, clock_.wall_ms());
  if (!warning.empty()) print_message(warning);
  // Before anything edits st: the messages name the members of the file.
  for (const std::string& m : state::drop_inconsistent(st, *g.rules))
    print_message("state file " + file_->path() + ": " + m);
  if (const std::string c = state::clamp_future(st, clock_.wall_ms(), g.rules->settings.max_future_ms); !c.empty())
    print_message("--state " + file_->path() + ": " + c);
  for (const auto& name : g.engine->load_state(st))
    print_message("state: rule \"" + name + "\" changed since the state was saved; it starts fresh");
  if (!st.fleet_unsent.empty()) {
    // Batched counts the last run could not send: sent with the next flush.
    const std::size_t dropped = g.fleet ? g.fleet->restore(st.fleet_unsent) : st.fleet_unsent.size();
    if (dropped > 0)
      print_message("state: " + std::to_string(dropped) +
                    " windows of fleet counts not sent last run belong to rules that are gone or changed; dropped");
  }
  if (st.last_log_ms >= 0) last_log_ms = st.last_log_ms;
  return Opened::Loaded;
}

bool StateKeeper::save(pipeline::Generation& g, int64_t last_log_ms) {
  if (!file_) return true;
  engine::EngineState st = g.engine->save_state();
  st.last_log_ms = last_log_ms;
  if (g.fleet) st.fleet_unsent = g.fleet->unsent();
  auto r = file_->save(st, clock_.wall_ms());
  if (!r) print_message(r.error().str());
  (r.ok() ? saves_ : failed_saves_).fetch_add(1, std::memory_order_relaxed);
  return r.ok();
}

void StateKeeper::finish(pipeline::Generation& g, int64_t last_log_ms) {
  if (!file_) return;
  // Without this save the windows and the pending summaries of this run are
  // lost, which the exit says.
  if (!save(g, last_log_ms)) {
    print_message("--state " + file_->path() + ": the state of this run was not saved (exit 2)");
    final_save_failed_.store(true, std::memory_order_release);
  }
}

StateStats StateKeeper::stats() const {
  return {saves_.load(std::memory_order_relaxed), failed_saves_.load(std::memory_order_relaxed), final_save_failed()};
}

}  // namespace swthrottle::app
