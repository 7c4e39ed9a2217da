// App: one run of swthrottle, from the first line to the exit status.
//
// The App wires small owners together, each with a start, a finish and its
// stats: ExecActions (exec_actions.h: the exec pool), Deliveries
// (deliveries.h: the delivery pool and outbox), FleetConnection
// (fleet_connection.h: the fleet client), StateKeeper (state_keeper.h:
// --state) and RunMetrics (run_metrics.h: the input meters, /metrics, the
// metrics file, systemd, and the one Snapshot every report renders). It
// keeps what ties them together: the generations (reload), the order lock,
// the deciders, the timer and the signals, and the exit status, which asks
// each owner for its part.
//
// Lifecycle: start() (the fleet link, exec, the --state lock and load,
// delivery, /metrics), run() (one decider thread per input, or one for the
// inputs merged by time, and the timer; then finish() once), exit status.
// Around it: the signal thread (signal_loop: SIGINT/SIGTERM stop, SIGHUP
// reload, SIGUSR1 stats) and the timer (arrival-time boundary checks,
// periodic --state saves, the alerts the fleet claimed). Time comes from the
// injected Clock only.
//
// Threads and lock order: signal_mu_ (the signal thread, before any other),
// then order_ (pipeline/order_lock.h), then mu_, then the owners' own (the
// sink's, the exec pool's, the delivery pool's then the outbox's,
// RunMetrics' leaf mutex) and the engine's. Deciders hold order_ shared from
// a line's match to its output; the timer, reload() and finish() hold it
// exclusive, so none of them comes between a line and its records. A
// snapshot (/metrics, the metrics thread, --stats) takes no App lock.
#pragma once

#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "app/deliveries.h"
#include "app/delivery_setup.h"
#include "app/exec_actions.h"
#include "app/fleet_connection.h"
#include "app/inputs.h"
#include "app/run_metrics.h"
#include "app/state_keeper.h"
#include "cli/options.h"
#include "input/follow.h"
#include "input/glob_watcher.h"
#include "metrics/snapshot.h"
#include "output/sink.h"
#include "pipeline/decider.h"
#include "pipeline/generation.h"
#include "pipeline/order_lock.h"
#include "pipeline/parallel_match.h"
#include "pipeline/quiet_time.h"
#include "util/clock.h"

namespace swthrottle::app {

struct AppOptions {
  int64_t state_save_every_ms = 5000;  // --state while running (--state-interval)
  bool prefilter = true;               // SWTHROTTLE_NO_PREFILTER unset
  bool map_files = true;               // SWTHROTTLE_NO_MMAP unset: replayed files are mapped
};

class App final : private pipeline::DeciderHost {
 public:
  // `sink`, `clock`: not owned; they outlive the App.
  App(const cli::Options& options, const AppOptions& app_options, std::unique_ptr<pipeline::Generation> first,
      output::RecordSink& sink, const Clock& clock);
  ~App() override;

  // Everything before the first line: exec pool, --state. False: exit with
  // start_status() (2, or 4 when the --state lock stayed taken). With
  // --state, waits for another run's lock while SIGINT/SIGTERM (blocked in
  // the calling thread, as main() does) end the wait at once.
  bool start();
  int start_status() const { return start_status_; }

  // Runs every input to its end (or until stopped), finishes once, and
  // returns the exit status (DESIGN.md §6).
  int run(std::vector<InputSpec> inputs);

  // Ends the run as SIGINT/SIGTERM do: every input stops, then finish().
  // Exec actions not run by now never will be (each is reported on stderr;
  // running commands are killed). `sig`: the signal that asked, for the
  // reports (0: none). Thread-safe.
  void request_stop(int sig = 0);

  // The signal thread: waits for the signals in `set` (blocked in every
  // thread) and never returns until the process ends.
  void signal_loop(sigset_t set);

 private:
  // DeciderHost
  pipeline::Generation* current() override { return current_.load(std::memory_order_acquire); }
  pipeline::OrderLock& order() override { return order_; }
  const std::atomic<bool>& stopping() override { return stop_; }
  void emit(const std::vector<engine::Record>& records, const engine::ExplainedLine* explain = nullptr) override;
  void fail(const std::string& message) override;
  void saw_log_time(int64_t newest_ms) override;
  const Clock& clock() override { return clock_; }
  int64_t arrival_ms() override { return arrival_.now_ms(); }
  void progressed(const std::string& input, uint64_t lines, int64_t newest_log_ms) override {
    metrics_.progressed(input, lines, newest_log_ms);
  }
  void no_timestamp(const std::string& input, const std::string& message) override {
    metrics_.no_timestamp(input, message);
  }

  // The App's part of a snapshot (app_metrics.cpp): the engine's counters
  // and the owners' stats; RunMetrics adds the rest.
  void add_snapshot_parts(metrics::Snapshot& s);

  // One input, read by the source it needs, decided in its own order.
  void read_input(const InputSpec& in);
  void read_followed(pipeline::Decider& decider, const InputSpec& in);
  // --follow PATTERN: a thread per matched file, started and let go of as
  // files come and go (read_glob.cpp).
  void read_glob(const InputSpec& in);
  void read_parallel(pipeline::Decider& decider, const InputSpec& in, int workers);
  void read_batches(pipeline::Decider& decider, const InputSpec& in);
  // Inputs that are not followed, under time = log, when there are two or
  // more: one thread decides them all in the order merged by time
  // (pipeline/time_merge.h); each is read and matched on threads of its own.
  void read_merged(const std::vector<const InputSpec*>& inputs);
  int workers_for(const InputSpec& in) const;
  static pipeline::StampWatch::Pace pace_of(const InputSpec& in);
  int threads() const;
  pipeline::Decider::Options decider_options() const;
  int64_t resumed_log_ms() const;
  pipeline::ParallelMatch::Options match_options(const InputSpec& in, int workers) const;

  bool needs_timer() const;
  void timer_loop();
  // The stamp watch of an input read live (a followed file, a pipe), for
  // the timer's minute: watched while `on`, from before its first line
  // until before its decider goes.
  void watch_stamps(pipeline::StampWatch& watch, bool on);
  int64_t quiet_reached(const pipeline::Generation& g);
  void stop_followers();
  void finish();
  int exit_status();  // after finish(): DESIGN.md §6
  std::string stats_text();
  void reload();
  // The order lock, exclusive, for the signal thread: while it waits, a
  // SIGINT/SIGTERM is taken (stop_signal_) and request_stop() frees what
  // holds the lock (a decider waiting for delivery).
  std::unique_lock<pipeline::OrderLock> order_watching_stop();
  int stop_signal_ = 0;  // the signal thread's own
  // start() without its clean-up; then its parts, in its order: each says
  // what failed and returns false.
  bool start_owners();
  bool start_exec();
  bool open_state();
  // The alerts the fleet thread claimed for batched rules (of every
  // generation), written. With the order lock held exclusive.
  void write_fleet_alerts();

  const cli::Options options_;  // a copy: the signal thread may outlive main()'s locals
  const AppOptions app_options_;
  const Clock& clock_;
  ArrivalClock arrival_;
  output::RecordSink& sink_;
  FleetConnection fleet_;  // before generations_: their links point into its client
  std::vector<std::unique_ptr<pipeline::Generation>> generations_;  // guarded by mu_ (appended on reload)
  std::atomic<pipeline::Generation*> current_{nullptr};
  ExecActions exec_;       // --exec and the rules' exec actions; started by start()
  StateKeeper state_;      // --state: locked and loaded by start()
  Deliveries deliveries_;  // webhooks and Alertmanagers (an outbox with --state); started after the state lock
  std::atomic<bool> stop_{false};
  std::atomic<bool> input_failed_{false};
  std::atomic<int64_t> last_log_ms_{-1};
  std::size_t inputs_ = 1;
  int start_status_ = 2;

  pipeline::OrderLock order_;
  std::mutex mu_;  // guards followers_, globs_, quiet_, stamp_watches_, timer_done_, finished_, generations_
  std::condition_variable cv_;
  std::vector<input::Follower*> followers_;
  std::vector<input::GlobWatcher*> globs_;            // of the followed patterns: stopped with the followers
  std::vector<const pipeline::QuietTime*> quiet_;     // of the followed inputs
  std::vector<pipeline::StampWatch*> stamp_watches_;  // of the inputs read live
  bool live_ = false;                                 // some input is followed, or a pipe (set by run())
  bool timer_done_ = false;
  bool finished_ = false;
  std::mutex finish_mu_;
  bool finish_started_ = false;  // guarded by finish_mu_
  std::mutex signal_mu_;         // held by the signal thread while it reloads or reports
  bool exiting_ = false;         // guarded by signal_mu_
  // Last, so that it stops first: its threads (/metrics, the metrics file,
  // systemd) read the members above through add_snapshot_parts().
  RunMetrics metrics_;
};

}  // namespace swthrottle::app
