// DueKeys: the keys of one watched rule (config/watch_parser.h) that a
// boundary check must visit, by the bucket at whose start they are due: a
// hashed timer wheel (Varghese and Lauck's scheme 4) of the rule's bucket
// width. A check visits only the keys due at the buckets it crosses, never
// every key: a key is due when a bucket it counted events in leaves its
// window, and at its one deadline (the end of its warm-up or of its `for`,
// its cooldown, its `forget`), which is all that can change its state
// between two of its lines (engine/watch_logic.cpp).
//
// A ring of R lists (R: a power of two, at least twice the window's buckets
// and 64): an entry due at bucket b waits in list b mod R with b, and the
// walk from one check to the next looks at the list of each bucket it
// crosses, taking the entries due there and leaving those of a later turn.
// A walk over more than R buckets with nothing due on the way jumps to the
// earliest entry instead of turning the ring (a line an hour after the last).
//
// Cost: add() is a push onto a list; a bucket crossed costs its list's
// length. Memory: 16 bytes an entry (a counted reference to the key's slot,
// which keeps a key evicted or forgotten meanwhile alive until it is due,
// and its bucket), R lists of 24 bytes.
//
// Thread-safety: every method takes the wheel's mutex; entries come back
// outside it. Lock order: a key's own lock, then the wheel's.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "engine/keymap.h"

namespace swthrottle::engine {

class DueKeys {
 public:
  explicit DueKeys(uint32_t window_buckets);

  // `slot` (null: the rule's one window) is due at bucket `due` (clamped to
  // after the last bucket taken).
  void add(SlotRef slot, int64_t due);

  // The entries due at the earliest bucket <= up_to not taken yet, into
  // `out` (cleared first), in no particular order and a key maybe twice (two
  // of its buckets leave at once, or its deadline is there too); returns
  // that bucket, or kNone when nothing is due up to up_to (which then
  // counts as taken).
  static constexpr int64_t kNone = INT64_MIN;
  int64_t take_next(int64_t up_to, std::vector<SlotRef>& out);

  // Entries waiting (tests, the man page's figures).
  std::size_t size() const;

 private:
  struct Entry {
    SlotRef slot;
    int64_t due = 0;
  };
  // The earliest due of all entries (mu_ held; entries_ > 0).
  int64_t earliest() const;

  mutable std::mutex mu_;
  std::vector<std::vector<Entry>> ring_;
  uint64_t mask_;
  std::size_t entries_ = 0;
  int64_t taken_ = kNone;  // every entry due at or before it was taken
};

}  // namespace swthrottle::engine
