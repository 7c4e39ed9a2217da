// StampSample: whether an input carries timestamps, from its first lines
// (DESIGN.md §4, the default time). The one definition both sides use: the
// default time (app/default_time.h) reads a replayed file's first lines
// before the run, and the notice of timestamps that arrival time ignores
// (ignored_stamps.h) reads the first lines an input is decided with.
//
// An input carries timestamps when at least half of its first kLines
// non-blank lines (multi-line events, with `multiline`) give one under its
// timestamp setting: one date quoted in a message is not enough, and a log
// whose every other line is a continuation still is. Blank lines do not
// count. A sample with no line says nothing either way.
#pragma once

#include <cstdint>
#include <string_view>

namespace swthrottle::pipeline {

struct StampSample {
  static constexpr uint32_t kLines = 10;

  uint32_t lines = 0;    // non-blank lines sampled
  uint32_t stamped = 0;  // of them, those with a timestamp

  static bool blank(std::string_view line) { return line.find_first_not_of(" \t\r\n") == std::string_view::npos; }

  // One more non-blank line (while !full()).
  void add(bool has_stamp) {
    ++lines;
    if (has_stamp) ++stamped;
  }
  bool full() const { return lines >= kLines; }
  // What the lines so far say; lines == 0 says nothing (false).
  bool carries() const { return lines > 0 && 2 * stamped >= lines; }
  // The answer of a full sample is known already: at least half of kLines
  // are stamped, or more than half are not.
  bool settled() const { return full() || 2 * stamped >= kLines || 2 * (lines - stamped) > kLines; }
};

}  // namespace swthrottle::pipeline
