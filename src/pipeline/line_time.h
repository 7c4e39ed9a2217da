// LineTime: the time policy of one input (SPEC §4): the time each of its
// lines is decided at.
//
// - time = log: a line's own timestamp; a line without one takes the last
//   one of this input (so a stack trace's lines go with the line that starts
//   it), and before any (and before any from --state) the line is untimed:
//   it is not windowed.
// - time = arrival: when it was read, never older than the engine's "now",
//   which the timer may have moved on between the read and the decision.
//
// Not thread-safe: one per input, used by its decider.
#pragma once

#include <algorithm>
#include <cstdint>

#include "pipeline/batch.h"

namespace swthrottle::pipeline {

class LineTime {
 public:
  struct Stamp {
    bool timed = true;
    int64_t t_ms = 0;  // meaningful only when timed
  };

  // `resumed`: the newest log time of an earlier run (--state), or kNoStamp.
  explicit LineTime(int64_t resumed = kNoStamp) : last_(resumed) {}

  // time = log: `stamp` is the line's own timestamp, or kNoStamp.
  Stamp log(int64_t stamp) {
    if (stamp != kNoStamp) {
      last_ = stamp;
      newest_ = std::max(newest_, stamp);
    } else if (last_ != kNoStamp) {
      ++no_timestamp_;
    }
    if (last_ == kNoStamp) {
      ++untimed_;
      return Stamp{false, 0};
    }
    return Stamp{true, last_};
  }

  // The time the last line was decided at (kNoStamp: none yet).
  int64_t last_ms() const { return last_; }

  // time = arrival.
  static Stamp arrival(int64_t arrival_ms, int64_t engine_now_ms) {
    return Stamp{true, std::max(arrival_ms, engine_now_ms)};
  }

  // Counts since the last take_counts(), for the stats: lines that took the
  // time of an earlier line, lines that stayed untimed, and the newest own
  // timestamp seen (kNoStamp: none).
  struct Counts {
    uint64_t no_timestamp = 0;
    uint64_t untimed = 0;
    int64_t newest = kNoStamp;
  };
  Counts take_counts() {
    const Counts c{no_timestamp_, untimed_, newest_};
    no_timestamp_ = untimed_ = 0;
    newest_ = kNoStamp;
    return c;
  }

 private:
  int64_t last_;
  uint64_t no_timestamp_ = 0;
  uint64_t untimed_ = 0;
  int64_t newest_ = kNoStamp;
};

}  // namespace swthrottle::pipeline
