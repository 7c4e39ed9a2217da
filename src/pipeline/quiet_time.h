// QuietTime: the log time a followed input has reached while it is quiet
// (time = log; DESIGN.md §4, man page "Quiet logs").
//
// Under log time, "now" moves only when a line comes. A followed log that
// falls silent would then never see the boundary checks that resolve its
// alerts or write its throttle summaries. So once an input has been caught
// up at its end for `quiet_after`, its time moves on with the wall clock,
// from its last stamp:
//
//   reached = last stamp + (steady now - steady when it was caught up) - quiet_after
//
// Relative, not absolute: a log whose stamps run behind or ahead of this
// machine's clock (another host, a wrong zone) moves on at the same pace and
// never jumps. The lag of `quiet_after` leaves room for a line stamped a
// little before it reaches us; a line that comes later than that is decided
// at its own time as any older line is (its own bucket, or late).
//
// One writer (the input's decider thread), one reader (the timer): the pair
// (stamp, steady) is kept as one atomic difference, so the timer can never
// combine the stamp of one line with the read time of another.
#pragma once

#include <atomic>
#include <cstdint>

#include "pipeline/batch.h"

namespace swthrottle::pipeline {

class QuietTime {
 public:
  // The input found nothing more to read at `steady_ms`; `last_stamp` is
  // its last trusted log time (kNoStamp: none yet, nothing to move on from).
  void caught_up(int64_t last_stamp, int64_t steady_ms) {
    offset_.store(last_stamp == kNoStamp ? kNotQuiet : last_stamp - steady_ms, std::memory_order_release);
  }

  // A line came: the input is reading again.
  void reading() { offset_.store(kNotQuiet, std::memory_order_release); }

  // The log time this input has reached at `steady_ms` (kNoStamp: reading,
  // never stamped, or quiet_after_ms < 0: "off"). Until the input has been
  // quiet for quiet_after_ms this is before its last stamp, which "now"
  // already is past: moving "now" to it does nothing.
  int64_t reached(int64_t steady_ms, int64_t quiet_after_ms) const {
    const int64_t offset = offset_.load(std::memory_order_acquire);
    if (offset == kNotQuiet || quiet_after_ms < 0) return kNoStamp;
    return offset + steady_ms - quiet_after_ms;
  }

 private:
  static constexpr int64_t kNotQuiet = INT64_MIN;
  std::atomic<int64_t> offset_{kNotQuiet};
};

}  // namespace swthrottle::pipeline
