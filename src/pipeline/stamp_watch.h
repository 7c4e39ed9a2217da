// StampWatch: an input whose lines give no timestamp under time = "log" is
// reported, once, on stderr (DESIGN.md §4 "Missing time is loud"). Without it a
// log in a form the timestamp setting does not read leaves every line
// untimed: no alert rule fires, the exit status is 0, and nothing says why.
//
// When, by the kind of input (Pace):
//  - a replayed file: after kLines lines without one timestamp among them,
//    or at the end of a shorter input that had lines but no timestamp;
//  - a pipe (standard input, a FIFO): the same, or kQuietMs after its first
//    non-blank line, whichever comes first: a `tail -F | swthrottle` of a
//    quiet log may take days to reach kLines;
//  - a followed file: after kFollowedLines lines, or kQuietMs after its
//    first non-blank line, whichever comes first.
// The minute is measured on the injected clock and checked by due(), which
// the App's timer calls (app/timer.cpp): a quiet input gets no line to
// notice it by. The first line that gives a timestamp ends the watch for
// good: an input that has stamps only now and then (stack traces between
// them) is as it should be.
//
// The report names the input, shows its first non-blank line (escaped as
// text records are, cut at kSampleBytes) and points at the setting and at
// --check, which says which forms would read the input.
//
// Threads: line() and end() on the input's decider thread only; due() from
// any one other thread (the timer) at the same time. The report is given
// exactly once, by whichever of them ends the watch first.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "util/clock.h"

namespace swthrottle::pipeline {

class StampWatch {
 public:
  static constexpr uint64_t kLines = 1000;
  static constexpr uint64_t kFollowedLines = 10;
  static constexpr int64_t kQuietMs = 60'000;
  static constexpr std::size_t kSampleBytes = 80;
  enum class Pace { Replay, Pipe, Followed };
  using Report = std::function<void(const std::string&)>;

  // `name`: the input as given ("-": standard input). `report` gets the one
  // message, without "swthrottle: " and without a newline. `clock`: for the
  // minute of a pipe or a followed file (null: no minute).
  StampWatch(std::string name, Report report, uint64_t lines = kLines, const Clock* clock = nullptr)
      : name_(std::move(name)), report_(std::move(report)), lines_(lines), clock_(clock) {}
  StampWatch(std::string name, Report report, Pace pace, const Clock& clock)
      : StampWatch(std::move(name), std::move(report), pace == Pace::Followed ? kFollowedLines : kLines,
                   pace == Pace::Replay ? nullptr : &clock) {}

  // One line decided under time = "log"; `stamped`: it gave its own
  // timestamp. Inline and one branch once the watch is over.
  void line(std::string_view text, bool stamped) {
    if (state_.load(std::memory_order_relaxed) != kWatching) return;
    if (stamped) {
      uint8_t watching = kWatching;  // lost to a report due() gave just before: that stands
      state_.compare_exchange_strong(watching, kStamped, std::memory_order_relaxed);
      return;
    }
    unstamped(text);
  }

  // The input ended: a shorter input without a timestamp is reported now.
  void end();

  // The timer: reports an input that has been without a timestamp for
  // kQuietMs since its first non-blank line, at `steady_ms`. True: it did.
  bool due(int64_t steady_ms);

  // The message for an input that gave no timestamp in `lines` lines, with
  // its first non-blank line. `all`: they were all it had; `quiet`: they
  // were all that came in kQuietMs.
  static std::string message(std::string_view name, uint64_t lines, bool all, std::string_view sample,
                             bool quiet = false);

  // A line as messages show it: its first kSampleBytes bytes, cut on a
  // character boundary ("..." after a cut), escaped as text records are.
  static std::string shown_line(std::string_view line);

 private:
  static constexpr int64_t kNotArmed = INT64_MIN;
  static constexpr uint8_t kWatching = 0, kStamped = 1, kReported = 2;
  void unstamped(std::string_view text);
  void fire(bool all, bool quiet);

  const std::string name_;
  const Report report_;
  const uint64_t lines_;
  const Clock* const clock_;
  // Watching, until a timestamp comes (kStamped) or the report is given
  // (kReported): one compare-and-swap decides which, so there is one report.
  std::atomic<uint8_t> state_{kWatching};
  std::atomic<uint64_t> seen_{0};  // written by the decider, read by the timer's report
  bool have_sample_ = false;
  std::string sample_;                        // the first non-blank line; not written once armed_at_ is set
  std::atomic<int64_t> armed_at_{kNotArmed};  // steady ms of the first non-blank line (with a clock)
};

}  // namespace swthrottle::pipeline
