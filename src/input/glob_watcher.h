// GlobWatcher: the files a followed pattern matches, as they come and go
// (--follow '/var/log/app/*.log'; man page: OPTIONS, --follow), as Vector's
// file source, Fluent Bit's tail and fail2ban's logpath follow a glob.
//
// The pattern is glob(3)'s (*, ?, [...] in any component), expanded by
// swthrottle, not by a shell. scan() expands it and says what changed since
// the last scan: the files to start following, and the followed ones whose
// name no longer matches (deleted, or renamed to a name it does not match).
// A name whose file is a directory is not a match.
//
// A file renamed to another name the pattern matches (app.log to app.log.1
// under "app.log*") is not followed a second time: a new name whose device
// and inode some matched name had at the last scan, with at least the size
// it had then, is known, not new (a deleted file's inode number given to a
// new, smaller file is new). Such a name is never followed, even once its
// file is replaced; the file at a followed name may change (rotation),
// which the Follower of that name sees.
//
// wait() blocks until the pattern's directory changes (inotify: an entry
// created, deleted or renamed), stop(), or a timeout: the caller rescans
// then. Only a pattern whose directory part has no wildcard is watched
// (/var/log/app/*.log, not /var/log/*/access.log); any pattern is seen by
// the rescans the caller makes at its timeout (App: every 500 ms). The
// directory need not exist yet: the watch is retried at each wait().
//
// Not thread-safe, except stop(). Not copyable, not movable.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace swthrottle::input {

// Does `path` hold a glob(3) wildcard (*, ? or [)? Then --follow treats it
// as a pattern.
bool has_glob_chars(std::string_view path);

class GlobWatcher {
 public:
  struct Scan {
    std::vector<std::string> added;    // to follow now, in name order
    std::vector<std::string> removed;  // followed, no longer matched, in name order
  };

  explicit GlobWatcher(std::string pattern, bool use_inotify = true);
  ~GlobWatcher();
  GlobWatcher(const GlobWatcher&) = delete;
  GlobWatcher& operator=(const GlobWatcher&) = delete;

  // Expands the pattern now. The first scan adds every file it matches.
  Scan scan();

  // Waits at most timeout_ms (-1: no limit) for a change in the watched
  // directory or stop(). True: inotify reported a change (scan now); false:
  // the time ran out, the directory is not watched, or stopped.
  bool wait(int timeout_ms);

  // Thread-safe: wakes wait(), and makes every later wait() return false at once.
  void stop();
  bool stopped() const { return stop_.load(std::memory_order_acquire); }

  const std::string& pattern() const { return pattern_; }
  // Is the pattern's directory watched by inotify now?
  bool watching() const { return wd_ >= 0; }

 private:
  struct Known {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    bool followed = false;  // false: a name a followed file was renamed to
  };
  void watch_dir();

  const std::string pattern_;
  std::string dir_;                     // the directory watched ("" : the pattern has wildcards there)
  std::map<std::string, Known> known_;  // the names matched at the last scan
  int inotify_fd_ = -1;
  int wd_ = -1;
  int wake_fd_ = -1;  // eventfd written by stop()
  std::atomic<bool> stop_{false};
};

}  // namespace swthrottle::input
