// --state: the crash-safe file around the state's text (state_codec.h): the
// lock for a run, load (with a corrupt file set aside), save. See
// state_file.h for the guarantees.
#include "state/state_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "state/state_checksum.h"
#include "util/atomic_file.h"
#include "util/clock.h"

namespace swthrottle::state {
namespace {

using engine::EngineState;

// ---------------------------------------------------------------- files

std::string strerr(int e) { return std::strerror(e); }

// PATH.lock, for reading and writing when we may, else read-only (flock
// works on either; the lock file of another user may be 0644).
int open_lock_file(const std::string& lock_path) {
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 && (errno == EACCES || errno == EROFS)) {
    int saved = errno;
    fd = ::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) errno = saved;
  }
  return fd;
}

int flock_blocking(int fd) {
  while (::flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) return -1;
  return 0;
}

std::string corrupt_name(const std::string& path, int64_t now_wall_ms) {
  std::time_t secs = static_cast<std::time_t>(now_wall_ms >= 0 ? now_wall_ms / 1000 : (now_wall_ms - 999) / 1000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[32];
  std::size_t n = std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return path + ".corrupt-" + std::string(buf, n);
}

// rename without replacing an existing file. Returns 0 or an errno.
int rename_noreplace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return errno;
  // A file system without RENAME_NOREPLACE: check, then rename. We hold the
  // lock, so only a stranger could create the name in between.
  struct stat st;
  if (::lstat(to.c_str(), &st) == 0) return EEXIST;
  return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

}  // namespace

// ---------------------------------------------------------------- StateFile

StateFile::StateFile(std::string path) : path_(std::move(path)) {}

StateFile::~StateFile() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

Result<bool> StateFile::lock_for_run(const std::function<void(const std::string&)>& on_wait) {
  // No bound and no way to stop: the bounded wait that only sleeps.
  auto sleep = [](int64_t ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return true;
  };
  auto locked = lock_for_run_within(-1, on_wait, sleep);
  if (!locked) return locked.error();
  return true;
}

Result<StateFile::Wait> StateFile::lock_for_run_within(int64_t max_wait_ms,
                                                       const std::function<void(const std::string&)>& on_wait,
                                                       const std::function<bool(int64_t)>& pause, const Clock& clock) {
  std::lock_guard guard(mu_);
  if (lock_fd_ >= 0) return Wait::Locked;
  const std::string lp = lock_path();
  int fd = open_lock_file(lp);
  if (fd < 0)
    return Error{"", 0, 0, fmt::format("cannot lock state file {}: cannot open {}: {}", path_, lp, strerr(errno))};
  const int64_t begin = clock.steady_ms();
  bool told = false;
  int64_t step_ms = 5;  // grows to 100 ms: prompt for short waits, cheap for long ones
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) break;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) {
      int e = errno;
      ::close(fd);
      return Error{"", 0, 0, fmt::format("cannot lock state file {}: {}", path_, strerr(e))};
    }
    if (!told && on_wait) on_wait("waiting for lock on " + lp);
    told = true;
    const int64_t waited = clock.steady_ms() - begin;
    int64_t pause_ms = step_ms;
    if (max_wait_ms >= 0) {
      if (waited >= max_wait_ms) {
        ::close(fd);
        return Wait::Busy;
      }
      pause_ms = std::min(pause_ms, max_wait_ms - waited);
    }
    if (!pause(pause_ms)) {
      ::close(fd);
      return Wait::Stopped;
    }
    step_ms = std::min<int64_t>(step_ms * 2, 100);
  }
  lock_fd_ = fd;
  return Wait::Locked;
}

void StateFile::unlock() {
  std::lock_guard guard(mu_);
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing the last fd of the description releases the flock
  lock_fd_ = -1;
}

int StateFile::acquire(int& temp_fd) {
  temp_fd = -1;
  if (lock_fd_ >= 0) return lock_fd_;
  int fd = open_lock_file(lock_path());
  if (fd < 0) return -1;
  if (flock_blocking(fd) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  temp_fd = fd;
  return fd;
}

namespace {
struct FdCloser {
  int& fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};
}  // namespace

std::string StateFile::move_aside(int64_t now_wall_ms, std::string& aside) {
  const std::string base = corrupt_name(path_, now_wall_ms);
  int e = 0;
  for (int n = 1; n <= 1000; ++n) {
    aside = n == 1 ? base : base + "." + std::to_string(n);
    e = rename_noreplace(path_, aside);
    if (e != EEXIST) break;
  }
  if (e == 0) return {};
  aside.clear();
  return strerr(e);
}

EngineState StateFile::load(std::string& warning) { return load(warning, SystemClock().wall_ms()); }

EngineState StateFile::load(std::string& warning, int64_t now_wall_ms) {
  warning.clear();
  std::lock_guard guard(mu_);
  int temp_lock = -1;
  (void)acquire(temp_lock);  // without a lock file (read-only directory) we still read
  FdCloser release{temp_lock};

  auto aside = [&](const std::string& why) {
    std::string to;
    std::string err = move_aside(now_wall_ms, to);
    warning = err.empty() ? fmt::format("state file {}; moved aside to {}, starting fresh", why, to)
                          : fmt::format("state file {}; could not move it aside ({}), starting fresh", why, err);
    return EngineState{};
  };

  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // O_NONBLOCK: a FIFO must not hang us
  if (fd < 0) {
    // No file there (ENOTDIR: a part of the path is a file): nothing to read,
    // nor to move aside; a save says why it fails.
    if (errno == ENOENT || errno == ENOTDIR) return {};
    return aside(fmt::format("{}: cannot read: {}", path_, strerr(errno)));
  }
  FdCloser close_fd{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return aside(fmt::format("{}: cannot read: {}", path_, strerr(errno)));
  if (!S_ISREG(st.st_mode)) {
    // Renaming /dev/null or a directory aside would be worse than the problem.
    warning = fmt::format("state file {}: not a regular file; starting fresh, and it will not be saved", path_);
    return {};
  }
  std::string text;
  text.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got_bytes = 0;
  for (;;) {
    if (got_bytes == text.size()) text.resize(text.size() + 65536);  // the file may have grown
    ssize_t n = ::read(fd, text.data() + got_bytes, text.size() - got_bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      return aside(fmt::format("{}: cannot read: {}", path_, strerr(errno)));
    }
    if (n == 0) break;
    got_bytes += static_cast<std::size_t>(n);
  }
  text.resize(got_bytes);
  // Nothing to lose in an empty file; `touch state.json` is a natural first step.
  if (text.empty()) return {};
  const SealCheck seal = check_seal(text);
  if (seal.seal == Seal::Bad) return aside(fmt::format("{}: {}", path_, seal.why));
  auto parsed = from_json(text);
  if (!parsed) {
    Error e = parsed.error();
    e.file = path_;
    return aside(e.str());
  }
  // Written before checksums were: loaded once, and the next save adds one.
  if (seal.seal == Seal::Missing)
    warning = fmt::format(
        "state file {} has no checksum (saved by an older swthrottle): loaded as it is; the next "
        "save adds one",
        path_);
  return std::move(*parsed);
}

Result<bool> StateFile::save(const EngineState& s, int64_t now_wall_ms) {
  const std::string text = seal(to_json(s, now_wall_ms));  // before the lock: keep the locked time short
  std::lock_guard guard(mu_);
  auto fail = [&](int e) { return Error{"", 0, 0, fmt::format("cannot save state to {}: {}", path_, strerr(e))}; };

  int temp_lock = -1;
  if (acquire(temp_lock) < 0) return fail(errno);
  FdCloser release{temp_lock};

  mode_t mode = 0600;  // keys come from log lines (addresses, user names): private by default
  struct stat st;
  if (::stat(path_.c_str(), &st) == 0) {
    // rename() would replace a device node or a FIFO (think --state /dev/null as root).
    if (!S_ISREG(st.st_mode)) return Error{"", 0, 0, fmt::format("cannot save state to {}: not a regular file", path_)};
    mode = st.st_mode & 0777;
  }
  if (!cleaned_) {
    cleaned_ = true;
    remove_stale_temporaries(path_);
  }
  if (int e = replace_file_atomically(path_, text, mode); e != 0) return fail(e);
  return true;
}

}  // namespace swthrottle::state
