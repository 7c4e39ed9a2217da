// ValueMemory: the values a rule with `new` has seen (per key: the key is
// hashed with its value), each with the time it was last seen, for
// `remember`; at most max_values of them, the least recently seen one
// forgotten to make room.
//
// Values are kept as 64-bit hashes (util/value_hash.h), not as text: 24
// bytes each, and up to 9 more for its place in the hash table (open
// addressing, at most 7/8 full), so at most 33 bytes per value whatever its
// length. Two values with one hash (a chance of about n x 2^-64 for a value
// among n remembered) would count as one.
//
// Learning: start() sets the end of learning to its time + `learn` (the
// engine calls it with the run's first time: engine.h); until then values
// are remembered and nothing is new. A memory never started starts at its
// first value. --state keeps the values (least recently seen first) and the
// end of learning.
//
// Thread-safety: every method may be called concurrently (one mutex), so
// one value is new for exactly one line, however many inputs decide.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "engine/engine_state.h"

namespace swthrottle::engine {

class ValueMemory {
 public:
  ValueMemory(int64_t remember_ms, int64_t learn_ms, uint64_t max_values);

  enum class Seen {
    New,       // not seen within remember: the rule alerts
    Again,     // seen within remember
    Learning,  // remembered while learning
  };
  struct Outcome {
    Seen seen = Seen::New;
    bool forgot = false;  // the least recently seen value was forgotten to make room
  };
  // Learning runs from t for `learn`, unless it started already.
  void start(int64_t t_ms);
  // The value (its hash) seen at t.
  Outcome see(uint64_t hash, int64_t t_ms);

  std::size_t size() const;
  SeenValues save() const;
  // Into a memory not used yet.
  void load(const SeenValues& st);

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Entry {
    uint64_t hash;
    int64_t last_ms;
    uint32_t newer;  // toward the most recently seen (kNone: it is)
    uint32_t older;  // toward the least recently seen (kNone: it is)
  };
  // All below expect mu_ held.
  std::size_t home(uint64_t hash) const { return static_cast<std::size_t>(hash >> (64 - bits_)); }
  std::size_t find(uint64_t hash) const;  // its table slot, or the empty slot where it would go
  void insert_front(uint64_t hash, int64_t last_ms);
  // Out of the table and the list; the last entry moves into its place.
  void erase(uint32_t e);
  void unlink(uint32_t e);
  void link_front(uint32_t e);
  void grow_table();

  const int64_t remember_ms_;
  const int64_t learn_ms_;
  const std::size_t max_values_;
  mutable std::mutex mu_;  // guards everything below
  int64_t learn_until_ms_ = -1;
  std::vector<Entry> entries_;   // dense: size_ of them
  std::vector<uint32_t> table_;  // entry index + 1; 0: empty
  int bits_ = 0;                 // log2(table_.size())
  std::size_t size_ = 0;
  uint32_t newest_ = kNone;
  uint32_t oldest_ = kNone;
};

}  // namespace swthrottle::engine
