// exec actions (DESIGN.md §5): run a command once per record, without a shell,
// with the JSON record on stdin and SWTHROTTLE_* in the environment; a
// bounded pool with a timeout, retries with backoff, and back-pressure.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/record.h"
#include "output/exec_job.h"
#include "output/exec_stats.h"
#include "util/clock.h"

namespace swthrottle::output {

struct ExecOptions {
  int jobs = 4;                  // commands running at once (--exec-jobs); < 1 means 1
  int64_t timeout_ms = 30000;    // per attempt, from spawn to exit (--exec-timeout)
  int retries = 2;               // attempts after the first one fails
  int64_t backoff_ms = 500;      // wait before retry n (1-based): backoff_ms * 2^(n-1)
  int64_t kill_grace_ms = 1000;  // after the timeout or a stop: SIGTERM, then SIGKILL this much later
  // The queue of jobs waiting for a slot holds at most queue_capacity jobs
  // (< 1 means 1) and queue_bytes of their data (argv, stdin, environment
  // and label together; a job larger than that still goes into an empty
  // queue). Past either bound, `full` says what happens.
  std::size_t queue_capacity = 64;
  std::size_t queue_bytes = std::size_t{64} << 20;
  enum class Full {
    Block,  // submit() waits for room: the caller (the input) is slowed, nothing is dropped
    Drop,   // submit() drops the job and counts it: the caller never waits on a slow command
  } full = Full::Block;
  // At a stop(), the jobs that will not run are reported one line each up
  // to this many; the rest as one count (flush_reports()).
  std::size_t reported_not_run = 100;
  // Test hook: starting worker thread number N (0-based) fails as when the
  // system is out of threads (std::system_error, EAGAIN). -1: never.
  int fail_thread_at = -1;
};

// A bounded pool of worker threads, one per job slot, each running one
// command at a time to the end (retries and backoff included), so never more
// than `jobs` children exist at once.
//
// Contract:
// - Every submitted job ends exactly once: succeeded, gave_up with one
//   report line, dropped at a full queue (Full::Drop), or not_run after a
//   stop(). With Full::Block nothing is dropped: submit() waits while the
//   queue is full, which slows the input instead. With Full::Drop submit()
//   never waits: past the bound a job is dropped and counted, and the
//   episode is reported twice, when it starts ("the queue is full ...") and
//   when the queue is down to half of both bounds again, or at
//   flush_reports() ("N actions dropped while the queue was full").
// - stop(why): the program is stopping and will not wait for commands.
//   Nothing new starts and nothing is retried; every waiting job, every job
//   between two attempts, and every job submitted later ends as not_run;
//   running commands get SIGTERM to their process group at once and
//   SIGKILL kill_grace_ms later, and their jobs end as not_run (a command
//   that exits on its own before the stop reaches it keeps its outcome).
//   Each not_run job is reported as "swthrottle: exec: LABEL: not run: WHY"
//   (with what happened to it: "(its command was killed)", "(after 1 failed
//   attempt: exit status 1)"), up to reported_not_run lines; the rest are
//   counted by flush_reports(). So drain() after a stop() returns within
//   about kill_grace_ms.
// - A child gets: stdin = a pipe carrying stdin_data, then EOF (a child that
//   does not read it, or exits early, is fine: the write's EPIPE is ignored,
//   and the worker threads block SIGPIPE so it never reaches the program);
//   stdout = our stderr (so a command's chatter can never interleave with the
//   records on our stdout); stderr = our stderr (neither is read or held
//   here: its size costs no memory); the environment the process
//   had when the pool was made, plus job.env (a variable of the same name is
//   replaced, not duplicated); an empty signal mask; SIGPIPE and SIGXFSZ at
//   their default action even when this program ignores them (other ignored
//   signals stay ignored, as a shell leaves them for its children); its own
//   process group, so that a timeout kills everything the command started
//   (`sh -c 'a | b'`) and a Ctrl-C on the terminal does not kill commands
//   that exit is waiting for.
// - An attempt fails when the command exits non-zero, is killed by a signal,
//   runs past timeout_ms (then its process group gets SIGTERM, and SIGKILL
//   kill_grace_ms later), or cannot be spawned. A failed attempt is retried
//   after a backoff, during which the job keeps its slot (a failing webhook
//   slows swthrottle down rather than piling up work). "Command not found"
//   and other errors that a retry cannot fix (ENOENT, EACCES, ENOEXEC, ...)
//   give up at once.
// - Every child is reaped (waitpid); the program must not set SIGCHLD to
//   SIG_IGN, which would make the kernel reap them and hide exit statuses.
//   A command that exits leaving a grandchild behind is done when it exits
//   (the grandchild is not waited for, and not killed).
// - `report` gets each give-up as one line without the trailing "\n"
//   ("swthrottle: exec: LABEL: gave up after 3 attempts: exit status 1"). It
//   is called from worker threads and from submit(), one call at a time.
//   Without one, lines go to stderr with one write(2) each.
// - Threads: the constructor starts `jobs` workers; when the system runs out
//   of threads (std::system_error), it keeps the ones it got and reports
//   "swthrottle: exec: started only N of M worker threads (why): at most N
//   commands run at once". With none at all, workers() is 0 and
//   thread_error() says why: the caller should not use the pool (submit()
//   would then run each job itself, waiting for it).
//
// Jobs start in submit order; with jobs > 1 they may finish in any order (a
// retried job after later ones), so a command that must see the records in
// order needs jobs = 1.
//
// One attempt is one run_child() (child_process.h), which spawns, feeds,
// times out and reaps; the pool owns the queue, the retries and the counts.
//
// Not a hot path: a job owns its strings, and each attempt allocates its
// argv and environment.
//
// submit(), stop(), drain(), flush_reports() and stats() may be called from
// any threads.
class ExecPool {
 public:
  using Reporter = std::function<void(const std::string&)>;

  // `clock` times the attempts (their timeouts); it must outlive the pool.
  explicit ExecPool(ExecOptions o, Reporter reporter = {}, const Clock& clock = system_clock());
  ~ExecPool();  // drain(), then stops the workers: exit waits for running commands (unless stop())
  ExecPool(const ExecPool&) = delete;
  ExecPool& operator=(const ExecPool&) = delete;

  // Queues a job (see Full for a full queue). A job with an empty argv is
  // reported and counted as given up at once.
  void submit(ExecJob job);

  // See the contract. `why` ends each report line ("stopped by SIGTERM").
  // Once; later calls do nothing.
  void stop(const std::string& why);

  // Waits until every job submitted so far has ended.
  void drain();

  // Reports what is still held back: the not_run jobs past
  // reported_not_run ("swthrottle: exec: N more actions not run: WHY"), and
  // the count of an episode of drops still going on. For the end of a run,
  // after drain().
  void flush_reports();

  ExecStats stats() const;
  std::size_t workers() const { return workers_.size(); }
  const std::string& thread_error() const { return thread_error_; }

 private:
  void worker();
  void run(ExecJob& job);
  void report(const std::string& line);
  // Counts a job as not run; its report line when still under the bound.
  // With mu_ held; returns the line to report ("" for none).
  std::string not_run_locked(const ExecJob& job, const std::string& detail);
  // With mu_ held: the end of a drop episode, once the queue has room. "" for none.
  std::string end_drops_locked(bool at_flush);

  const ExecOptions opt_;
  const Clock& clock_;
  const Reporter report_;
  const std::vector<std::string> environ_;  // snapshot: other threads may setenv() later
  int stop_fd_ = -1;                        // an eventfd, made readable by stop(): wakes running supervisions
  std::atomic<bool> stopping_{false};       // set by stop(), under mu_ too

  mutable std::mutex mu_;
  std::condition_variable not_full_;   // submit() waits: room in queue_, or stopping_
  std::condition_variable not_empty_;  // workers wait: a job, or stop_
  std::condition_variable idle_;       // drain() waits: queue_ empty and active_ == 0
  std::condition_variable stopped_;    // backoffs wait: stopping_
  std::deque<ExecJob> queue_;
  std::size_t queue_bytes_ = 0;  // the data of the jobs in queue_
  std::size_t active_ = 0;       // jobs taken by workers and not finished
  bool stop_ = false;            // the destructor: workers end
  std::string stop_why_;
  uint64_t not_run_reported_ = 0;  // not_run lines reported (up to reported_not_run)
  uint64_t not_run_flushed_ = 0;   // not_run counted by flush_reports() already
  bool dropping_ = false;          // a drop episode is going on
  uint64_t dropped_in_episode_ = 0;
  ExecStats stats_;

  std::mutex report_mu_;  // one report at a time
  std::string thread_error_;
  std::vector<std::thread> workers_;
};

}  // namespace swthrottle::output
