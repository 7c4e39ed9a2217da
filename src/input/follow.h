// Follower: one file followed by name, like `tail -F` (DESIGN.md §6 --follow, §7).
//
// What it does, in the order a followed log goes through it:
// - Start: the file found at start is read from its end (after its last
//   complete line: an unterminated last line already there comes out whole
//   when its "\n" arrives), or from its start with from_start. A file that is
//   missing (or unreadable, or a directory) at start is waited for and then
//   read from its start, as tail -F reads a file that appears later.
// - Growth: lines appended are returned; a partial last line is held until
//   its "\n" arrives (LineReader with hold_partial).
// - Rotation (rename + create, seen as another device/inode at the path): the
//   old file stays open and is read on, because its writer keeps appending to
//   it until it reopens the name. Every new regular file seen at the path is
//   opened at once ("pinned", up to kMaxPins ahead of the one being read), so
//   that it is read to its end however soon it is renamed away again; the
//   pinned files are read in the order they were seen. logrotate `create`
//   makes the new file empty and only then signals the writer, so the switch
//   waits until a pinned file has content; an empty pinned file that another
//   followed is dropped (its writer moved on without writing to it). The
//   switch comes at the next end of the old file: every line written to the
//   old file before the writer was seen to move comes out before the new
//   file's lines. The old file's unterminated last line, if any, is returned
//   as a line then (no "\n" can follow it any more), and the new file is read
//   from its start. A line written to the old file after the switch is not
//   read. A directory at the path is ignored; another kind of file (a FIFO)
//   is opened at the switch.
// - Rename away or deletion with no new file yet: the old file keeps being
//   read (its writer may still append) until a file with content appears at
//   the path. A deleted file is therefore held open until then.
// - Truncation (copytruncate, `: > f`): the size is below the read offset,
//   or the file's first bytes (Fingerprint) are no longer the ones it had,
//   which finds a file that grew back to or past the offset before it was
//   looked at. They are compared after every read (what the read got is
//   dropped when they changed: it may be new content at the old offset) and
//   at each look. The held partial line of the old content, if any, is
//   returned as a line, and reading restarts at offset 0. New content that
//   begins with the same Fingerprint::kBytes as the old cannot be told from
//   growth; lines not yet read at the truncation are only in the copy.
// - A read error is reported; the name is reopened at the next check, and the
//   same file resumes at the offset where it failed.
// - A non-regular file (FIFO, character device) is read as a stream with
//   blocking reads, and reopened by name at its end. A FIFO is opened
//   read-write so that writers may come and go without an end of input. While
//   blocked in read(2) on a stream, neither timeout_ms nor stop() takes effect.
//
// Change is noticed by inotify (the file: IN_MODIFY, IN_ATTRIB, IN_MOVE_SELF,
// IN_DELETE_SELF; its directory: entries created, moved or deleted; an empty
// new file: IN_MODIFY) when it is available and use_inotify is set, and in any
// case by a stat() check every poll_interval_ms, as GNU tail does, so a missed
// event only delays a change. A directory that does not exist yet cannot be
// watched: it is found by that check. Each Follower has its own inotify
// instance, and its NameWatcher a second one (the per-user limit,
// fs.inotify.max_user_instances, is 128 by default); without the first it
// polls, with a notice; without the second it has no watcher.
// The path is looked at ("a look") at every end of the current file, and,
// while a backlog is read, after a read when inotify reported a change in
// the directory or a poll interval has passed. With inotify, the
// NameWatcher's thread also opens the path as soon as a file is created or
// moved there, whatever the reading thread is doing, or, when it was renamed
// away before the watcher's thread ran, where the directory's events say it
// went (name_watcher.h); what it opened is taken in at the next look, before
// the path is looked at, so the files keep the order they had at the path.
// The guarantee and its bound: a file that was at the path at a look, or
// that is still in the directory under some name when the watcher runs after
// its creation, is read to its end; one created and then deleted,
// overwritten or moved out of the directory before either is not seen.
//
// Not thread-safe: one thread per Follower (each input is decided by its own
// thread), except for stop(). The watcher's thread shares only its queue
// with it (name_watcher.h). Not copyable, not movable.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "input/byte_source.h"
#include "input/fingerprint.h"
#include "input/line_reader.h"
#include "input/name_watcher.h"
#include "util/clock.h"

namespace swthrottle::input {

struct FollowOptions {
  bool from_start = false;         // read the content found at start (default: start at its end)
  std::size_t max_line = 1 << 20;  // longer lines are cut (Line::truncated), as LineReader does
  int poll_interval_ms = 250;      // the stat() check interval (and the whole mechanism without inotify)
  bool use_inotify = true;         // false: polling only
};

// For the stats report.
struct FollowCounts {
  uint64_t rotations = 0;    // switches to another file at the path after one was followed
  uint64_t truncations = 0;  // restarts at offset 0 because the file shrank
  uint64_t regrown = 0;      // of those, found by the first bytes: the file had grown back past the offset
};

class Follower : private ByteSource {
 public:
  // Opens the file if it is there; never fails (a missing file is waited for).
  // `clock` (not owned) times the waits of next(timeout_ms).
  Follower(std::string path, FollowOptions opts, const Clock& clock = system_clock());

  ~Follower() override;
  Follower(const Follower&) = delete;
  Follower& operator=(const Follower&) = delete;

  // The next complete line, waiting at most timeout_ms for one (0: only what
  // is there now; -1: until a line comes or stop()). The view is valid until
  // the next call of next() or take_partial().
  //
  // nullopt on timeout, after stop() (for good), and early, at most once per
  // batch, when notices were added while no line was there, so that they can
  // be printed at once: call take_notices() after every call, and loop.
  std::optional<Line> next(int timeout_ms);

  // Thread-safe, and safe to call before or during next() (not during the
  // destructor): wakes a blocked next() and makes every later next() return
  // nullopt.
  void stop();
  bool stopped() const { return stop_.load(std::memory_order_acquire); }
  // Thread-safe: the name is no longer followed (a followed pattern stopped
  // matching it: glob_watcher.h). next() still returns every complete line
  // of the file it reads, then stops as stop() does, at that file's end.
  void let_go();
  // The name is a FIFO or a device (not a regular file): next(0) may wait in
  // read(2) for its writers. The thread that calls next().
  bool on_stream() const { return stream_; }

  // At shutdown: the unterminated last line read so far, if any, and forgets
  // it. It does not read further: call it when next() has returned nullopt.
  std::optional<Line> take_partial();

  // Messages for stderr, in order, without a program prefix (the caller adds
  // "swthrottle: "), and forgets them. Each state is reported once:
  //   cannot open 'PATH' for reading: REASON (with EMFILE, a hint: ulimit -n)
  //   'PATH' has become inaccessible: REASON
  //   'PATH' has appeared; following new file
  //   'PATH' has been replaced; following new file
  //   PATH: compressed input (gzip|zstd) cannot be followed; skipped
  //   PATH: file truncated
  //   error reading 'PATH': REASON
  //   'PATH': inotify cannot be used, reverting to polling: REASON
  std::vector<std::string> take_notices();

  const FollowCounts& counts() const { return counts_; }
  // How far reading is behind the end of the file at the path, in bytes:
  // its size now minus what was read of it (all of it when the path holds
  // another file, not opened yet). Thread-safe, for metrics: a stat(2) of
  // the path against what the last read left, so it also grows while the
  // reader is stuck.
  uint64_t bytes_behind() const;
  const std::string& path() const { return path_; }

 private:
  struct FileId {
    dev_t dev = 0;
    ino_t ino = 0;
    bool operator==(const FileId&) const = default;
  };
  // Replaced: another file, not a regular one, at the path (opened at the
  // switch). Next: a pinned file has content.
  enum class Change { None, Truncated, Replaced, Next };
  // What the next call of next() must do before reading, because the line
  // returned last (an old file's partial line) is a view into the reader.
  enum class Pending { None, Switch, Rewind, Close };

  // A file seen at the path, opened at once so that it can still be read
  // after it was renamed away again (pins_).
  struct Pin {
    int fd = -1;
    FileId id;
    int wd = -1;  // IN_MODIFY, to wake when an empty one gets content
  };
  static constexpr std::size_t kMaxPins = 64;

  // ByteSource, for reader_: every read of a regular file is checked.
  std::ptrdiff_t read(char* buf, std::size_t n) override;
  const std::string& error() const override { return source_error_; }

  bool try_open();
  void adopt(int fd, const struct stat& st);
  void pin(FileId seen);
  void add_pin(int fd, FileId id);
  bool adopt_pin();
  // Locks the watcher's mutex (nothing without a watcher) and pins what it opened.
  std::unique_lock<std::mutex> lock_watcher();
  bool pinned(FileId id) const;
  void unpin_front(bool close_it);
  off_t pin_size(std::size_t i) const;
  off_t start_offset(int fd, off_t size) const;
  Change examine();
  Change look();
  Change truncated(bool regrown);
  void switch_file();
  void rewind();
  void close_file();
  void read_failed();
  void open_failed(int err);
  bool wait(int64_t deadline_ms);
  bool drain_inotify();
  void watch_file();
  void watch_dir();
  void notice(std::string text);

  std::string path_;
  std::string dir_;  // watched for the name to be created, moved or deleted
  FollowOptions opts_;
  const Clock& clock_;
  LineReader reader_;

  int fd_ = -1;
  FileId id_;                     // of fd_
  Fingerprint fingerprint_;       // of fd_ (a regular file)
  bool regrown_ = false;          // a read found fd_'s first bytes changed; what it read was dropped
  int64_t next_look_ms_ = 0;      // while reading: look at the path again from then on (polling)
  std::string source_error_;      // the read error of read()
  bool stream_ = false;           // fd_ is not a regular file
  bool first_open_ = true;        // from_start applies to the file found at start only
  bool had_file_ = false;         // a file was followed before: the next one is a rotation
  FileId last_id_;                // of the file followed last (valid when had_file_)
  bool name_gone_ = false;        // stat(path) failed while fd_ was open (reported)
  bool lost_ = false;             // the name was reported gone or unopenable: the next file has "appeared"
  Change switch_ = Change::None;  // Replaced or Next: read fd_ to its end, then switch
  bool hold_off_ = false;         // after a read error or a stream's end: reopen at the next check only
  Pending pending_ = Pending::None;
  int open_errno_ = 0;      // the open error reported last, so that each is reported once
  std::string read_error_;  // likewise for read errors
  // bytes_behind(): the file read last (device, inode) and the offset its last read reached.
  std::atomic<uint64_t> read_dev_{0}, read_ino_{0};
  std::atomic<int64_t> read_offset_{-1};
  std::optional<off_t> resume_at_;  // the offset in the file closed last, to go on there if it opens again

  int inotify_fd_ = -1;
  int file_wd_ = -1;
  int dir_wd_ = -1;
  // The files seen at the path after fd_'s, oldest first, held open: each is
  // read to its end in turn. Only the last may be empty: an empty one that
  // another file followed is dropped (its writer moved on without writing to
  // it). The first is switched to once one has content (the writer is taken
  // to have moved then).
  std::array<Pin, kMaxPins> pins_;
  std::size_t pin_count_ = 0;
  int wake_fd_ = -1;                      // eventfd written by stop()
  std::unique_ptr<NameWatcher> watcher_;  // with inotify: opens new files at the path at once
  std::atomic<bool> stop_{false};
  std::atomic<bool> let_go_{false};

  std::vector<std::string> notices_;
  bool fresh_notice_ = false;  // a notice came since next() last returned early for one
  FollowCounts counts_;
};

}  // namespace swthrottle::input
