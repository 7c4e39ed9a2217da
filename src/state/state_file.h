// --state FILE (DESIGN.md §6, §7): the engine's windows saved as versioned JSON so
// that the next run continues where this one stopped.
//
// The file is only ever replaced whole: a save writes PATH.tmp.<pid>, fsyncs
// it, renames it over PATH and fsyncs the directory, so a crash at any moment
// (SIGKILL, power loss) leaves either the old file or the new one, never a
// mix. Saves and loads run under an exclusive flock(2) on PATH.lock, so two
// overlapping cron runs never interleave; a run that holds the lock for its
// whole duration (lock_for_run) also keeps a second run from loading the same
// old state. PATH.lock is created on first use and never deleted: removing a
// lock file while someone waits on it would let two runs hold "the" lock.
//
// The text inside is state_codec.h's; the file keeps no other format.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "engine/engine_state.h"
#include "state/state_codec.h"  // to_json/from_json, kVersion: callers of the file use them too
#include "util/clock.h"
#include "util/result.h"

namespace swthrottle::state {

// The state file at one path. Not copyable or movable (it owns the lock);
// save() may be called from several threads (they are serialized).
class StateFile {
 public:
  explicit StateFile(std::string path);
  ~StateFile();  // releases the lock
  StateFile(const StateFile&) = delete;
  StateFile& operator=(const StateFile&) = delete;

  const std::string& path() const { return path_; }
  std::string lock_path() const { return path_ + ".lock"; }

  // Takes the exclusive lock for the rest of the run (until destruction or
  // unlock()). Tries first; if another process holds it, calls on_wait once
  // with "waiting for lock on PATH.lock" and then waits until it is free
  // (lock_for_run_within with no bound, sleeping between tries).
  // Error when the lock file cannot be opened or created (e.g. the directory
  // is read-only): "cannot lock state file PATH: cannot open PATH.lock: <strerror>".
  // The caller may go on without the lock; save() will then report its own error.
  Result<bool> lock_for_run(const std::function<void(const std::string&)>& on_wait = {});

  // How a bounded wait for the run lock ended.
  enum class Wait { Locked, Busy, Stopped };
  // As lock_for_run, but never blocks in flock(2): tries, and while another
  // process holds the lock calls on_wait once, then `pause(ms)` (sleep up to
  // ms; false: give up at once, e.g. on SIGTERM -> Stopped) and tries again,
  // until max_wait_ms (< 0: no bound) have passed on `clock` -> Busy.
  // Errors as for lock_for_run.
  Result<Wait> lock_for_run_within(int64_t max_wait_ms, const std::function<void(const std::string&)>& on_wait,
                                   const std::function<bool(int64_t)>& pause, const Clock& clock = system_clock());
  bool locked() const { return lock_fd_ >= 0; }
  void unlock();

  // Loads at start. A missing or empty file gives an empty state and no
  // warning. A file that is corrupt (its checksum does not match its
  // content: state_checksum.h), unreadable or of a newer version is
  // renamed aside to PATH.corrupt-YYYYMMDDTHHMMSSZ (from now_wall_ms; with
  // ".2", ".3", ... appended when that name is taken, never overwriting), and
  // `warning` is set to one line for stderr naming the file, the reason and
  // where it went; the state returned is empty. A file without a checksum
  // (saved before there was one) is loaded, with a notice in `warning`. Something that is not a
  // regular file (a directory, /dev/null) is reported but never moved.
  // Without the run lock, the lock is taken just for the load.
  engine::EngineState load(std::string& warning, int64_t now_wall_ms);
  engine::EngineState load(std::string& warning);  // now_wall_ms from the system clock

  // Replaces the file atomically (see the file comment), with its checksum
  // (state_checksum.h), under the lock (the
  // run lock when held, else taken for the save and released after). On
  // failure: Error{what = "cannot save state to PATH: <strerror>"}, the
  // previous file is untouched and the temporary file is removed.
  // Temporary files left by killed savers are removed on the first save
  // (util/atomic_file.h).
  Result<bool> save(const engine::EngineState& s, int64_t now_wall_ms);

 private:
  // The lock fd to use for one operation: the run lock, or a fresh one that
  // the caller closes (temp_fd >= 0). Returns -1 with errno set on failure.
  int acquire(int& temp_fd);
  std::string move_aside(int64_t now_wall_ms, std::string& aside);

  std::string path_;
  int lock_fd_ = -1;
  bool cleaned_ = false;
  std::mutex mu_;  // one save or load at a time in this process: they share PATH.tmp.<pid>
};

}  // namespace swthrottle::state
