// NameWatcher: a thread that opens a file name the moment a file is created
// at it or renamed to it, for the Follower (follow.h).
//
// The Follower looks at the path only from the thread that reads it, between
// lines: when that thread is busy, a file can be created at the path, written
// and renamed away over an older rotation before it looks, and is lost. The
// watcher does not wait for the reader: it blocks on an inotify instance of
// its own that watches the directory, and follows each file created at the
// name (or moved to it) through the events that come after (RenameTrail):
// one renamed away before the watcher's thread ran (a loaded machine, a
// writer rotating every few milliseconds) is opened where the events say it
// went (app.log.1), as long as it is still in the directory. What is queued
// is only a descriptor and its device/inode: the Follower decides what it is
// (the file it reads already, one seen before, a new one).
//
// A file opened by name is taken for the generation the trail says is there
// only when no event touched that name between the read of the events and a
// read after the open (nothing can have changed there then); otherwise it is
// closed and looked for again, in order, a few rounds. Each generation is
// given once. One the Follower opened at the path itself (it says so:
// opened_at_path()) is not given again: of the generations that were at the
// path while it opened, the one whose name holds its file is taken; when
// that cannot be told for sure (a rotation came in between), all of them
// are, so that no file is read twice. And the files come in the order they
// were at the path: a generation older than one given (by the watcher, or
// found by the Follower itself) is given up, as the Follower would have
// missed it anyway, for read after a newer one it would make the Follower
// read that newer one again.
//
// Order: the watcher opens the path and queues the descriptor under mutex();
// a caller that opens the path itself holds mutex() across that open and the
// take() before it, so descriptors come out in the order the files were at
// the path.
//
// The bound: a generation must still be in the directory, under some name,
// when the watcher's thread runs after its events (scheduling latency; on
// an idle machine, tens of microseconds): one deleted, overwritten by the
// next rotation or moved out of the directory before then is lost (the man
// page gives the rates measured). Without inotify, or when the directory cannot be watched
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
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "input/rename_trail.h"

namespace swthrottle::input {

class NameWatcher {
 public:
  static constexpr std::size_t kMax = 64;
  static constexpr int kRounds = 4;  // tries at opening a generation whose name keeps changing

  struct Opened {
    int fd = -1;  // owned by whoever took it
    dev_t dev = 0;
    ino_t ino = 0;
  };

  // Watches `dir` for `name` (the last component of `path`) and opens `path`,
  // or where a file that was at `path` went.
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
  // With mutex() held: the caller opened the path itself just now, and got
  // the file `dev`/`ino` (which it still holds open); the generation it
  // found there is never queued (see above).
  void opened_at_path(dev_t dev, ino_t ino);

 private:
  void run();
  // Reads the events there are into the trail; false when the directory is gone.
  bool read_events();
  // Opens the generations of the trail where they are, and queues them.
  void open_waiting();
  // Opens the path itself, and takes the generations that were there
  // meanwhile (after a queue overflow the trail knows nothing; under a
  // writer that never pauses, the path never holds still).
  void open_path_and_forget();
  void open_path();
  // Whether dir/name is the file dev/ino now.
  bool holds_file(const std::string& name, dev_t dev, ino_t ino) const;
  // Generation `id` was given (or the Follower has it): older ones are given up.
  void given(uint64_t id);
  // Queues an opened file (closes it when there is no room).
  void queue(int fd, dev_t dev, ino_t ino);

  const std::string dir_;
  const std::string name_;
  const std::string path_;
  // The trail and the inotify reads, guarded by |mu_|: opened_at_path()
  // reads the events too, from the Follower's thread.
  RenameTrail trail_;
  bool overflowed_ = false;  // a read lost events: the path itself is opened
  bool dir_gone_ = false;    // the directory is gone: the thread ends
  int inotify_fd_ = -1;
  int stop_fd_ = -1;  // eventfd written by the destructor
  std::mutex mu_;
  std::array<Opened, kMax> queue_;  // |queue_| and |count_| are guarded by |mu_|
  std::size_t count_ = 0;
  std::thread thread_;  // last: started when everything else is set
};

}  // namespace swthrottle::input
