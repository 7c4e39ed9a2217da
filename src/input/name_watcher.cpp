#include "input/name_watcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>

namespace swthrottle::input {

NameWatcher::NameWatcher(std::string dir, std::string name, std::string path)
    : name_(std::move(name)), path_(std::move(path)) {
  inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (inotify_fd_ < 0 || stop_fd_ < 0 ||
      ::inotify_add_watch(inotify_fd_, dir.c_str(), IN_CREATE | IN_MOVED_TO | IN_ONLYDIR) < 0)
    return;  // inactive: the Follower looks by itself
  thread_ = std::thread([this] { run(); });
}

NameWatcher::~NameWatcher() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    if (::write(stop_fd_, &one, sizeof one) < 0) {
      // Only EAGAIN is possible (the counter is full): the fd is readable then.
    }
    thread_.join();
  }
  for (std::size_t i = 0; i < count_; ++i) ::close(queue_[i].fd);
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

std::size_t NameWatcher::take(std::array<Opened, kMax>& out) {
  const std::size_t n = std::exchange(count_, 0);
  for (std::size_t i = 0; i < n; ++i) out[i] = queue_[i];
  return n;
}

void NameWatcher::run() {
  alignas(inotify_event) char buf[4096];
  for (;;) {
    pollfd fds[2] = {{stop_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;
    bool ours = false;
    for (;;) {
      const ssize_t n = ::read(inotify_fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // EAGAIN: drained
      for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
        inotify_event ev;
        std::memcpy(&ev, buf + at, sizeof ev);
        if (ev.mask & IN_IGNORED) return;          // the directory is gone: the Follower looks by itself
        if (ev.mask & IN_Q_OVERFLOW) ours = true;  // events were lost: one of them may have been ours
        // The name is NUL-padded to ev.len.
        if (ev.len > 0 && std::string_view(buf + at + sizeof(inotify_event)) == name_) ours = true;
        at += static_cast<ssize_t>(sizeof(inotify_event) + ev.len);
      }
    }
    // Once for a batch of events: what is at the path now is what matters.
    if (ours) open_now();
  }
}

void NameWatcher::open_now() {
  std::lock_guard lock(mu_);
  if (count_ == kMax) return;  // the Follower looks by itself once it took them
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return;
  }
  // The same file as the last one queued (a second event for it): once is enough.
  if (count_ > 0 && queue_[count_ - 1].dev == st.st_dev && queue_[count_ - 1].ino == st.st_ino) {
    ::close(fd);
    return;
  }
  queue_[count_++] = Opened{fd, st.st_dev, st.st_ino};
}

}  // namespace swthrottle::input
