// DistinctState: what a window's count of distinct values
// (window/distinct_count.h) holds, as --state saves it (WindowState::distinct).
#pragma once

#include <cstdint>
#include <vector>

namespace swthrottle::window {

// A DistinctCount as --state saves it.
struct DistinctState {
  struct Seen {
    uint64_t hash = 0;
    int64_t bucket = 0;  // the newest bucket the value was seen in
  };
  std::vector<Seen> exact;       // by hash
  int64_t overflow_bucket = -1;  // estimating: the bucket now was in when the exact values last overflowed
  struct Sketch {
    int64_t bucket = 0;
    std::vector<uint8_t> registers;  // hll::kRegisters
  };
  std::vector<Sketch> sketches;  // estimating: one per bucket of the window that has values, oldest first
};

}  // namespace swthrottle::window
