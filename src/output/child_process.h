// One run of one exec command (DESIGN.md §5): spawn it without a shell, feed it
// its stdin, wait for its exit within a timeout (killing its process group
// past it), and reap it. The pool (exec_pool.h) decides about retries.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "output/exec_job.h"
#include "util/clock.h"

namespace swthrottle::output {

// How long a child may run: timeout_ms from spawn to exit, then SIGTERM to
// its process group, then SIGKILL kill_grace_ms later. Both are measured on
// the injected Clock's steady time; callers keep now + either from
// overflowing (the pool caps them at ten years).
struct ChildLimits {
  int64_t timeout_ms = 30000;
  int64_t kill_grace_ms = 1000;
};

// Ends a run early, as a stop of the program does: when `fd` (an eventfd
// or a pipe's read end, never read here) is readable or `flag` is set, a
// child still running gets SIGTERM to its process group at once, then
// SIGKILL kill_grace_ms later. The fd wakes the wait at once; without one
// (-1) the flag is checked every 50 ms. Both optional.
struct ChildStop {
  int fd = -1;
  const std::atomic<bool>* flag = nullptr;
};

// What one run came to.
struct ChildResult {
  enum class Outcome {
    Ok,         // exited 0
    Failed,     // exit != 0, a signal, the timeout, a spawn error worth retrying
    Permanent,  // a retry cannot help: "command not found", no exit status to get
  };
  Outcome outcome = Outcome::Failed;
  bool spawned = false;    // a process was started
  bool timed_out = false;  // it ran past timeout_ms and was killed
  bool stopped = false;    // it was killed because of a ChildStop (then it failed, whatever its exit status)
  std::string why;         // for a failure: "exit status 1", "timed out after 30s", ...
};

// Runs job.argv once and returns when the child has been reaped (or could
// not be spawned). The child gets: stdin = a pipe carrying job.stdin_data,
// then EOF (a child that does not read it is fine: the EPIPE is ignored; the
// calling thread must block SIGPIPE, which this takes off its pending set);
// stdout and stderr = our stderr; `parent_env` plus job.env (a variable of
// the same name replaced, not duplicated); an empty signal mask; SIGPIPE and
// SIGXFSZ at their default action; its own process group.
// The child's stdout and stderr are never read here: a command that writes
// 100 MB, or leaves a grandchild holding them open after it exits, costs
// this process no memory and no wait (the exit is seen on a pidfd, not as
// an end of file).
// Waiting is real (poll(2)); the deadlines are read from `clock`.
ChildResult run_child(const ExecJob& job, const std::vector<std::string>& parent_env, const ChildLimits& limits,
                      const Clock& clock, const ChildStop& stop = {});

}  // namespace swthrottle::output
