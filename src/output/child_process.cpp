#include "output/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>
#include <thread>

#include "config/duration.h"

namespace swthrottle::output {
namespace {

std::string_view env_name(std::string_view entry) { return entry.substr(0, entry.find('=')); }

// An environment string cannot hold a NUL: cut there, as the C API would.
std::string env_entry(std::string_view name, std::string_view value) {
  std::string s;
  s.reserve(name.size() + 1 + value.size());
  s += name;
  s += '=';
  s += value.substr(0, value.find('\0'));
  return s;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    if (const char* abbrev = sigabbrev_np(sig)) return std::string("killed by SIG") + abbrev;
    return "killed by signal " + std::to_string(sig);
  }
  return "wait status " + std::to_string(status);
}

// Spawn errors that a retry cannot fix: report at once instead of retrying.
bool permanent_spawn_error(int err) {
  switch (err) {
    case ENOENT:
    case EACCES:
    case ENOEXEC:
    case ENOTDIR:
    case ELOOP:
    case ENAMETOOLONG:
    case EISDIR:
    case E2BIG: return true;
    default: return false;
  }
}

// Moves a descriptor to >= 3, so that dup2 onto the child's 0/1/2 never
// collides with it (possible when this process was started with 0, 1 or 2
// closed).
int above_stdio(int fd) {
  if (fd >= 3) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

// glibc 2.36's <sys/pidfd.h> lacks extern "C", so C++ cannot link its
// pidfd_open(); the system call is the same thing.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;  // supervise() then polls waitpid every 10 ms
#endif
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The EPIPE of a write to a child that stopped reading also raised a
// SIGPIPE aimed at this thread, where it is blocked. Take it off the pending
// set so that it cannot fire if the mask ever changes.
void discard_pending_sigpipe() {
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  const timespec zero{0, 0};
  while (::sigtimedwait(&pipe_set, nullptr, &zero) == SIGPIPE) {
  }
}

// Signals the command's process group (it leads one, see the attributes in
// spawn_child); the leader alone if the group is already gone.
void signal_child(pid_t pid, int sig) {
  if (::kill(-pid, sig) != 0) ::kill(pid, sig);
}

struct Spawned {
  pid_t pid = -1;
  int stdin_fd = -1;  // our end of the child's stdin pipe
  int err = 0;        // errno of a failed spawn
};

Spawned spawn_child(const ExecJob& job, const std::vector<std::string>& parent_env) {
  Spawned s;
  std::vector<std::string> env_strings;
  env_strings.reserve(parent_env.size() + job.env.size());
  for (const std::string& e : parent_env) {
    const std::string_view name = env_name(e);
    const bool overridden =
        std::any_of(job.env.begin(), job.env.end(), [&](const auto& kv) { return kv.first == name; });
    if (!overridden) env_strings.push_back(e);
  }
  for (const auto& [name, value] : job.env) env_strings.push_back(env_entry(name, value));
  std::vector<char*> envp;
  envp.reserve(env_strings.size() + 1);
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  std::vector<std::string> argv_strings = job.argv;
  std::vector<char*> argv;
  argv.reserve(argv_strings.size() + 1);
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);

  // O_CLOEXEC: a child spawned by another thread at the same moment must not
  // inherit our write end, or this child would never see EOF on stdin.
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    s.err = errno;
    return s;
  }
  p[0] = above_stdio(p[0]);
  p[1] = above_stdio(p[1]);
  if (p[0] < 0 || p[1] < 0) {
    s.err = errno;
    close_fd(p[0]);
    close_fd(p[1]);
    return s;
  }

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[0], STDIN_FILENO);
  // The child's stdout goes to our stderr: our stdout carries records, and
  // a command's output must never interleave with them.
  posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attr, &empty);
  // Only the signals this program itself ignores go back to their default:
  // other ignored signals were ignored by whoever started us, and a shell
  // would pass them on too.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGXFSZ);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  ::close(p[0]);
  if (rc != 0) {
    ::close(p[1]);
    s.err = rc;
    return s;
  }
  // Non-blocking, so that a child that never reads cannot hold us past the
  // timeout: the write waits in poll(2) next to the exit notification.
  ::fcntl(p[1], F_SETFL, ::fcntl(p[1], F_GETFL) | O_NONBLOCK);
  s.pid = pid;
  s.stdin_fd = p[1];
  return s;
}

// One child under watch until it is reaped: its stdin fed, its exit
// awaited, its timeout (and a stop) enforced by SIGTERM then SIGKILL.
class Supervision {
 public:
  Supervision(pid_t pid, int stdin_fd, const std::string& data, const ChildLimits& limits, const Clock& clock,
              const ChildStop& stop)
      : pid_(pid), wfd_(stdin_fd), data_(data), limits_(limits), clock_(clock), stop_(stop) {
    result_.spawned = true;
    // A pidfd turns "the child exited" into a poll(2) event, next to the
    // stdin pipe; without one (kernels before 5.3) we check every 10 ms.
    pidfd_ = open_pidfd(pid);
    if (data.empty()) close_fd(wfd_);
    deadline_ = clock.steady_ms() + limits.timeout_ms;
  }

  // Feeds stdin, waits for the exit, enforces the timeout, and reaps the
  // child in every case.
  ChildResult run() {
    while (!reaped_) {
      const Polled p = poll_once();
      if (p.rc > 0 && p.w_slot >= 0 && p.fds[p.w_slot].revents != 0) feed();
      if ((pidfd_ < 0 || (p.rc > 0 && p.fds[p.pid_slot].revents != 0)) && try_reap()) break;
      escalate(p);
    }
    close_fd(wfd_);
    close_fd(pidfd_);
    return result();
  }

 private:
  enum class Phase { Running, Terminating, Killed };
  struct Polled {
    pollfd fds[3];
    int pid_slot = -1;
    int w_slot = -1;
    int stop_slot = -1;
    int rc = 0;
  };

  bool stop_asked() const { return stop_.flag != nullptr && stop_.flag->load(std::memory_order_acquire); }

  Polled poll_once() const {
    Polled p;
    int n = 0;
    if (phase_ == Phase::Running && stop_.fd >= 0) {
      p.stop_slot = n;  // watched while running only: once readable, it stays so
      p.fds[n++] = pollfd{stop_.fd, POLLIN, 0};
    }
    if (pidfd_ >= 0) {
      p.pid_slot = n;
      p.fds[n++] = pollfd{pidfd_, POLLIN, 0};
    }
    if (wfd_ >= 0) {
      p.w_slot = n;
      p.fds[n++] = pollfd{wfd_, POLLOUT, 0};
    }
    int wait_ms = -1;
    if (phase_ != Phase::Killed) {
      const int64_t left = deadline_ - clock_.steady_ms();
      wait_ms = static_cast<int>(std::clamp<int64_t>(left, 0, 60'000));
    }
    if (pidfd_ < 0 && (wait_ms < 0 || wait_ms > 10)) wait_ms = 10;
    if (phase_ == Phase::Running && stop_.fd < 0 && stop_.flag != nullptr && (wait_ms < 0 || wait_ms > 50))
      wait_ms = 50;
    p.rc = ::poll(p.fds, static_cast<nfds_t>(n), wait_ms);
    if (p.rc < 0 && errno != EINTR) {
      // Only ENOMEM can get here: wait a little rather than spin on it.
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return p;
  }

  void feed() {
    const ssize_t w = ::write(wfd_, data_.data() + off_, data_.size() - off_);
    if (w > 0) {
      off_ += static_cast<std::size_t>(w);
      if (off_ == data_.size()) close_fd(wfd_);
    } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
      // EPIPE: the command exited or closed stdin without reading it all.
      // That is its business; its exit status says whether it worked.
      if (errno == EPIPE) discard_pending_sigpipe();
      close_fd(wfd_);
    }
  }

  // True when the waiting is over: reaped, or its status cannot be had.
  bool try_reap() {
    const pid_t r = ::waitpid(pid_, &status_, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      return true;
    }
    if (r < 0 && errno != EINTR) {
      wait_err_ = errno;  // ECHILD: SIGCHLD is ignored, the kernel reaped it
      return true;
    }
    return false;
  }

  // A stop asked for, or the deadline passed: SIGTERM, then after the grace SIGKILL.
  void escalate(const Polled& p) {
    if (phase_ == Phase::Running &&
        ((p.rc > 0 && p.stop_slot >= 0 && p.fds[p.stop_slot].revents != 0) || stop_asked())) {
      // The program stops: no waiting for the timeout.
      result_.stopped = true;
      terminate();
    }
    if (phase_ == Phase::Killed || clock_.steady_ms() < deadline_) return;
    if (phase_ == Phase::Running) {
      result_.timed_out = true;
      terminate();
    } else {
      signal_child(pid_, SIGKILL);
      phase_ = Phase::Killed;
    }
  }

  void terminate() {
    close_fd(wfd_);
    signal_child(pid_, SIGTERM);
    phase_ = Phase::Terminating;
    deadline_ = clock_.steady_ms() + limits_.kill_grace_ms;
  }

  ChildResult result() {
    ChildResult& a = result_;
    if (wait_err_ != 0) {
      a.outcome = ChildResult::Outcome::Permanent;
      a.why = std::string("cannot get its exit status: ") + std::strerror(wait_err_);
    } else if (a.timed_out) {
      a.why = "timed out after " + config::format_duration(limits_.timeout_ms);
    } else if (a.stopped) {
      a.why = "killed at stop (" + describe_status(status_) + ")";
    } else if (WIFEXITED(status_) && WEXITSTATUS(status_) == 0) {
      a.outcome = ChildResult::Outcome::Ok;
    } else {
      a.why = describe_status(status_);
    }
    return a;
  }

  const pid_t pid_;
  int wfd_;
  int pidfd_ = -1;
  const std::string& data_;
  const ChildLimits& limits_;
  const Clock& clock_;
  const ChildStop& stop_;
  std::size_t off_ = 0;
  Phase phase_ = Phase::Running;
  int64_t deadline_ = 0;
  int status_ = 0;
  bool reaped_ = false;
  int wait_err_ = 0;
  ChildResult result_;
};

}  // namespace

ChildResult run_child(const ExecJob& job, const std::vector<std::string>& parent_env, const ChildLimits& limits,
                      const Clock& clock, const ChildStop& stop) {
  const Spawned s = spawn_child(job, parent_env);
  if (s.pid < 0) {
    ChildResult a;
    a.outcome = permanent_spawn_error(s.err) ? ChildResult::Outcome::Permanent : ChildResult::Outcome::Failed;
    a.why = "cannot run \"" + job.argv[0] + "\": " + std::strerror(s.err);
    return a;
  }
  return Supervision(s.pid, s.stdin_fd, job.stdin_data, limits, clock, stop).run();
}

}  // namespace swthrottle::output
