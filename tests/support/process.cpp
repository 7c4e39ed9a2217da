#include "support/process.h"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

extern char** environ;

namespace swthrottle::test {

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& what, int err) { throw std::runtime_error(what + ": " + std::strerror(err)); }

int ms_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) fail("fcntl", errno);
}

// write(2) with SIGPIPE kept away from the test: blocked for this thread
// during the call, and a SIGPIPE it raised is taken off the pending set
// before the mask comes back (the classic way without a process-wide SIG_IGN).
ssize_t write_no_sigpipe(int fd, const char* data, std::size_t size) {
  sigset_t pipe_set, old_set, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  const ssize_t n = ::write(fd, data, size);
  const int saved = errno;
  if (n < 0 && saved == EPIPE && !was_pending) {
    const timespec zero{};
    while (sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  errno = saved;
  return n;
}

std::vector<std::string> make_env(const EnvAdditions& additions) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    const bool replaced =
        std::any_of(additions.begin(), additions.end(), [&](const auto& a) { return a.first == name; });
    if (!replaced) env.emplace_back(entry);
  }
  for (const auto& [name, value] : additions) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

// --- Process ----------------------------------------------------------------

Process Process::spawn(const std::vector<std::string>& argv, const EnvAdditions& env, OutputObserver stderr_observer) {
  if (argv.empty()) throw std::runtime_error("spawn: empty argv");
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) fail("pipe2", errno);
  if (::pipe2(out, O_CLOEXEC) != 0) fail("pipe2", errno);
  if (::pipe2(err, O_CLOEXEC) != 0) fail("pipe2", errno);

  // The pipe ends carry O_CLOEXEC; dup2 onto 0/1/2 clears it for the copies,
  // so the child keeps exactly its three standard descriptors from us.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> args(argv.begin(), argv.end());
  std::vector<std::string> envs = make_env(env);
  std::vector<char*> c_args = c_strings(args);
  std::vector<char*> c_env = c_strings(envs);

  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, args[0].c_str(), &actions, &attr, c_args.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    ::close(err[0]);
    fail("posix_spawn " + args[0], rc);
  }

  Process p;
  p.pid_ = pid;
  p.in_ = in[1];
  p.out_fd_ = out[0];
  p.err_fd_ = err[0];
  p.stderr_observer_ = std::move(stderr_observer);
  set_nonblocking(p.in_);
  set_nonblocking(p.out_fd_);
  set_nonblocking(p.err_fd_);
#ifdef SYS_pidfd_open
  p.pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));  // -1 on kernels before 5.3
#endif
  return p;
}

Process::Process(Process&& other) noexcept { *this = std::move(other); }

Process& Process::operator=(Process&& other) noexcept {
  if (this != &other) {
    if (running()) kill_and_reap();
    close_fd(in_);
    close_fd(out_fd_);
    close_fd(err_fd_);
    close_fd(pidfd_);
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::exchange(other.pidfd_, -1);
    in_ = std::exchange(other.in_, -1);
    out_fd_ = std::exchange(other.out_fd_, -1);
    err_fd_ = std::exchange(other.err_fd_, -1);
    reaped_ = std::exchange(other.reaped_, false);
    result_ = std::move(other.result_);
    stderr_observer_ = std::move(other.stderr_observer_);
  }
  return *this;
}

Process::~Process() {
  if (running()) kill_and_reap();
  close_fd(in_);
  close_fd(out_fd_);
  close_fd(err_fd_);
  close_fd(pidfd_);
}

void Process::close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool Process::drain(int& fd, std::string& into, const OutputObserver& observer) {
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      if (observer) {
        observer(std::string_view(buf, static_cast<std::size_t>(n)));
      } else {
        into.append(buf, static_cast<std::size_t>(n));
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    close_fd(fd);  // end of file, or an error: either way nothing more comes
    return false;
  }
}

short Process::pump(Clock::time_point deadline, bool want_stdin_write, bool watch_exit) {
  pollfd fds[4];
  nfds_t n = 0;
  int out_i = -1, err_i = -1, in_i = -1;
  if (out_fd_ >= 0) {
    out_i = static_cast<int>(n);
    fds[n++] = {out_fd_, POLLIN, 0};
  }
  if (err_fd_ >= 0) {
    err_i = static_cast<int>(n);
    fds[n++] = {err_fd_, POLLIN, 0};
  }
  if (want_stdin_write && in_ >= 0) {
    in_i = static_cast<int>(n);
    fds[n++] = {in_, POLLOUT, 0};
  }
  int timeout = ms_until(deadline);
  if (watch_exit && !reaped_) {
    if (pidfd_ >= 0) {
      fds[n++] = {pidfd_, POLLIN, 0};
    } else {
      timeout = std::min(timeout, 10);  // no pidfd: look at the child again soon
    }
  }
  // Nothing to wait on: return at once, unless waiting for the exit of a
  // child without a pidfd, where poll(nullptr, 0, ...) is the bounded wait.
  if (n == 0 && !(watch_exit && !reaped_)) return 0;
  const int ready = ::poll(n == 0 ? nullptr : fds, n, timeout);
  if (ready <= 0) return 0;
  if (out_i >= 0 && fds[out_i].revents != 0) drain(out_fd_, result_.out);
  if (err_i >= 0 && fds[err_i].revents != 0) drain_stderr();
  return in_i >= 0 ? fds[in_i].revents : 0;
}

bool Process::write_stdin(std::string_view data, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::size_t off = 0;
  while (off < data.size()) {
    if (in_ < 0) return false;
    const ssize_t n = write_no_sigpipe(in_, data.data() + off, data.size() - off);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      pump(Clock::now(), false);  // take what the child wrote meanwhile, without waiting
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (Clock::now() >= deadline) return false;
      const short revents = pump(deadline, true);
      if (revents & (POLLERR | POLLHUP | POLLNVAL)) {
        close_stdin();  // the child closed its stdin (or exited)
        return false;
      }
      continue;
    }
    close_stdin();  // EPIPE: nobody reads any more
    return false;
  }
  return true;
}

void Process::close_stdin() { close_fd(in_); }

void Process::close_stdout() { close_fd(out_fd_); }

bool Process::read_stdout_until(const std::function<bool(const std::string&)>& pred,
                                std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (pred(result_.out)) return true;
    if (out_fd_ < 0 || Clock::now() >= deadline) return false;
    pump(deadline, false);
  }
}

bool Process::read_stdout_lines(std::size_t n, std::chrono::milliseconds timeout) {
  return read_stdout_until(
      [n](const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')) >= n; },
      timeout);
}

bool Process::read_stderr_until(const std::function<bool(const std::string&)>& pred,
                                std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (pred(result_.err)) return true;
    if (err_fd_ < 0 || Clock::now() >= deadline) return false;
    pump(deadline, false);
  }
}

bool Process::read_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (pred()) return true;
    if ((out_fd_ < 0 && err_fd_ < 0) || Clock::now() >= deadline) return false;
    // pred may look at more than the pipes (a file): look again every few
    // milliseconds even when nothing arrives.
    pump(std::min(deadline, Clock::now() + std::chrono::milliseconds(10)), false);
  }
}

bool Process::read_to_eof(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (out_fd_ >= 0 || err_fd_ >= 0) {
    if (Clock::now() >= deadline) return false;
    pump(deadline, false);
  }
  return true;
}

bool Process::send_signal(int sig) { return running() && ::kill(pid_, sig) == 0; }

bool Process::try_reap() {
  if (reaped_) return true;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r != pid_) return false;
  set_status(status);
  return true;
}

void Process::set_status(int status) {
  reaped_ = true;
  if (WIFEXITED(status)) result_.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result_.signal = WTERMSIG(status);
  close_fd(pidfd_);
}

long Process::peak_rss_kb() const {
  if (!running()) return -1;
  std::ifstream f("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

void Process::kill_and_reap() {
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  set_status(status);
}

RunResult Process::wait(std::chrono::milliseconds timeout) {
  close_stdin();  // a filter ends at end of input
  const auto deadline = Clock::now() + timeout;
  while (!try_reap()) {
    if (Clock::now() >= deadline) {
      kill_and_reap();
      result_.timed_out = true;
      break;
    }
    pump(deadline, false, /*watch_exit=*/true);
  }
  // Whatever the child wrote before it exited is in the pipes now. A
  // grandchild may still hold them open: take what is there, without waiting.
  if (out_fd_ >= 0) drain(out_fd_, result_.out);
  if (err_fd_ >= 0) drain_stderr();
  close_fd(out_fd_);
  close_fd(err_fd_);
  return result_;
}

RunResult run_process(const std::vector<std::string>& argv, const std::string& stdin_data,
                      std::chrono::milliseconds timeout, const EnvAdditions& env) {
  const auto deadline = Clock::now() + timeout;
  Process p = Process::spawn(argv, env);
  // A child that exits without reading all of its input is not an error here:
  // its exit status says what happened.
  p.write_stdin(stdin_data, timeout);
  p.close_stdin();
  // Collect output until both pipes end, as a shell pipeline would, then reap.
  p.read_to_eof(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return p.wait(std::max(left, std::chrono::milliseconds(0)));
}

void check_survived(const RunResult& r) {
  INFO("signal " << r.signal << ", timed out " << r.timed_out << ", stderr: " << r.err);
  CHECK(r.signal == 0);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_status >= 0);
}

bool poll_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (pred()) return true;
    if (Clock::now() >= deadline) return false;
    ::poll(nullptr, 0, std::min(10, ms_until(deadline)));  // a bounded pause between looks
  }
}

long long open_file_offset(pid_t pid, const std::string& path) {
  std::error_code ec;
  const std::filesystem::path want = std::filesystem::weakly_canonical(path, ec);
  if (ec) return -1;
  const std::string proc = "/proc/" + std::to_string(pid);
  // increment(ec), not ++: the process may close descriptors (or exit) while we look.
  for (std::filesystem::directory_iterator it(proc + "/fd", ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code link_ec;
    const std::filesystem::path target = std::filesystem::read_symlink(it->path(), link_ec);
    if (link_ec || target != want) continue;
    std::ifstream info(proc + "/fdinfo/" + it->path().filename().string());
    std::string line;
    while (std::getline(info, line)) {
      if (line.rfind("pos:", 0) == 0) return std::strtoll(line.c_str() + 4, nullptr, 10);
    }
  }
  return -1;
}

RunResult run_swthrottle(const std::vector<std::string>& args, const std::string& stdin_data) {
  std::vector<std::string> argv{SWTHROTTLE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = run_process(argv, stdin_data);
  REQUIRE_MESSAGE(!r.timed_out, "swthrottle did not finish in time");
  return r;
}

bool held_open(dev_t dev, ino_t ino, int except) {
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::atoi(e.path().filename().c_str());
    struct stat st;
    if (fd != except && ::stat(e.path().c_str(), &st) == 0 && st.st_dev == dev && st.st_ino == ino) return true;
  }
  return false;
}

}  // namespace swthrottle::test
