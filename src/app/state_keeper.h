// StateKeeper: a run's --state file (man page: STATE): the lock held for the
// whole run (waiting up to --state-wait), the windows loaded into the first
// generation, a save every few seconds while running, and the final save,
// whose failure the exit status says (DESIGN.md §6).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "cli/options.h"
#include "pipeline/generation.h"
#include "state/state_file.h"
#include "util/clock.h"

namespace swthrottle::app {

// What the state file did this run.
struct StateStats {
  uint64_t saves = 0;         // saves that were written
  uint64_t failed_saves = 0;  // saves that were not (each said on stderr)
  bool final_save_failed = false;
};

class StateKeeper {
 public:
  // No --state: inactive, every call does nothing.
  StateKeeper(const cli::Options& options, const Clock& clock);
  StateKeeper(const StateKeeper&) = delete;
  StateKeeper& operator=(const StateKeeper&) = delete;

  bool active() const { return file_ != nullptr; }
  const std::string& path() const;  // "" when inactive

  enum class Opened {
    Loaded,  // locked (or said why not) and loaded: the run goes on
    Busy,    // another run kept the lock past --state-wait, or SIGINT/SIGTERM came first: exit 4
  };
  // Takes the run's lock, then loads the saved windows into `g` (its engine,
  // and the fleet counts the last run could not send); what the file held
  // that no longer fits is said on stderr. SIGINT/SIGTERM must be blocked
  // in the calling thread: they end the wait. The loaded newest log time
  // goes to `last_log_ms` (left alone when the file has none).
  Opened open(pipeline::Generation& g, std::atomic<int64_t>& last_log_ms);

  // A save while running (the timer's). False: failed, and said so.
  bool save(pipeline::Generation& g, int64_t last_log_ms);

  // The last save, the one the next run reads: a failure is said and makes
  // the exit status 2.
  void finish(pipeline::Generation& g, int64_t last_log_ms);

  bool final_save_failed() const { return final_save_failed_.load(std::memory_order_acquire); }
  StateStats stats() const;

 private:
  // The lock, waiting in sigtimedwait so that SIGINT/SIGTERM end the wait.
  Opened lock();

  const int64_t wait_ms_;  // --state-wait
  const Clock& clock_;
  std::unique_ptr<state::StateFile> file_;
  std::atomic<uint64_t> saves_{0}, failed_saves_{0};
  std::atomic<bool> final_save_failed_{false};
};

}  // namespace swthrottle::app
