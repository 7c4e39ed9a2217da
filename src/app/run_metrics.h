// RunMetrics: what a run says about itself while it runs (man page:
// METRICS, SYSTEMD): a meter per input, the /metrics and /healthz server
// (--metrics-listen), the metrics file (--metrics-file), and under systemd
// READY, RELOADING, STOPPING, the STATUS line and the watchdog pings, which
// go only while the pipeline is healthy. It assembles the one Snapshot
// every report reads; the App adds the parts the owners hold.
//
// Threads: the metrics thread (with --metrics-file or under systemd) and
// the server's; both only read. mu_ guards the meters' followers, the files
// patterns matched, and the thread's end: a leaf, taken after the App's mu_,
// never held while the App's part of a snapshot is read.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "app/inputs.h"
#include "cli/options.h"
#include "input/follow.h"
#include "metrics/metrics_server.h"
#include "metrics/snapshot.h"
#include "metrics/systemd_notify.h"
#include "util/clock.h"

namespace swthrottle::app {

class RunMetrics {
 public:
  // The parts of a snapshot RunMetrics does not hold (the engine's counters,
  // the owners' stats): the App adds them. Called on any thread that takes a
  // snapshot, never with mu_ held.
  using AddParts = std::function<void(metrics::Snapshot&)>;

  // `options`, `clock`: outlive this. The start time is the clock's now.
  RunMetrics(const cli::Options& options, const Clock& clock, AddParts add_parts);
  ~RunMetrics();  // the metrics thread ends (finish() normally has)
  RunMetrics(const RunMetrics&) = delete;
  RunMetrics& operator=(const RunMetrics&) = delete;

  // --metrics-listen: /metrics and /healthz from now on. False: said why.
  bool start_server();

  // Rules loaded, inputs open: a meter per input, ready (systemd READY=1,
  // /healthz, swthrottle_ready), and the metrics thread when it is needed.
  void start(const std::vector<InputSpec>& inputs);

  // A decider's progress on `input`: lines decided, the newest stamp among
  // them (pipeline::kNoStamp: none). A stamp clears no_timestamp.
  void progressed(const std::string& input, uint64_t lines, int64_t newest_log_ms);
  // `input` was reported for giving no timestamp (the report is said here).
  void no_timestamp(const std::string& input, const std::string& message);
  // While `input` is followed by `follower`, its bytes behind are reported;
  // until unfollow() with the same follower, which must come before it goes.
  void follow(const std::string& input, input::Follower* follower);
  void unfollow(const std::string& input, const input::Follower* follower);

  // A file that the --follow pattern `pattern` matched is metered as the
  // pattern: one series per pattern given, however many files it comes to
  // match (dated or rotated names would make a series each). adopt() comes
  // before the file's first line, release() once its last was decided.
  void adopt(const std::string& file, const std::string& pattern);
  void release(const std::string& file);

  // SIGHUP: RELOADING=1 now, READY=1 at reload_ended(), whatever the outcome;
  // count_reload() counts the outcome (reloads or reload failures).
  void reload_started();
  void reload_ended();
  void count_reload(bool took_effect);

  // The run is ending: STOPPING=1.
  void stopping();

  // End of the run: the metrics thread ends, the metrics file is written a
  // last time (the run's last figures, for the textfile collector) and
  // /metrics stops: the App is never destroyed, and a scrape must not run
  // into the process's exit.
  void finish();

  // Everything the run says about itself now.
  metrics::Snapshot snapshot();

 private:
  // One input's figures: made by start() before any input thread starts,
  // then only read (atomics; the vectors under mu_). A pattern's meter sums
  // its files': lines, bytes behind; the newest stamp and progress of any.
  struct InputMeter {
    std::string name;
    std::atomic<uint64_t> lines{0};
    std::atomic<int64_t> newest_log_ms{INT64_MIN};
    std::atomic<int64_t> progress_ms{0};      // wall clock of the last decided line
    std::atomic<bool> no_timestamp{false};    // !unstamped.empty(), read without mu_
    std::vector<input::Follower*> followers;  // guarded by mu_: those following it (a pattern: its files)
    // Guarded by mu_: the inputs (the pattern's files) reported without a
    // timestamp (stamp_watch.h) and given none since.
    std::vector<std::string> unstamped;
  };
  // The meter named `input` (no lock: meters_ is fixed once start() made it).
  InputMeter* own_meter(const std::string& input);
  // That, or the meter of the pattern that adopted `input`; mu_ held.
  InputMeter* meter_of(const std::string& input);
  // `input` no longer lacks a timestamp (it gave one, or was let go of); mu_ held.
  void stamped(InputMeter& m, const std::string& input);
  void add_inputs(metrics::Snapshot& s);
  bool needs_thread() const;
  void loop();
  void end_thread();  // the metrics thread, if any, ends (joined)
  void write_metrics_file();
  std::string status_line();

  const cli::Options& options_;
  const Clock& clock_;
  const AddParts add_parts_;
  const int64_t started_wall_ms_;  // for swthrottle_start_time_seconds
  metrics::SystemdNotify notify_;
  std::atomic<bool> ready_{false};
  std::atomic<uint64_t> reloads_{0}, reload_failures_{0};
  std::vector<std::unique_ptr<InputMeter>> meters_;  // made by start(), under mu_
  // Guarded by mu_: the files patterns matched, each with its pattern's meter.
  std::vector<std::pair<std::string, InputMeter*>> adopted_;
  std::mutex mu_;  // the meters' followers and unstamped, adopted_, done_
  std::condition_variable cv_;
  bool done_ = false;  // guarded by mu_: the metrics thread ends
  std::thread thread_;
  std::mutex file_mu_;  // finish() and the thread may both write the file (one temporary name)
  std::atomic<bool> told_file_error_{false};
  // --metrics-listen: last, so that it stops first (its thread calls snapshot()).
  std::unique_ptr<metrics::MetricsServer> server_;
};

}  // namespace swthrottle::app
