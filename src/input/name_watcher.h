// NameWatcher: a thread that opens a file name the moment a file is created
// at it or renamed to it, for the Follower (follow.h).
//
// The Follower looks at the path only from the thread that reads it, between
// lines: when that thread is busy, a file can be created at the path, written
// and renamed away over an older rotation before it looks, and is lost. The
// watcher does not wait for the reader: it blocks on an inotify instance of
// its own that watches the directory (IN_CREATE, IN_MOVED_TO) and, on an event
// for the name, opens the path at once and queues the descriptor. What is
// queued is only a descriptor and its device/inode: the Follower decides what
// it is (the file it reads already, one seen before, a new one).
//
// Order: the watcher opens the path and queues the descriptor under mutex();
// a caller that opens the path itself holds mutex() across that open and the
// take() before it, so descriptors come out in the order the files were at
// the path.
//
// The bound: the file must still be at the path when the watcher's thread
// runs after the event (scheduling latency; on an idle machine, tens of
// microseconds). Without inotify, or when the directory cannot be watched
// (it does not exist yet, or the per-user limit of inotify instances,
// fs.inotify.max_user_instances, is reached), there is no thread and
// active() is false; when the directory is removed, the thread ends and
// nothing more is queued. At most kMax descriptors wait; more events are
// ignored until the caller takes them (it looks at the path itself then).
//
// Thread-safe as described; not copyable, not movable.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

namespace swthrottle::input {

class NameWatcher {
 public:
  static constexpr std::size_t kMax = 64;

  struct Opened {
    int fd = -1;  // owned by whoever took it
    dev_t dev = 0;
    ino_t ino = 0;
  };

  // Watches `dir` for `name` (the last component of `path`) and opens `path`.
  NameWatcher(std::string dir, std::string name, std::string path);
  // Stops the thread and closes the descriptors nobody took.
  ~NameWatcher();
  NameWatcher(const NameWatcher&) = delete;
  NameWatcher& operator=(const NameWatcher&) = delete;

  bool active() const { return thread_.joinable(); }

  // Held by the watcher across each open of the path and its queueing.
  std::mutex& mutex() { return mu_; }
  // With mutex() held: the descriptors opened since the last call, oldest
  // first, into `out` (at most kMax); their count.
  std::size_t take(std::array<Opened, kMax>& out);

 private:
  void run();
  void open_now();

  const std::string name_;
  const std::string path_;
  int inotify_fd_ = -1;
  int stop_fd_ = -1;  // eventfd written by the destructor
  std::mutex mu_;
  std::array<Opened, kMax> queue_;  // |queue_| and |count_| are guarded by |mu_|
  std::size_t count_ = 0;
  std::thread thread_;  // last: started when everything else is set
};

}  // namespace swthrottle::input
