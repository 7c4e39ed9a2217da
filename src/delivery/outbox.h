// Outbox: with --state, every record meant for a destination is written
// here, fsync'd, before it counts as decided, and removed once delivered or
// dead-lettered (man page: DELIVERY, "Outbox"). After a crash or a restart,
// what was pending is delivered again, with the same id: at-least-once, so a
// record may be sent twice (the receiver drops it by its id), never lost.
//
// Files, beside the state file: STATE.outbox (the journal) and STATE.dead
// (dead letters, JSON Lines, appended), both created with mode 0600 (bodies
// may carry anything a log line did). One process owns an outbox at a time
// (the state file's lock). The journal is append-only JSON Lines, one entry
// per line, a record known by its id and dest together:
//   {"add":{"id":ID,"dest":N,"to":BYTES,"created":MS,"attempts":N,"body":BYTES}}
// (`to`: Delivery::target, where it goes; absent in journals written before it)
//   {"done":{"id":ID,"dest":N}}
//   {"try":{"id":ID,"dest":N,"attempts":N}}
// ID and BYTES are a JSON string when the bytes are valid UTF-8, else
// {"base64":"..."} (as the state file stores bytes), so any body, NUL and
// invalid UTF-8 included, reads back byte for byte. A dead-lettered record
// is removed with a done entry.
//
// An add is fsync'd before add() returns; done and try are written at once
// and fsync'd with the next add, a compaction or the destructor (a done lost
// to a power cut only sends the record again). On open, the journal is
// replayed: an add of a record already pending is ignored, a done or try of
// one not pending is ignored, a try sets the attempts. Only lines ending in
// "\n" count: a last line cut short by a crash (no final newline, or not an
// entry) is dropped and the file cut back to the last whole entry before
// anything is appended; everything fsync'd before it is kept. A bad line in
// the middle (no crash leaves one) is skipped, and last_error() says so. A
// failed write is cut back too, so the next entry starts on a line of its own.
// A done entry that cannot be written (a full disk) leaves the record
// listed in the journal: it is counted as unrecorded (said once, by
// OutboxOptions::report), and the journal is rewritten with the pending
// records only as soon as the disk takes a write again (or at flush()), so
// that a restart does not send again what was delivered.
// A journal unlinked while open (its directory removed) takes no more adds:
// add() fails and last_error() says so, rather than write where no restart
// would find it.
//
// Compaction: when the journal is at least 64 KiB and more than half of its
// lines are no longer needed (done entries, tries, the adds they finished),
// it is rewritten with only the pending adds (their attempts folded in)
// through util/atomic_file.h: a crash at any moment leaves the old file or
// the new, either of them whole; open removes a temporary left behind.
// Checked after every done, try and dead letter; each line is rewritten O(1)
// times, amortized.
//
// Dead letters, one JSON object per line:
//   {"id":...,"dest":N,"created":RFC3339,"attempts":N,"why":...,"time":RFC3339,"body":"..."}
// "time" is the now_wall_ms given (the drop time for "outbox full"). The body
// is always a string, invalid UTF-8 shown as U+FFFD; when that changed it,
// "body_base64" holds its exact bytes as well.
//
// Bounded: at most max_pending records wait (0 counts as 1). When it is
// full, `full` says what happens: Block (add() waits until one is delivered:
// the input is slowed, nothing is lost) or DropOldest (the oldest pending
// record is dead-lettered as "outbox full", counted, and the new one added).
// A batch larger than max_pending goes in whole: with Block once nothing
// else is pending, with DropOldest after every older record is dropped.
//
// Thread-safety: every method may be called from any thread. One mutex
// guards everything, the file writes and add()'s fsync included. The outbox
// starts no threads.
//
// Test seam: OutboxOptions::crash makes the process raise SIGKILL on itself
// at the N-th add() write (or compaction) of this Outbox, in a given phase,
// so that a test can check what a crash there leaves. Off unless a test sets
// it; nothing reads it from the environment.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "delivery/delivery.h"
#include "delivery/delivery_stats.h"
#include "util/result.h"

namespace swthrottle::delivery {

// Where OutboxCrash kills the process:
//   BeforeWrite    nothing of the add's entries written
//   MidWrite       half of the entries' bytes written
//   AfterWrite     all written, not fsync'd
//   AfterFsync     fsync'd, add() not returned
//   MidCompaction  the temporary written and fsync'd, not renamed over the journal
enum class CrashPhase { None, BeforeWrite, MidWrite, AfterWrite, AfterFsync, MidCompaction };

struct OutboxCrash {
  CrashPhase phase = CrashPhase::None;
  uint64_t at = 1;  // the at-th add() write (or compaction) dies
};

struct OutboxOptions {
  std::size_t max_pending = 10'000;
  enum class Full { Block, DropOldest } full = Full::Block;
  // One stderr line (without "swthrottle: "): removals the journal cannot
  // record, and when it records them again. Null: said nowhere.
  std::function<void(const std::string&)> report;
  OutboxCrash crash;  // tests only
};

class Outbox {
 public:
  // Opens (creating if needed) `journal_path` and `dead_path`, and replays
  // the journal. Error: a file cannot be opened or written (FILE: why).
  static Result<std::unique_ptr<Outbox>> open(const std::string& journal_path, const std::string& dead_path,
                                              const OutboxOptions& options);
  ~Outbox();  // fsyncs what is unsynced

  // What a previous run left pending (and is still pending now, so a record
  // already done is not sent again), in the order it was added, with the
  // attempts made so far.
  std::vector<Delivery> recovered() const;

  // Adds the records (one write and one fsync for all); returns when they
  // are durable. With Full::Block, waits while the outbox is full (until
  // done() or dead_letter() make room, or close()); false: closed (before or
  // meanwhile: nothing written) or the write failed (nothing added; the
  // error is kept in last_error()). A record already pending (same id and
  // destination) is skipped: add() is idempotent.
  bool add(std::span<const Delivery> records);
  // A delivery attempt failed and will be retried: d.attempts is kept as its
  // attempt count. Ignored for a record not pending.
  void tried(const Delivery& d);
  // Delivered: removed (a record not pending is ignored, but counted).
  void done(const std::string& id, uint32_t destination);
  // Given up (4xx, too old, outbox full): appended to the dead-letter file
  // with `why` and the time, fsync'd, then removed from the journal. When the
  // dead-letter file cannot be written it stays pending (last_error() says
  // why): a record is never lost.
  void dead_letter(const Delivery& d, const std::string& why, int64_t now_wall_ms);
  // Wakes every add() that waits, and makes them (and every later add())
  // return false. done(), tried() and dead_letter() still work.
  void close();
  // The run is stopping: add() no longer waits for room (records still go
  // into the journal, past the bound), and one waiting now goes on.
  void stop_waiting();
  // Is this delivery still pending here? (Not once done, dead-lettered, or
  // dropped as the oldest of a full outbox.)
  bool holds(const std::string& id, uint32_t destination) const;

  OutboxStats stats() const;
  // End of the run: records what the journal could not (rewrites it, if
  // removals were not recorded) and fsyncs it. Returns stats() then.
  OutboxStats flush();
  // The last write error (or the bad lines skipped at open), or empty.
  std::string last_error() const;

 private:
  Outbox() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace swthrottle::delivery
