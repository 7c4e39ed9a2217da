// Outbox: with --state, every record meant for a destination is written
// here, fsync'd, before it counts as decided, and removed once delivered or
// dead-lettered (man page: DELIVERY, "Outbox"). After a crash or a restart,
// what was pending is delivered again, with the same id.
//
// Files, beside the state file: STATE.outbox (the journal) and STATE.dead
// (dead letters, JSON Lines, appended). The journal is append-only JSON
// Lines, one entry per line:
//   {"add":{"id":...,"dest":N,"created":MS,"attempts":N,"body":"..."}}
//   {"done":{"id":...,"dest":N}}
//   {"try":{"id":...,"dest":N,"attempts":N}}
// An add is fsync'd before add() returns; done and try are written at once
// and fsync'd with the next add or at close. On open, the journal is
// replayed: a last line cut short by a crash (no final newline, or not
// JSON) is dropped, and everything fsync'd before it is kept. When done
// entries make up most of the file, it is rewritten with only the pending
// adds (util/atomic_file.h: a crash at any moment leaves the old or the new).
//
// Bounded: at most max_pending records wait. When it is full, `full` says
// what happens: Block (add() waits until one is delivered: the input is
// slowed, nothing is lost) or DropOldest (the oldest pending record is
// dead-lettered as "outbox full", counted, and the new one added).
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "delivery/delivery.h"
#include "util/result.h"

namespace swthrottle::delivery {

struct OutboxOptions {
  std::size_t max_pending = 10'000;
  enum class Full { Block, DropOldest } full = Full::Block;
};

struct OutboxStats {
  uint64_t added = 0;
  uint64_t delivered = 0;     // done() calls
  uint64_t dead_letters = 0;  // dead_letter() calls, "outbox full" drops included
  uint64_t dropped = 0;       // dead-lettered by DropOldest
  uint64_t recovered = 0;     // pending at open (a previous run's)
  uint64_t pending = 0;       // now
};

class Outbox {
 public:
  // Opens (creating if needed) `journal_path` and `dead_path`, and replays
  // the journal. Error: a file cannot be opened or written (FILE: why).
  static Result<std::unique_ptr<Outbox>> open(const std::string& journal_path, const std::string& dead_path,
                                              const OutboxOptions& options);
  ~Outbox();  // fsyncs what is unsynced

  // What a previous run left pending, in the order it was added.
  std::vector<Delivery> recovered() const;

  // Adds the records (one write and one fsync for all); returns when they
  // are durable. With Full::Block, waits while the outbox is full (until
  // done() or dead_letter() make room, or close()); false: closed meanwhile
  // or the write failed (the error is kept in last_error()).
  bool add(std::span<const Delivery> records);
  // A delivery attempt failed and will be retried: its attempt count is kept.
  void tried(const Delivery& d);
  // Delivered: removed.
  void done(const std::string& id, uint32_t destination);
  // Given up (4xx, too old, outbox full): appended to the dead-letter file
  // with `why` and the time, fsync'd, then removed from the journal.
  void dead_letter(const Delivery& d, const std::string& why, int64_t now_wall_ms);
  // Wakes every add() that waits, and makes them return false.
  void close();

  OutboxStats stats() const;
  std::string last_error() const;

 private:
  Outbox() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace swthrottle::delivery
