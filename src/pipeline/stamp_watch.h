// StampWatch: an input whose lines give no timestamp under time = "log" is
// reported, once, on stderr (DESIGN.md §4 "Missing time is loud"). Without it a
// log in a form the timestamp setting does not read leaves every line
// untimed: no alert rule fires, the exit status is 0, and nothing says why.
//
// When: after kLines lines of the input without one timestamp among them,
// or at the end of a shorter input that had lines but no timestamp. The
// first line that gives one ends the watch for good: an input that has
// stamps only now and then (stack traces between them) is as it should be.
//
// The report names the input, shows its first non-blank line (escaped as
// text records are, cut at kSampleBytes) and points at the setting and at
// --check, which says which forms would read the input.
//
// Not thread-safe: one per input, used by its decider.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace swthrottle::pipeline {

class StampWatch {
 public:
  static constexpr uint64_t kLines = 1000;
  static constexpr std::size_t kSampleBytes = 80;
  using Report = std::function<void(const std::string&)>;

  // `name`: the input as given ("-": standard input). `report` gets the one
  // message, without "swthrottle: " and without a newline.
  StampWatch(std::string name, Report report, uint64_t lines = kLines)
      : name_(std::move(name)), report_(std::move(report)), lines_(lines) {}

  // One line decided under time = "log"; `stamped`: it gave its own
  // timestamp. Inline and one branch once the watch is over.
  void line(std::string_view text, bool stamped) {
    if (done_) return;
    if (stamped) {
      done_ = true;
      return;
    }
    unstamped(text);
  }

  // The input ended: a shorter input without a timestamp is reported now.
  void end();

  // The message for an input that gave no timestamp in `lines` lines (`all`:
  // they were all it had), with its first non-blank line: for tests, and for
  // --check.
  static std::string message(std::string_view name, uint64_t lines, bool all, std::string_view sample);

  // A line as messages show it: its first kSampleBytes bytes, cut on a
  // character boundary ("..." after a cut), escaped as text records are.
  static std::string shown_line(std::string_view line);

 private:
  void unstamped(std::string_view text);
  void fire(bool all);

  const std::string name_;
  const Report report_;
  const uint64_t lines_;
  uint64_t seen_ = 0;
  bool done_ = false;
  bool have_sample_ = false;
  std::string sample_;  // the first non-blank line
};

}  // namespace swthrottle::pipeline
