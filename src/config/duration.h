// Durations ("500ms", "30s", "5m", "1h30m", "2d") and thresholds ("5 per 1m", "5/1m").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.h"

namespace swthrottle::config {

// Parses a duration into milliseconds. Units: ms, s, m, h, d; several
// number+unit parts may follow each other, largest first ("1h30m", "1m30s500ms").
// A duration must be > 0 and fit in int64 milliseconds.
// On error, Error::col is the 1-based offset inside `text` where it went wrong
// and Error::file/line are empty; the caller adds the file position.
Result<int64_t> parse_duration(std::string_view text);

// Renders milliseconds the shortest way the parser accepts back ("90000" -> "1m30s").
std::string format_duration(int64_t ms);

struct Threshold {
  uint64_t count = 0;       // Y, >= 1
  int64_t window_ms = 0;    // X
  std::string window_text;  // X as written, e.g. "1m"
};

// "Y per X" or "Y/X" (spaces around "/" allowed). Errors as for parse_duration.
Result<Threshold> parse_threshold(std::string_view text);

}  // namespace swthrottle::config
