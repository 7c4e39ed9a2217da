#include "output/exec.h"

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
#include <system_error>

#include "config/duration.h"
#include "output/writer.h"
#include "util/json.h"

namespace swthrottle::output {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> snapshot_environ() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

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
    case ENOENT: case EACCES: case ENOEXEC: case ENOTDIR: case ELOOP: case ENAMETOOLONG:
    case EISDIR: case E2BIG:
      return true;
    default:
      return false;
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

struct Attempt {
  enum class Outcome { Ok, Failed, Permanent };
  Outcome outcome = Outcome::Failed;
  bool spawned = false;
  bool timed_out = false;
  std::string why;  // for a failure: "exit status 1", "timed out after 30s", ...
};

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
    const bool overridden = std::any_of(job.env.begin(), job.env.end(),
                                        [&](const auto& kv) { return kv.first == name; });
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

// Feeds stdin, waits for the exit, enforces the timeout, and reaps the child
// in every case.
Attempt supervise(pid_t pid, int stdin_fd, const std::string& data, const ExecOptions& opt) {
  Attempt a;
  a.spawned = true;
  // A pidfd turns "the child exited" into a poll(2) event, next to the
  // stdin pipe; without one (kernels before 5.3) we check every 10 ms.
  int pidfd = open_pidfd(pid);
  int wfd = stdin_fd;
  std::size_t off = 0;
  if (data.empty()) close_fd(wfd);

  enum class Phase { Running, Terminating, Killed };
  Phase phase = Phase::Running;
  auto deadline = Clock::now() + std::chrono::milliseconds(opt.timeout_ms);
  int status = 0;
  bool reaped = false;
  int wait_err = 0;

  while (!reaped) {
    pollfd fds[2];
    int n = 0;
    int pid_slot = -1;
    int w_slot = -1;
    if (pidfd >= 0) {
      pid_slot = n;
      fds[n++] = pollfd{pidfd, POLLIN, 0};
    }
    if (wfd >= 0) {
      w_slot = n;
      fds[n++] = pollfd{wfd, POLLOUT, 0};
    }
    int wait_ms = -1;
    if (phase != Phase::Killed) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      wait_ms = static_cast<int>(std::clamp<int64_t>(left, 0, 60'000));
    }
    if (pidfd < 0 && (wait_ms < 0 || wait_ms > 10)) wait_ms = 10;
    const int pr = ::poll(fds, static_cast<nfds_t>(n), wait_ms);
    if (pr < 0 && errno != EINTR) {
      // Only ENOMEM can get here: wait a little rather than spin on it.
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }

    if (pr > 0 && w_slot >= 0 && fds[w_slot].revents != 0) {
      const ssize_t w = ::write(wfd, data.data() + off, data.size() - off);
      if (w > 0) {
        off += static_cast<std::size_t>(w);
        if (off == data.size()) close_fd(wfd);
      } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
        // EPIPE: the command exited or closed stdin without reading it all.
        // That is its business; its exit status says whether it worked.
        if (errno == EPIPE) discard_pending_sigpipe();
        close_fd(wfd);
      }
    }

    if (pidfd < 0 || (pr > 0 && fds[pid_slot].revents != 0)) {
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        reaped = true;
        break;
      }
      if (r < 0 && errno != EINTR) {
        wait_err = errno;  // ECHILD: SIGCHLD is ignored, the kernel reaped it
        break;
      }
    }

    if (phase != Phase::Killed && Clock::now() >= deadline) {
      if (phase == Phase::Running) {
        a.timed_out = true;
        close_fd(wfd);
        signal_child(pid, SIGTERM);
        phase = Phase::Terminating;
        deadline = Clock::now() + std::chrono::milliseconds(opt.kill_grace_ms);
      } else {
        signal_child(pid, SIGKILL);
        phase = Phase::Killed;
      }
    }
  }
  close_fd(wfd);
  close_fd(pidfd);

  if (wait_err != 0) {
    a.outcome = Attempt::Outcome::Permanent;
    a.why = std::string("cannot get its exit status: ") + std::strerror(wait_err);
    return a;
  }
  if (a.timed_out) {
    a.why = "timed out after " + config::format_duration(opt.timeout_ms);
    return a;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    a.outcome = Attempt::Outcome::Ok;
    return a;
  }
  a.why = describe_status(status);
  return a;
}

Attempt attempt_once(const ExecJob& job, const std::vector<std::string>& env, const ExecOptions& opt) {
  const Spawned s = spawn_child(job, env);
  if (s.pid < 0) {
    Attempt a;
    a.outcome = permanent_spawn_error(s.err) ? Attempt::Outcome::Permanent : Attempt::Outcome::Failed;
    a.why = "cannot run \"" + job.argv[0] + "\": " + std::strerror(s.err);
    return a;
  }
  return supervise(s.pid, s.stdin_fd, job.stdin_data, opt);
}

int64_t backoff_for(const ExecOptions& opt, int retry) {
  constexpr int64_t kMaxBackoffMs = 3'600'000;  // an hour: past that, the shift only overflows
  int64_t ms = std::max<int64_t>(opt.backoff_ms, 0);
  for (int i = 1; i < retry && ms < kMaxBackoffMs; ++i) ms *= 2;
  return std::min(ms, kMaxBackoffMs);
}

}  // namespace

ExecPool::ExecPool(ExecOptions o, Reporter report)
    : opt_([&] {
        o.jobs = std::max(o.jobs, 1);
        o.queue_capacity = std::max<std::size_t>(o.queue_capacity, 1);
        o.retries = std::max(o.retries, 0);
        // Capped at ten years so that now() + the duration cannot overflow.
        constexpr int64_t kLongest = int64_t{10} * 366 * 24 * 3'600'000;
        o.timeout_ms = std::clamp<int64_t>(o.timeout_ms, 1, kLongest);
        o.kill_grace_ms = std::clamp<int64_t>(o.kill_grace_ms, 0, kLongest);
        return o;
      }()),
      report_(std::move(report)),
      environ_(snapshot_environ()) {
  workers_.reserve(static_cast<std::size_t>(opt_.jobs));
  try {
    for (int i = 0; i < opt_.jobs; ++i) workers_.emplace_back([this] { worker(); });
  } catch (const std::system_error&) {
    // Out of threads: run with the workers we got; with none, submit() runs
    // jobs itself. Slower, but nothing is lost and nothing crashes.
  }
}

ExecPool::~ExecPool() {
  drain();
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  not_empty_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ExecPool::submit(ExecJob job) {
  if (workers_.empty()) {
    {
      std::lock_guard lk(mu_);
      ++stats_.submitted;
      ++active_;
    }
    sigset_t pipe_set;
    sigset_t old_mask;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
    run(job);
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    std::lock_guard lk(mu_);
    if (--active_ == 0 && queue_.empty()) idle_.notify_all();
    return;
  }
  {
    std::unique_lock lk(mu_);
    not_full_.wait(lk, [&] { return queue_.size() < opt_.queue_capacity; });
    queue_.push_back(std::move(job));
    ++stats_.submitted;
  }
  not_empty_.notify_one();
}

void ExecPool::drain() {
  std::unique_lock lk(mu_);
  idle_.wait(lk, [&] { return queue_.empty() && active_ == 0; });
}

ExecStats ExecPool::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

void ExecPool::worker() {
  // A child that exits without reading its stdin makes our write fail with
  // EPIPE and raise SIGPIPE at this thread; the program may not ignore
  // SIGPIPE, so this thread blocks it (the children get an empty mask).
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);

  for (;;) {
    ExecJob job;
    {
      std::unique_lock lk(mu_);
      not_empty_.wait(lk, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_, and nothing left to run
      job = std::move(queue_.front());
      queue_.pop_front();
      ++active_;
    }
    not_full_.notify_one();
    run(job);
    {
      std::lock_guard lk(mu_);
      --active_;
      if (queue_.empty() && active_ == 0) idle_.notify_all();
    }
  }
}

void ExecPool::run(ExecJob& job) {
  const std::string prefix = "swthrottle: exec: " + job.label + ": ";
  if (job.argv.empty() || job.argv[0].empty()) {
    {
      std::lock_guard lk(mu_);
      ++stats_.gave_up;
    }
    report(prefix + "empty command");
    return;
  }
  const int max_attempts = 1 + opt_.retries;
  for (int attempt = 1;; ++attempt) {
    if (attempt > 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff_for(opt_, attempt - 1)));
      std::lock_guard lk(mu_);
      ++stats_.retried;
    }
    const Attempt a = attempt_once(job, environ_, opt_);
    {
      std::lock_guard lk(mu_);
      if (a.spawned) ++stats_.started;
      if (a.outcome == Attempt::Outcome::Ok) {
        ++stats_.succeeded;
        return;
      }
      ++stats_.failed_attempts;
      if (a.timed_out) ++stats_.timed_out;
      if (a.outcome == Attempt::Outcome::Failed && attempt < max_attempts) continue;
      ++stats_.gave_up;
    }
    if (a.outcome == Attempt::Outcome::Permanent) {
      report(prefix + a.why);
    } else {
      report(prefix + "gave up after " + std::to_string(attempt) + (attempt == 1 ? " attempt: " : " attempts: ") +
             a.why);
    }
    return;
  }
}

void ExecPool::report(const std::string& line) {
  std::lock_guard lk(report_mu_);
  if (report_) {
    report_(line);
    return;
  }
  const std::string out = line + "\n";
  std::size_t off = 0;
  while (off < out.size()) {
    const ssize_t w = ::write(STDERR_FILENO, out.data() + off, out.size() - off);
    if (w > 0) {
      off += static_cast<std::size_t>(w);
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // stderr is gone: nowhere left to say it
    }
  }
}

ExecJob ExecPool::job_for(const engine::Record& r, const std::vector<std::string>& argv) {
  ExecJob job;
  job.argv = argv;
  render(job.stdin_data, r, Format::Json);

  const std::string_view type = engine::to_string(r.type);
  const std::string rule = r.rule != nullptr ? r.rule->name : std::string();
  uint64_t count = 0;
  if (r.type == engine::RecordType::Alert || r.type == engine::RecordType::Resolved) count = r.count;
  if (r.type == engine::RecordType::Summary) count = r.suppressed;
  std::string_view message;
  if (r.has_message) {
    message = r.message;
  } else if (r.type == engine::RecordType::Alert && r.has_line) {
    message = r.line;
  }
  job.env = {
      {"SWTHROTTLE_TYPE", std::string(type)},
      {"SWTHROTTLE_RULE", rule},
      {"SWTHROTTLE_KEY", r.key},
      {"SWTHROTTLE_COUNT", std::to_string(count)},
      {"SWTHROTTLE_MESSAGE", std::string(message)},
  };

  job.label = std::string(type);
  if (!rule.empty()) {
    job.label += ' ';
    append_utf8_one_line(job.label, rule);
  }
  if (!r.key.empty()) {
    job.label += " key=";
    append_utf8_one_line(job.label, r.key);
  }
  return job;
}

// --- split_command -----------------------------------------------------------

Result<std::vector<std::string>> split_command(std::string_view cmd) {
  auto fail = [](std::size_t pos, std::string what) {
    Error e;
    e.col = static_cast<int>(pos) + 1;
    e.what = std::move(what);
    return e;
  };
  auto is_blank = [](char c) { return c == ' ' || c == '\t' || c == '\n'; };
  auto needs_shell = [](std::size_t pos, char c) {
    Error e;
    e.col = static_cast<int>(pos) + 1;
    e.what = "\"" + std::string(1, c) + "\" at column " + std::to_string(pos + 1) +
             " needs a shell: put it in single quotes, or use sh -c '...'";
    return e;
  };

  std::vector<std::string> words;
  std::string word;
  bool in_word = false;  // a word has started (it may still be empty: '')
  std::size_t i = 0;
  while (i < cmd.size()) {
    const char c = cmd[i];
    if (is_blank(c)) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      ++i;
      continue;
    }
    if (c == '\'') {
      const std::size_t close = cmd.find('\'', i + 1);
      if (close == std::string_view::npos) {
        return fail(i, "unterminated single quote (opened at column " + std::to_string(i + 1) + ")");
      }
      word.append(cmd.substr(i + 1, close - i - 1));
      in_word = true;
      i = close + 1;
      continue;
    }
    if (c == '"') {
      const std::size_t open = i;
      ++i;
      bool closed = false;
      while (i < cmd.size()) {
        const char d = cmd[i];
        if (d == '"') {
          closed = true;
          ++i;
          break;
        }
        if (d == '\\' && i + 1 < cmd.size()) {
          const char e = cmd[i + 1];
          if (e == '\n') {
            i += 2;  // line continuation
            continue;
          }
          if (e == '"' || e == '\\' || e == '$' || e == '`') {
            word += e;
            i += 2;
            continue;
          }
        }
        if (d == '$' || d == '`') return needs_shell(i, d);  // a shell would expand it here too
        word += d;
        ++i;
      }
      if (!closed) {
        return fail(open, "unterminated double quote (opened at column " + std::to_string(open + 1) + ")");
      }
      in_word = true;
      continue;
    }
    if (c == '\\') {
      if (i + 1 >= cmd.size()) return fail(i, "backslash at the end of the command");
      if (cmd[i + 1] != '\n') {
        word += cmd[i + 1];
        in_word = true;
      }
      i += 2;
      continue;
    }
    if (std::string_view("|&;<>()$`").find(c) != std::string_view::npos) {
      return needs_shell(i, c);
    }
    word += c;
    in_word = true;
    ++i;
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return fail(0, "empty command");
  return words;
}

}  // namespace swthrottle::output
