// DistinctCount: how many distinct values were seen in the buckets of a
// sliding window (`distinct = "{ip}"` in a rule), given each value as its
// 64-bit hash (util/value_hash.h).
//
// Exact while the window holds at most kExactValues (256) distinct values:
// each value is kept with the newest bucket it was seen in, so the count is
// the values whose bucket is inside the window at now, and a value seen
// again in a newer bucket stays counted as long as that one is inside.
//
// Past 256 (estimating): every bucket gets a HyperLogLog sketch
// (window/hyperloglog.h) of the values seen in it, and the count is the
// estimate of the sketches of the window's buckets merged (a register-wise
// maximum, kept up to date on every add and rebuilt when now enters a new
// bucket), with a standard error of 1.625 % of the count. Meanwhile the
// values seen since it last overflowed are kept exactly again, at most 256:
// once the window starts after the last overflow, they are exactly the
// window's values and the count is exact again (the sketches are freed).
//
// Memory: at most 256 x 16 bytes exactly; estimating, B x 4 KiB of sketches
// more, plus 4 KiB of merged registers. Times and late events are those of
// a window (window.h, bucket.h): a value older than the window is not
// counted. Pure, time as an argument; not thread-safe (the engine's
// DistinctWindow locks around it).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "window/bucket.h"
#include "window/distinct_state.h"
#include "window/hyperloglog.h"

namespace swthrottle::window {

class DistinctCount {
 public:
  static constexpr std::size_t kExactValues = 256;

  explicit DistinctCount(const WindowSpec& spec);
  ~DistinctCount();
  DistinctCount(const DistinctCount&) = delete;
  DistinctCount& operator=(const DistinctCount&) = delete;

  // Moves the window to now (never back).
  void advance(int64_t now_ms);
  // Counts the value at t (a newer t moves the window to it): false when t
  // is older than the window (late), which counts nothing.
  bool add(int64_t t_ms, uint64_t hash);

  struct Count {
    uint64_t value = 0;
    bool estimated = false;  // a HyperLogLog estimate (more than 256 values since the window began)
  };
  Count count() const;
  bool estimating() const { return sketches_ != nullptr; }

  DistinctState save() const;
  // Into a DistinctCount not used yet, whose window is at the saved state's
  // now (advance first): values and sketches outside it are left out.
  void load(const DistinctState& st);

 private:
  struct Sketches;
  void add_exact(int64_t b, uint64_t hash);
  void start_estimating();
  void add_to_sketch(int64_t b, uint64_t hash);
  void merge_window();

  WindowSpec spec_;
  int64_t now_b_ = kNoBucket;
  std::vector<DistinctState::Seen> exact_;  // sorted by hash
  int64_t overflow_b_ = kNoBucket;
  std::unique_ptr<Sketches> sketches_;  // null: exact
};

}  // namespace swthrottle::window
