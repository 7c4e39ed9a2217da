// Child processes for end-to-end tests: run the real swthrottle binary with
// pipes on stdin, stdout and stderr.
//
// Every wait is bounded by a timeout and driven by poll(2), never by sleeps:
// a test that goes wrong fails (timed_out) instead of hanging the suite, and
// a child that writes a lot while the test is still feeding it never
// deadlocks, because output is drained whenever the test waits on anything.
//
// The output fields are named `out` and `err`, not `stdout` and `stderr`,
// which the C library may define as macros.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/text_files.h"  // read_file, which tests of processes take from here

namespace swthrottle::test {

// Long enough for a loaded CI machine; a test that hits it has hung.
inline constexpr std::chrono::milliseconds kDefaultTimeout{20'000};

// Variables added to (or replacing those of) the test's own environment.
using EnvAdditions = std::vector<std::pair<std::string, std::string>>;

// Takes the child's output a chunk at a time, as it is read, instead of the
// Process keeping it: for a child that writes more than a test should hold
// (it counts the bytes, or keeps only some). Called on the test's thread,
// from within the Process call that read the chunk.
using OutputObserver = std::function<void(std::string_view chunk)>;

struct RunResult {
  int exit_status = -1;    // the exit code, or -1 when the child did not exit normally
  int signal = 0;          // the signal that ended the child, or 0
  std::string out;         // everything the child wrote on stdout
  std::string err;         // everything the child wrote on stderr
  bool timed_out = false;  // the timeout passed: the child was killed with SIGKILL
};

// Runs argv[0] (a path; PATH is not searched) with argv, writes stdin_data to
// its stdin and closes it, collects stdout and stderr until both reach end of
// file, and reaps the child. A child still running at the timeout is killed.
RunResult run_process(const std::vector<std::string>& argv, const std::string& stdin_data,
                      std::chrono::milliseconds timeout = kDefaultTimeout, const EnvAdditions& env = {});

// The swthrottle binary under test (SWTHROTTLE_BINARY) with `args`, to its
// end; a run that does not end in time fails the test.
RunResult run_swthrottle(const std::vector<std::string>& args, const std::string& stdin_data = "");

// A running child with its three pipes, for tests that talk to it over time
// (follow, signals, a closed output). Move-only; the destructor kills and
// reaps a child still running, so a failed CHECK never leaves one behind.
//
// Whatever the child writes is kept in out()/err(); every call that waits
// (write_stdin, read_stdout_until, wait) drains both pipes meanwhile.
class Process {
 public:
  // Starts argv[0] with the signal mask empty and every signal at its default
  // action (an ignored SIGPIPE in the test must not leak into the child).
  // Throws std::runtime_error (a failed test, for doctest) when the child
  // cannot be started. With a stderr_observer, what the child writes on
  // stderr goes to it, and err() stays empty.
  static Process spawn(const std::vector<std::string>& argv, const EnvAdditions& env = {},
                       OutputObserver stderr_observer = nullptr);

  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();

  pid_t pid() const { return pid_; }
  // Our ends of the pipes (non-blocking), or -1 once closed.
  int stdin_fd() const { return in_; }
  int stdout_fd() const { return out_fd_; }
  int stderr_fd() const { return err_fd_; }

  // Writes all of data, draining output meanwhile. False when the child's
  // stdin is closed (EPIPE; SIGPIPE never reaches the test) or on timeout.
  bool write_stdin(std::string_view data, std::chrono::milliseconds timeout = kDefaultTimeout);
  void close_stdin();
  // Closes our read end of the child's stdout: the child's next write fails
  // with EPIPE, as when the next program of a shell pipeline exits.
  void close_stdout();

  // Reads until pred(out()) holds (checked first, then after every read).
  // False on timeout, or when stdout ends without pred holding.
  bool read_stdout_until(const std::function<bool(const std::string&)>& pred,
                         std::chrono::milliseconds timeout = kDefaultTimeout);
  // Reads until stdout holds at least n complete lines (n "\n").
  bool read_stdout_lines(std::size_t n, std::chrono::milliseconds timeout = kDefaultTimeout);

  // Same, for stderr.
  bool read_stderr_until(const std::function<bool(const std::string&)>& pred,
                         std::chrono::milliseconds timeout = kDefaultTimeout);

  // Reads stdout and stderr until pred() holds (checked first, then after
  // every read, and every few milliseconds meanwhile): for a condition on
  // what an observer saw, on both pipes, or on a file the child's work
  // writes. False on timeout, or when both end without pred holding.
  bool read_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout = kDefaultTimeout);

  // Reads stdout and stderr until both reach end of file (the child and
  // anything it started have closed them). False on timeout.
  bool read_to_eof(std::chrono::milliseconds timeout = kDefaultTimeout);

  bool send_signal(int sig);

  // Closes stdin if still open, waits for the child to exit while draining
  // its output, and reaps it. On timeout the child is killed with SIGKILL and
  // the result has timed_out set. Called again, returns the same result.
  RunResult wait(std::chrono::milliseconds timeout = kDefaultTimeout);

  bool running() const { return pid_ > 0 && !reaped_; }

  // The child's peak resident set size so far (VmHWM of /proc/PID/status),
  // in KiB, or -1 once it has exited or without /proc. Read it while the
  // child still runs: getrusage's ru_maxrss of a spawned child is no use,
  // because Linux carries the parent's peak over through vfork and exec.
  long peak_rss_kb() const;
  const std::string& out() const { return result_.out; }
  const std::string& err() const { return result_.err; }

 private:
  Process() = default;
  using Clock = std::chrono::steady_clock;
  // One poll round over the output pipes (and stdin when want_stdin_write,
  // and the child's exit when watch_exit) until `deadline`; never sleeps when
  // there is nothing to wait on. Returns the poll revents of stdin (0 if not asked).
  short pump(Clock::time_point deadline, bool want_stdin_write, bool watch_exit = false);
  // Reads what is there on fd into `into` (or to `observer` when set).
  // False at end of file or error (fd closed).
  bool drain(int& fd, std::string& into, const OutputObserver& observer = nullptr);
  bool drain_stderr() { return drain(err_fd_, result_.err, stderr_observer_); }
  bool try_reap();  // non-blocking waitpid
  void set_status(int status);
  void kill_and_reap();
  void close_fd(int& fd);

  pid_t pid_ = -1;
  int pidfd_ = -1;  // -1 when the kernel has no pidfd_open: then wait_exit polls in short slices
  int in_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool reaped_ = false;
  RunResult result_;
  OutputObserver stderr_observer_;  // empty: stderr is kept in result_.err
};

// Ended by itself: no signal, no timeout (on failure, says how the child
// ended and what it wrote on stderr).
void check_survived(const RunResult& r);

// Checks pred every few milliseconds until it holds: for conditions that no
// pipe signals (a file's content, a /proc entry). False on timeout.
bool poll_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout = kDefaultTimeout);

// The read offset of a descriptor that process `pid` holds open on the file
// at `path` (found through /proc/PID/fd, the offset read from
// /proc/PID/fdinfo), or -1 when it holds none (or there is no /proc). A test
// of a program that follows a file waits on it until the program has opened
// the file and moved to where it starts reading, instead of sleeping.
long long open_file_offset(pid_t pid, const std::string& path);

// Whether this process has a descriptor other than `except` open on the file
// with this dev and inode: a test waits on it until a follower (on another
// thread) holds a file open. Reads /proc/self/fd with stat() through each
// link, not fstat(): the descriptor is another thread's, and
// ThreadSanitizer rightly sees fstat as a use of it.
bool held_open(dev_t dev, ino_t ino, int except);

}  // namespace swthrottle::test
