#include "input/follow.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>
#include <system_error>
#include <utility>

namespace swthrottle::input {

namespace {

// Per followed file; the reader grows it while a single line does not fit.
constexpr std::size_t kBufferSize = 1 << 16;

constexpr uint32_t kFileEvents = IN_MODIFY | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF;
// IN_ATTRIB: a chmod can make a waited-for file readable.
constexpr uint32_t kDirEvents = IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ATTRIB | IN_ONLYDIR;

// strerror is not thread-safe; every decider thread has its own Follower.
std::string reason(int err) { return std::generic_category().message(err); }

std::string proc_fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

}  // namespace

Follower::Follower(std::string path, FollowOptions opts, const Clock& clock)
    : path_(std::move(path)),
      opts_(opts),
      clock_(clock),
      reader_(-1, opts.max_line, kBufferSize, /*hold_partial=*/true) {
  reader_.read_through(this);
  const auto slash = path_.rfind('/');
  dir_ = slash == std::string::npos ? "." : slash == 0 ? "/" : path_.substr(0, slash);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);  // without it, stop() is seen at the next check
  if (opts_.use_inotify) {
    inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (inotify_fd_ < 0) notice("'" + path_ + "': inotify cannot be used, reverting to polling: " + reason(errno));
    else watch_dir();  // before the first open, so that a file created right after a failed open is seen
    if (inotify_fd_ >= 0) {
      watcher_ =
          std::make_unique<NameWatcher>(dir_, slash == std::string::npos ? path_ : path_.substr(slash + 1), path_);
      // One that could not start (no descriptor left for it) would only hold its own.
      if (!watcher_->active()) watcher_.reset();
    }
  }
  try_open();
  first_open_ = false;  // a file that appears later is read from its start
}

Follower::~Follower() {
  watcher_.reset();  // its thread first: it may still queue a descriptor
  while (pin_count_ > 0) unpin_front(/*close_it=*/true);
  close_file();
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

std::optional<Line> Follower::next(int timeout_ms) {
  int64_t deadline = -1;  // taken at the first wait: no clock read for a line that is there
  for (;;) {
    if (stopped()) return std::nullopt;
    if (pending_ != Pending::None) {
      const Pending p = std::exchange(pending_, Pending::None);
      if (p == Pending::Switch) {
        switch_file();
      } else if (p == Pending::Rewind) {
        rewind();
      } else {
        close_file();
        hold_off_ = true;
      }
      continue;
    }
    if (fd_ >= 0) {
      if (auto line = reader_.next()) return line;
      if (!reader_.at_eof()) {
        read_failed();
        continue;
      }
      if (stream_) {
        // All writers are gone (only possible when the FIFO could not be
        // opened read-write, or for a device): reopen the name later.
        if (auto partial = reader_.take_partial()) {
          pending_ = Pending::Close;
          return partial;
        }
        close_file();
        hold_off_ = true;
        continue;
      }
      if (regrown_) {
        // A read found the first bytes changed and dropped what it read.
        regrown_ = false;
        truncated(/*regrown=*/true);
        if (auto partial = reader_.take_partial()) {
          pending_ = Pending::Rewind;
          return partial;
        }
        rewind();
        continue;
      }
      if (switch_ != Change::None) {
        // The writer was seen to have moved before the read that just hit the
        // end of this file: all that was written here before is read.
        if (auto partial = reader_.take_partial()) {
          pending_ = Pending::Switch;
          return partial;
        }
        switch_file();
        continue;
      }
      const Change c = examine();
      if (c == Change::Truncated) {
        if (auto partial = reader_.take_partial()) {
          pending_ = Pending::Rewind;
          return partial;
        }
        rewind();
        continue;
      }
      if (c == Change::Replaced || c == Change::Next) {
        switch_ = c;
        continue;  // read what came since, then switch
      }
    } else if (!hold_off_ && try_open()) {
      continue;
    }
    if (let_go_.load(std::memory_order_acquire)) {
      // At the end of the file read (or with none): what it had is read.
      stop();
      continue;
    }
    if (fresh_notice_) {
      fresh_notice_ = false;
      return std::nullopt;
    }
    if (timeout_ms >= 0 && deadline < 0) deadline = clock_.steady_ms() + timeout_ms;
    if (!wait(deadline)) return std::nullopt;
  }
}

void Follower::let_go() {
  let_go_.store(true, std::memory_order_release);
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    if (::write(wake_fd_, &one, sizeof one) < 0) {
      // Only EAGAIN is possible (the counter is full): the fd is readable then.
    }
  }
}

void Follower::stop() {
  stop_.store(true, std::memory_order_release);
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    if (::write(wake_fd_, &one, sizeof one) < 0) {
      // Only EAGAIN is possible (the counter is full): the fd is readable then.
    }
  }
}

// The bytes just read came from the file's own content, not from a new
// content after a truncation, when the file still begins with its first
// bytes *after* the read: had it been truncated before the read, its head
// would be the new content's now (the limit: an identical head). Checked
// after, not before, so that no truncation can slip in between. When the
// head changed, what was read is dropped and the file is read again from
// offset 0; had the truncation come just after the read, those bytes were
// the old content's last ones, which copytruncate keeps only in the copy.
//
// While a backlog is read, the path is looked at after a read when the
// directory changed (inotify) or every poll interval, so that a new file is
// pinned then, not only at the end of the backlog.
std::ptrdiff_t Follower::read(char* buf, std::size_t n) {
  const std::ptrdiff_t got = read_fd(fd_, buf, n, source_error_);
  if (!stream_ && got >= 0) {
    // For metrics (bytes_behind): where this read left the file; two system
    // calls per read of up to 64 KiB, not per line.
    struct stat st;
    const off_t at = ::lseek(fd_, 0, SEEK_CUR);
    if (at >= 0 && ::fstat(fd_, &st) == 0) {
      read_dev_.store(st.st_dev, std::memory_order_relaxed);
      read_ino_.store(st.st_ino, std::memory_order_relaxed);
      read_offset_.store(at, std::memory_order_relaxed);
    }
  }
  if (got <= 0 || stream_) return got;
  if (!fingerprint_.same(fd_)) {
    regrown_ = true;
    return 0;  // ends this read as the end of the file: next() sees regrown_
  }
  if (drain_inotify() || clock_.steady_ms() >= next_look_ms_) look();
  return got;
}

uint64_t Follower::bytes_behind() const {
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  const int64_t at = read_offset_.load(std::memory_order_relaxed);
  const bool same = at >= 0 && read_dev_.load(std::memory_order_relaxed) == static_cast<uint64_t>(st.st_dev) &&
                    read_ino_.load(std::memory_order_relaxed) == static_cast<uint64_t>(st.st_ino);
  if (!same) return static_cast<uint64_t>(st.st_size);  // a file not opened yet: all of it waits
  return st.st_size > at ? static_cast<uint64_t>(st.st_size - at) : 0;
}

std::optional<Line> Follower::take_partial() {
  if (fd_ < 0) return std::nullopt;
  return reader_.take_partial();
}

std::vector<std::string> Follower::take_notices() {
  fresh_notice_ = false;
  return std::exchange(notices_, {});
}

bool Follower::try_open() {
  const auto lock = lock_watcher();
  if (pin_count_ > 0) return adopt_pin();  // opened by the watcher: older than what is at the path now
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // O_NONBLOCK: a FIFO without writer
  if (fd < 0) {
    open_failed(errno);
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    const int err = S_ISDIR(st.st_mode) ? EISDIR : errno;
    ::close(fd);
    open_failed(err);
    return false;
  }
  adopt(fd, st);
  if (watcher_) watcher_->opened_at_path(id_.dev, id_.ino);  // under its lock: it never queues this file again
  return true;
}

void Follower::adopt(int fd, const struct stat& st) {
  const bool stream = !S_ISREG(st.st_mode);
  if (S_ISFIFO(st.st_mode)) {
    // Being a writer too, we never see the end of the FIFO: its writers may
    // come and go, as with a syslog pipe, without a line lost in between.
    // Reopened through /proc so that it is the same FIFO.
    int rw = ::open(proc_fd_path(fd).c_str(), O_RDWR | O_CLOEXEC);
    if (rw >= 0) {
      ::close(fd);
      fd = rw;
    }
  }
  if (stream) {
    // LineReader waits out EAGAIN in poll(2) anyway; a blocking read is the same wait.
    const int fl = ::fcntl(fd, F_GETFL);
    if (fl >= 0) ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  }

  const FileId id{st.st_dev, st.st_ino};
  // The same file again (after a read error or a stream's end, or a rename
  // back): go on where it was left, and it is no news.
  const bool same = had_file_ && id == last_id_;
  Compression compressed = Compression::None;  // reported after the news of the file
  if (!stream) {
    off_t at = 0;
    if (first_open_ && !opts_.from_start) {
      at = start_offset(fd, st.st_size);
    } else if (same && resume_at_) {
      at = *resume_at_;
    }
    if (!same) {
      // A compressed file at the path (a rotation gone wrong, or a .gz
      // followed by name) is not text that grows: reported and skipped, read
      // from its end. The next file at the path is followed as usual.
      if (const Compression c = sniff_file(fd); c != Compression::None) {
        compressed = c;
        at = st.st_size;
      }
    }
    if (at > 0 && ::lseek(fd, at, SEEK_SET) < 0) ::lseek(fd, 0, SEEK_SET);
    fingerprint_.take(fd);
  }
  if (!same) {
    if (had_file_) ++counts_.rotations;
    if (lost_) notice("'" + path_ + "' has appeared; following new file");
    else if (had_file_) notice("'" + path_ + "' has been replaced; following new file");
    read_error_.clear();
  }
  if (compressed != Compression::None)
    notice(path_ + ": compressed input (" + compression_name(compressed) + ") cannot be followed; skipped");

  fd_ = fd;
  id_ = id;
  last_id_ = id;
  had_file_ = true;
  stream_ = stream;
  lost_ = false;
  open_errno_ = 0;
  resume_at_.reset();
  regrown_ = false;
  next_look_ms_ = clock_.steady_ms() + std::max(opts_.poll_interval_ms, 1);
  reader_.reset(fd_);
  watch_file();
}

// Just after the last "\n": an unterminated last line is read whole once its
// "\n" comes. Only the last max_line + kSlack bytes are searched: an
// unterminated tail longer than that is already a cut line, and is skipped.
off_t Follower::start_offset(int fd, off_t size) const {
  const auto limit = static_cast<off_t>(
      std::min<uint64_t>(opts_.max_line + LineReader::kSlack + 1, static_cast<uint64_t>(std::max<off_t>(size, 0))));
  char buf[4096];
  off_t scanned = 0;
  while (scanned < limit) {
    const auto n = static_cast<std::size_t>(std::min<off_t>(sizeof buf, limit - scanned));
    const off_t from = size - scanned - static_cast<off_t>(n);
    ssize_t got;
    do {
      got = ::pread(fd, buf, n, from);
    } while (got < 0 && errno == EINTR);
    if (got != static_cast<ssize_t>(n)) return size;  // an error or a race with truncation: the end will do
    if (const void* nl = ::memrchr(buf, '\n', n)) return from + (static_cast<const char*>(nl) - buf) + 1;
    scanned += static_cast<off_t>(n);
  }
  return limit == size ? 0 : size;
}

Follower::Change Follower::examine() {
  struct stat st;
  if (::fstat(fd_, &st) == 0) {
    const off_t pos = ::lseek(fd_, 0, SEEK_CUR);
    if (pos >= 0 && st.st_size < pos) return truncated(false);
    // Not shorter than what was read: it may still have been truncated and
    // have grown back to (or past) the offset since the last look. A longer
    // one is caught by read() too, one of exactly the offset's size only here.
    if (!fingerprint_.same(fd_)) return truncated(true);
  }
  if (const Change c = look(); c != Change::None) return c;
  // Only the last pin can be empty: another one means the first has content.
  return pin_count_ > 1 || (pin_count_ == 1 && pin_size(0) > 0) ? Change::Next : Change::None;
}

Follower::Change Follower::truncated(bool regrown) {
  ++counts_.truncations;
  if (regrown) ++counts_.regrown;
  notice(path_ + ": file truncated");
  return Change::Truncated;
}

// What is at the path now: a new regular file there is pinned.
Follower::Change Follower::look() {
  const auto lock = lock_watcher();  // first what the watcher opened: the order of the files
  next_look_ms_ = clock_.steady_ms() + std::max(opts_.poll_interval_ms, 1);
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) {
    // With a file pinned, the name is known to have moved on: said of that one once it is read.
    if (!name_gone_ && pin_count_ == 0) {
      name_gone_ = true;
      lost_ = true;
      notice("'" + path_ + "' has become inaccessible: " + reason(errno));
    }
    return Change::None;  // keep reading the old file: its writer may still append
  }
  const FileId at_path{st.st_dev, st.st_ino};
  if (at_path == id_) {
    name_gone_ = false;  // renamed back
    lost_ = false;
    return Change::None;
  }
  if (pinned(at_path)) return Change::None;
  if (S_ISDIR(st.st_mode)) return Change::None;  // nothing to follow there: keep reading the old file
  if (!S_ISREG(st.st_mode)) return pin_count_ == 0 ? Change::Replaced : Change::None;
  pin(at_path);
  return Change::None;
}

void Follower::pin(FileId seen) {
  if (pin_count_ == kMaxPins) return;  // looked at again once one was read
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return;  // looked at again at the next check
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !(FileId{st.st_dev, st.st_ino} == seen)) {
    ::close(fd);  // changed since the stat(): looked at again at the next check
    return;
  }
  add_pin(fd, seen);
  if (watcher_) watcher_->opened_at_path(seen.dev, seen.ino);  // look() holds the watcher's lock
}

std::unique_lock<std::mutex> Follower::lock_watcher() {
  if (!watcher_ || !watcher_->active()) return {};
  std::unique_lock lock(watcher_->mutex());
  std::array<NameWatcher::Opened, NameWatcher::kMax> opened;
  const std::size_t n = watcher_->take(opened);
  for (std::size_t i = 0; i < n; ++i) {
    const FileId id{opened[i].dev, opened[i].ino};
    if ((fd_ >= 0 && id == id_) || pinned(id) || pin_count_ == kMaxPins) ::close(opened[i].fd);
    else add_pin(opened[i].fd, id);
  }
  return lock;
}

void Follower::add_pin(int fd, FileId id) {
  // An empty one before it: its writer moved on without writing to it.
  if (pin_count_ > 0 && pin_size(pin_count_ - 1) == 0) {
    Pin& last = pins_[pin_count_ - 1];
    if (last.wd >= 0) ::inotify_rm_watch(inotify_fd_, last.wd);
    ::close(last.fd);
    --pin_count_;
  }
  Pin& p = pins_[pin_count_++];
  p.fd = fd;
  p.id = id;
  p.wd = inotify_fd_ >= 0 ? ::inotify_add_watch(inotify_fd_, proc_fd_path(fd).c_str(), IN_MODIFY) : -1;
}

bool Follower::pinned(FileId id) const {
  for (std::size_t i = 0; i < pin_count_; ++i)
    if (pins_[i].id == id) return true;
  return false;
}

off_t Follower::pin_size(std::size_t i) const {
  struct stat st;
  return ::fstat(pins_[i].fd, &st) == 0 ? st.st_size : 0;
}

void Follower::unpin_front(bool close_it) {
  Pin& p = pins_[0];
  // inotify keeps one watch per inode: once adopted, it is the file's watch.
  if (p.wd >= 0 && p.wd != file_wd_) ::inotify_rm_watch(inotify_fd_, p.wd);
  if (close_it) ::close(p.fd);
  std::move(pins_.begin() + 1, pins_.begin() + static_cast<std::ptrdiff_t>(pin_count_), pins_.begin());
  pins_[--pin_count_] = Pin{};
}

void Follower::switch_file() {
  const Change to = std::exchange(switch_, Change::None);
  close_file();
  if (to == Change::Next && pin_count_ > 0 && adopt_pin()) return;
  try_open();  // on failure: reported, and waited for
}

bool Follower::adopt_pin() {
  const Pin p = pins_[0];
  struct stat st;
  if (::fstat(p.fd, &st) != 0) {
    unpin_front(/*close_it=*/true);
    return false;
  }
  adopt(p.fd, st);
  unpin_front(/*close_it=*/false);
  return true;
}

void Follower::rewind() {
  ::lseek(fd_, 0, SEEK_SET);
  fingerprint_.take(fd_);
  reader_.reset(fd_);
}

void Follower::close_file() {
  if (fd_ < 0) return;
  if (file_wd_ >= 0) ::inotify_rm_watch(inotify_fd_, file_wd_);
  file_wd_ = -1;
  if (!stream_) {
    const off_t pos = ::lseek(fd_, 0, SEEK_CUR);
    if (pos >= 0) resume_at_ = pos;
  }
  ::close(fd_);
  fd_ = -1;
  stream_ = false;
  name_gone_ = false;
  switch_ = Change::None;
}

void Follower::read_failed() {
  if (reader_.error() != read_error_) {
    read_error_ = reader_.error();
    notice("error reading '" + path_ + "': " + read_error_);
  }
  close_file();  // keeps the offset, to go on there if the same file opens again
  hold_off_ = true;
}

void Follower::open_failed(int err) {
  if (err == open_errno_) return;
  open_errno_ = err;
  lost_ = true;
  std::string text = "cannot open '" + path_ + "' for reading: " + reason(err);
  // Retried at every check, as tail -F does, but descriptors seldom come
  // back by themselves: say what to change.
  if (err == EMFILE) text += " (a followed file holds 5 descriptors or more: raise the limit, ulimit -n)";
  notice(std::move(text));
}

bool Follower::wait(int64_t deadline_ms) {
  int wait_ms = std::max(opts_.poll_interval_ms, 1);
  if (deadline_ms >= 0) {
    const int64_t left = deadline_ms - clock_.steady_ms();
    if (left <= 0) return false;
    wait_ms = static_cast<int>(std::min<int64_t>(wait_ms, left));
  }
  pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};              // poll ignores a negative fd
  if (::poll(fds, 2, wait_ms) > 0 && (fds[1].revents & POLLIN)) drain_inotify();  // examine() looks anyway
  if (inotify_fd_ >= 0) {
    // Watches lost (the directory was removed, or a limit was hit) are retried at every check.
    if (dir_wd_ < 0) watch_dir();
    if (fd_ >= 0 && file_wd_ < 0) watch_file();
  }
  hold_off_ = false;
  return true;
}

bool Follower::drain_inotify() {
  // Any event means "look again"; only removed watches need bookkeeping.
  if (inotify_fd_ < 0) return false;
  bool dir_changed = false;
  alignas(inotify_event) char buf[4096];
  for (;;) {
    const ssize_t n = ::read(inotify_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return dir_changed;  // EAGAIN: drained
    for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
      inotify_event ev;
      std::memcpy(&ev, buf + at, sizeof ev);
      if (ev.wd == dir_wd_) dir_changed = true;
      if (ev.mask & IN_IGNORED) {
        if (ev.wd == file_wd_) file_wd_ = -1;
        if (ev.wd == dir_wd_) dir_wd_ = -1;
        for (std::size_t i = 0; i < pin_count_; ++i)
          if (ev.wd == pins_[i].wd) pins_[i].wd = -1;
      }
      at += static_cast<ssize_t>(sizeof(inotify_event) + ev.len);
    }
  }
}

void Follower::watch_file() {
  if (inotify_fd_ < 0 || fd_ < 0) return;
  // Through /proc the watch is on the very file we read, even if the name was
  // replaced since it was opened.
  file_wd_ = ::inotify_add_watch(inotify_fd_, proc_fd_path(fd_).c_str(), kFileEvents);
  if (file_wd_ < 0) file_wd_ = ::inotify_add_watch(inotify_fd_, path_.c_str(), kFileEvents);
}

void Follower::watch_dir() { dir_wd_ = ::inotify_add_watch(inotify_fd_, dir_.c_str(), kDirEvents); }

void Follower::notice(std::string text) {
  notices_.push_back(std::move(text));
  fresh_notice_ = true;
}

}  // namespace swthrottle::input
