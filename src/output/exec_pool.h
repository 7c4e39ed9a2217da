// exec actions (SPEC §5): run a command once per record, without a shell,
// with the JSON record on stdin and SWTHROTTLE_* in the environment; a
// bounded pool with a timeout, retries with backoff, and back-pressure.
#pragma once

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
#include "util/clock.h"

namespace swthrottle::output {

struct ExecOptions {
  int jobs = 4;                     // commands running at once (--exec-jobs); < 1 means 1
  int64_t timeout_ms = 30000;       // per attempt, from spawn to exit (--exec-timeout)
  int retries = 2;                  // attempts after the first one fails
  int64_t backoff_ms = 500;         // wait before retry n (1-based): backoff_ms * 2^(n-1)
  int64_t kill_grace_ms = 1000;     // after the timeout: SIGTERM, then SIGKILL this much later
  std::size_t queue_capacity = 64;  // jobs waiting for a slot before submit() blocks; < 1 means 1
};

// Counters since the pool was made. An attempt is one spawned process (or
// one failed spawn); a job is one submit().
struct ExecStats {
  uint64_t submitted = 0;        // jobs accepted by submit()
  uint64_t started = 0;          // processes spawned (attempts that got as far as a child)
  uint64_t succeeded = 0;        // jobs whose command exited 0 (on some attempt)
  uint64_t failed_attempts = 0;  // attempts that failed: exit != 0, signal, timeout, spawn error
  uint64_t retried = 0;          // attempts made after a failed one
  uint64_t timed_out = 0;        // attempts killed for running past timeout_ms
  uint64_t gave_up = 0;          // jobs reported as failed for good
};

// A bounded pool of worker threads, one per job slot, each running one
// command at a time to the end (retries and backoff included), so never more
// than `jobs` children exist at once.
//
// Contract:
// - Every submitted job ends exactly once: succeeded, or gave_up with one
//   report line. Nothing is dropped: submit() blocks while `queue_capacity`
//   jobs are waiting, which slows the input instead.
// - A child gets: stdin = a pipe carrying stdin_data, then EOF (a child that
//   does not read it, or exits early, is fine: the write's EPIPE is ignored,
//   and the worker threads block SIGPIPE so it never reaches the program);
//   stdout = our stderr (so a command's chatter can never interleave with the
//   records on our stdout); stderr = our stderr; the environment the process
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
// - `report` gets each give-up as one line without the trailing "\n"
//   ("swthrottle: exec: LABEL: gave up after 3 attempts: exit status 1"). It
//   is called from worker threads, one call at a time. Without one, lines go
//   to stderr with one write(2) each.
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
// submit(), drain() and stats() may be called from any threads.
class ExecPool {
 public:
  using Reporter = std::function<void(const std::string&)>;

  // `clock` times the attempts (their timeouts); it must outlive the pool.
  explicit ExecPool(ExecOptions o, Reporter report = {}, const Clock& clock = system_clock());
  ~ExecPool();  // drain(), then stops the workers: exit waits for running commands
  ExecPool(const ExecPool&) = delete;
  ExecPool& operator=(const ExecPool&) = delete;

  // Queues a job; blocks while the queue is full. A job with an empty argv
  // is reported and counted as given up at once.
  void submit(ExecJob job);

  // Waits until every job submitted so far has succeeded or given up.
  void drain();

  ExecStats stats() const;

 private:
  void worker();
  void run(ExecJob& job);
  void report(const std::string& line);

  const ExecOptions opt_;
  const Clock& clock_;
  const Reporter report_;
  const std::vector<std::string> environ_;  // snapshot: other threads may setenv() later

  mutable std::mutex mu_;
  std::condition_variable not_full_;   // submit() waits: queue_ below capacity
  std::condition_variable not_empty_;  // workers wait: a job, or stop_
  std::condition_variable idle_;       // drain() waits: queue_ empty and active_ == 0
  std::deque<ExecJob> queue_;
  std::size_t active_ = 0;  // jobs taken by workers and not finished
  bool stop_ = false;
  ExecStats stats_;

  std::mutex report_mu_;  // one report at a time
  std::vector<std::thread> workers_;
};

}  // namespace swthrottle::output
