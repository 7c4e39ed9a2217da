#include "input/name_watcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

namespace swthrottle::input {

namespace {

constexpr uint32_t kDirEvents = IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ONLYDIR;

}  // namespace

NameWatcher::NameWatcher(std::string dir, std::string name, std::string path)
    : dir_(std::move(dir)), name_(std::move(name)), path_(std::move(path)), trail_(name_) {
  inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (inotify_fd_ < 0 || stop_fd_ < 0 || ::inotify_add_watch(inotify_fd_, dir_.c_str(), kDirEvents) < 0)
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

void NameWatcher::opened_at_path(dev_t dev, ino_t ino) {
  // The generations at the path since the trail was last read, and until
  // now: the Follower's file is one of them.
  trail_.begin_round();
  if (!read_events()) dir_gone_ = true;
  const std::vector<uint64_t> candidates = trail_.at_name_in_round();
  // Which one: the one whose name holds the Follower's file now (its inode
  // is not reused while the Follower holds it), if nothing happened at the
  // names looked at meanwhile. The others may still be found where they went.
  trail_.begin_round();
  uint64_t found = 0;
  std::vector<std::string> looked;
  for (uint64_t id : candidates) {
    const auto& w = trail_.waiting();
    const auto g = std::find_if(w.begin(), w.end(), [&](const RenameTrail::Generation& x) { return x.id == id; });
    if (g == w.end() || g->at.empty()) continue;
    looked.push_back(g->at);
    if (holds_file(g->at, dev, ino)) {
      found = id;
      break;
    }
  }
  if (!read_events()) dir_gone_ = true;
  bool sure = found != 0 && !dir_gone_ && !overflowed_;
  for (const std::string& name : looked) sure = sure && !trail_.touched(name);
  if (sure) {
    trail_.taken(found);
    given(found);
    return;
  }
  for (uint64_t id : candidates) trail_.taken(id);  // not sure which: none is given again
  if (!candidates.empty()) given(*std::max_element(candidates.begin(), candidates.end()));
}

// Files are read in the order they were given: a generation older than one
// given already would come after it, and the Follower, switching back from
// it to the newer one's path, would read that one twice. It is given up.
void NameWatcher::given(uint64_t id) { trail_.drop_before(id); }

bool NameWatcher::holds_file(const std::string& name, dev_t dev, ino_t ino) const {
  struct stat st;
  return ::stat((dir_ + "/" + name).c_str(), &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

void NameWatcher::run() {
  for (;;) {
    pollfd fds[2] = {{stop_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;
    std::lock_guard lock(mu_);
    trail_.begin_round();
    if (!read_events()) dir_gone_ = true;
    if (!dir_gone_ && !trail_.waiting().empty()) open_waiting();
    if (std::exchange(overflowed_, false)) open_path_and_forget();
    if (dir_gone_) return;  // the Follower looks by itself
  }
}

bool NameWatcher::read_events() {
  alignas(inotify_event) char buf[4096];
  for (;;) {
    const ssize_t n = ::read(inotify_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // EAGAIN: drained
    for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
      inotify_event ev;
      std::memcpy(&ev, buf + at, sizeof ev);
      // The name is NUL-padded to ev.len.
      const std::string_view name =
          ev.len > 0 ? std::string_view(buf + at + sizeof(inotify_event)) : std::string_view();
      at += static_cast<ssize_t>(sizeof(inotify_event) + ev.len);
      if (ev.mask & IN_IGNORED) return false;
      if (ev.mask & IN_Q_OVERFLOW) {  // events were lost: where things went is not known
        trail_.reset();
        overflowed_ = true;
      } else if (ev.mask & IN_CREATE) {
        trail_.created(name);
      } else if (ev.mask & IN_MOVED_FROM) {
        trail_.moved_from(name, ev.cookie);
      } else if (ev.mask & IN_MOVED_TO) {
        trail_.moved_to(name, ev.cookie);
      } else if (ev.mask & IN_DELETE) {
        trail_.deleted(name);
      }
    }
  }
}

void NameWatcher::open_waiting() {
  struct Tried {
    uint64_t id;
    std::string at;
    int fd;
    struct stat st;
  };
  std::vector<Tried> tried;
  for (int round = 0; round < kRounds && !trail_.waiting().empty(); ++round) {
    tried.clear();
    for (const RenameTrail::Generation& g : trail_.waiting()) {
      if (g.at.empty()) continue;  // half moved: its name comes with the next events
      const int fd = ::open((dir_ + "/" + g.at).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
      if (fd < 0) continue;  // gone meanwhile: the next events say so
      Tried t{g.id, g.at, fd, {}};
      if (::fstat(fd, &t.st) != 0 || !S_ISREG(t.st.st_mode)) {
        ::close(fd);
        trail_.taken(g.id);  // nothing a follower reads
        continue;
      }
      tried.push_back(std::move(t));
    }
    // What happened while they were opened: an event at a name means that
    // name may now hold another file than the trail said.
    trail_.begin_round();
    if (!read_events()) dir_gone_ = true;
    const bool last = round + 1 == kRounds || dir_gone_;
    bool in_order = true;
    for (Tried& t : tried) {
      const bool sure = !trail_.touched(t.at) && !overflowed_;
      // Oldest first: a newer one waits for an older one still in doubt;
      // in the last round it is given, and the older one given up.
      if (sure && (in_order || last)) {
        trail_.taken(t.id);
        given(t.id);
        queue(t.fd, t.st.st_dev, t.st.st_ino);
      } else {
        in_order = false;
        ::close(t.fd);
      }
    }
    if (dir_gone_ || overflowed_) return;  // run() opens the path after an overflow
  }
  // The path itself keeps changing under a writer that rotates without
  // pause: whatever is there now is opened, as a look would.
  const auto& waiting = trail_.waiting();
  if (std::any_of(waiting.begin(), waiting.end(), [&](const RenameTrail::Generation& g) { return g.at == name_; }))
    open_path_and_forget();
}

void NameWatcher::open_path_and_forget() {
  trail_.begin_round();
  open_path();
  if (!read_events()) dir_gone_ = true;
  // The file opened is one of the generations at the path meanwhile: none
  // of them is given again, nor an older one.
  const std::vector<uint64_t>& at_path = trail_.at_name_in_round();
  if (!at_path.empty()) given(*std::max_element(at_path.begin(), at_path.end()));
  for (uint64_t id : std::vector<uint64_t>(at_path)) trail_.taken(id);
}

void NameWatcher::open_path() {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return;
  }
  queue(fd, st.st_dev, st.st_ino);
}

void NameWatcher::queue(int fd, dev_t dev, ino_t ino) {
  // No room: the Follower looks by itself once it took what is queued. The
  // same file as the last one queued (the path opened twice): once is enough.
  if (count_ == kMax || (count_ > 0 && queue_[count_ - 1].dev == dev && queue_[count_ - 1].ino == ino)) {
    ::close(fd);
    return;
  }
  queue_[count_++] = Opened{fd, dev, ino};
}

}  // namespace swthrottle::input
