#include "input/glob_watcher.h"

#include <glob.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <utility>

namespace swthrottle::input {

bool has_glob_chars(std::string_view path) { return path.find_first_of("*?[") != std::string_view::npos; }

GlobWatcher::GlobWatcher(std::string pattern, bool use_inotify) : pattern_(std::move(pattern)) {
  const std::size_t slash = pattern_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : pattern_.substr(0, slash);
  if (!has_glob_chars(dir)) dir_ = dir;
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (use_inotify && !dir_.empty()) {
    inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    watch_dir();
  }
}

GlobWatcher::~GlobWatcher() {
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void GlobWatcher::watch_dir() {
  if (inotify_fd_ < 0 || wd_ >= 0) return;
  wd_ =
      ::inotify_add_watch(inotify_fd_, dir_.c_str(), IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR);
}

GlobWatcher::Scan GlobWatcher::scan() {
  std::map<std::string, Known> now;
  glob_t g{};
  // Errors (an unreadable directory on the way) only mean fewer matches:
  // the next scan looks again.
  if (::glob(pattern_.c_str(), 0, nullptr, &g) == 0) {
    for (std::size_t i = 0; i < g.gl_pathc; ++i) {
      struct stat st;
      if (::stat(g.gl_pathv[i], &st) != 0 || S_ISDIR(st.st_mode)) continue;
      now.emplace(g.gl_pathv[i], Known{st.st_dev, st.st_ino, st.st_size, true});
    }
  }
  ::globfree(&g);

  // Renamed, not new: a file some name had at the last scan, at least as
  // large now (a log only grows; a new file that got a deleted one's inode
  // number is most likely smaller than it was).
  auto renamed = [this](const Known& k) {
    return std::any_of(known_.begin(), known_.end(), [&](const auto& e) {
      return e.second.dev == k.dev && e.second.ino == k.ino && k.size >= e.second.size;
    });
  };
  Scan out;
  for (auto& [name, k] : now) {
    const auto old = known_.find(name);
    if (old != known_.end()) {
      k.followed = old->second.followed;
    } else if (renamed(k)) {
      k.followed = false;  // renamed from a name matched before: read there
    } else {
      out.added.push_back(name);
    }
  }
  for (const auto& [name, k] : known_)
    if (k.followed && now.find(name) == now.end()) out.removed.push_back(name);
  known_ = std::move(now);
  return out;
}

bool GlobWatcher::wait(int timeout_ms) {
  if (stopped()) return false;
  watch_dir();  // the directory may have been created (or removed and made again)
  pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {wd_ >= 0 ? inotify_fd_ : -1, POLLIN, 0}};  // poll ignores a negative fd
  if (::poll(fds, 2, timeout_ms) <= 0 || stopped() || (fds[1].revents & POLLIN) == 0) return false;
  alignas(inotify_event) char buf[4096];
  for (;;) {
    const ssize_t n = ::read(inotify_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN: drained
    for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buf + at);
      if (ev->mask & IN_IGNORED) wd_ = -1;  // the directory is gone: watched again once it is back
      at += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
    }
  }
  return true;
}

void GlobWatcher::stop() {
  stop_.store(true, std::memory_order_release);
  const uint64_t one = 1;
  if (wake_fd_ >= 0 && ::write(wake_fd_, &one, sizeof one) < 0) {
    // Only EAGAIN is possible (the counter is full): the fd is readable then.
  }
}

}  // namespace swthrottle::input
