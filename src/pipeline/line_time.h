// LineTime: the time policy of one input (DESIGN.md §4): the time each of its
// lines is decided at.
//
// - time = log: a line's own timestamp; a line without one takes the last
//   one of this input (so a stack trace's lines go with the line that starts
//   it), and before any (and before any from --state) the line is untimed:
//   it is not windowed.
// - time = arrival: when it was read, never older than the engine's "now",
//   which the timer may have moved on between the read and the decision.
//
// Trusted time (time = log): one line must not move "now" where its
// neighbours do not go, or every later line would be late.
// - A stamp more than max_future ahead of the wall clock is never trusted.
// - A stamp more than max_jump ahead of the input's newest trusted time, and
//   not within max_jump of the wall clock (a live log after a quiet weekend
//   is corroborated by the clock), is held as a candidate: taken only if the
//   input's next stamp does not go back before it (by more than kJumpSlackMs,
//   as lines of several writers do). That next line is then judged afresh
//   against the candidate; if it goes back, the candidate was a lone outlier.
//   In a replay (Trust::replay: a file read, not followed), the wall clock
//   corroborates nothing: a line stamped "now" in last year's log is held
//   like any other jump, or it would make every later line late.
// An untrusted line is decided like a line without a stamp (the input's last
// trusted time, or untimed) and counted. Only trusted stamps are "newest"
// (--state saves them). So a lone 2099 line, or a lone 2031 line in a replay
// of 2024, moves nothing; a genuine gap costs only the first line after it.
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

  // The bounds of trusted time, in ms; -1: off (settings max_future, max_jump).
  struct Trust {
    int64_t max_future_ms = -1;
    int64_t max_jump_ms = -1;
    bool replay = false;  // the input is a replay: nearness to the wall clock excuses no jump
  };
  // A jump is confirmed by a next stamp at most this much before it.
  static constexpr int64_t kJumpSlackMs = 60'000;

  // Why the last stamp given to log() was not trusted.
  enum class Untrusted { None, Future, Jump };

  // `resumed`: the newest log time of an earlier run (--state), or kNoStamp.
  // Trust bounds start off (set_trust()).
  explicit LineTime(int64_t resumed = kNoStamp) : last_(resumed), trusted_newest_(resumed) {}

  void set_trust(Trust trust) { trust_ = trust; }

  // time = log: `stamp` is the line's own timestamp, or kNoStamp; `wall_ms`
  // the wall clock (only max_future and max_jump read it).
  Stamp log(int64_t stamp, int64_t wall_ms = 0) {
    untrusted_why_ = Untrusted::None;
    if (stamp != kNoStamp && !trusted(stamp, wall_ms)) {
      ++untrusted_;
    } else if (stamp != kNoStamp) {
      last_ = stamp;
      trusted_newest_ = std::max(trusted_newest_, stamp);
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

  // Why the stamp of the last log() call was not trusted (None: it was, or
  // there was none).
  Untrusted untrusted() const { return untrusted_why_; }

  // The input's last trusted stamp (kNoStamp: none yet), which a line
  // without one takes.
  int64_t last() const { return last_; }
  // The newest of them (or the resumed time).
  int64_t newest_trusted() const { return trusted_newest_; }

  // time = arrival.
  static Stamp arrival(int64_t arrival_ms, int64_t engine_now_ms) {
    return Stamp{true, std::max(arrival_ms, engine_now_ms)};
  }

  // Counts since the last take_counts(), for the stats: lines that took the
  // time of an earlier line, lines that stayed untimed, lines whose stamp was
  // not trusted, and the newest trusted own timestamp (kNoStamp: none).
  struct Counts {
    uint64_t no_timestamp = 0;
    uint64_t untimed = 0;
    int64_t newest = kNoStamp;
    uint64_t untrusted = 0;
  };
  Counts take_counts() {
    const Counts c{no_timestamp_, untimed_, newest_, untrusted_};
    no_timestamp_ = untimed_ = untrusted_ = 0;
    newest_ = kNoStamp;
    return c;
  }

 private:
  bool trusted(int64_t stamp, int64_t wall_ms) {
    if (trust_.max_future_ms >= 0 && stamp > wall_ms + trust_.max_future_ms) {
      untrusted_why_ = Untrusted::Future;
      return false;  // a held candidate waits for a stamp that says something
    }
    if (candidate_ != kNoStamp) {
      const int64_t c = candidate_;
      candidate_ = kNoStamp;
      // Confirmed: the candidate becomes the reference for this line.
      if (stamp >= c - kJumpSlackMs) {
        trusted_newest_ = std::max(trusted_newest_, c);
        newest_ = std::max(newest_, c);
      }
    }
    const int64_t jump = trust_.max_jump_ms;
    if (jump >= 0 && trusted_newest_ != kNoStamp && stamp - trusted_newest_ > jump &&
        (trust_.replay || wall_ms - stamp > jump)) {
      candidate_ = stamp;
      untrusted_why_ = Untrusted::Jump;
      return false;
    }
    return true;
  }

  int64_t last_;
  int64_t trusted_newest_;        // the newest trusted stamp (or resumed time): jumps are measured from it
  int64_t candidate_ = kNoStamp;  // a jump waiting for the next stamp
  Trust trust_{};
  Untrusted untrusted_why_ = Untrusted::None;
  uint64_t untrusted_ = 0;
  uint64_t no_timestamp_ = 0;
  uint64_t untimed_ = 0;
  int64_t newest_ = kNoStamp;
};

}  // namespace swthrottle::pipeline
