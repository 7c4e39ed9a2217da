// The check of a whole-number option (-j N, --top N): CLI11's Range says
// "Value abc not in range 0 to 1024" for a word, which reads as if abc were a
// number too big; this says which of the two is wrong.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace swthrottle::cli {

// "abc is not a number (N: 0 to 1024)" or "2000 is not in range 0 to 1024";
// the option's name is put before it by CLI11 ("--threads: ...").
inline CLI::Validator whole_number(int64_t lo, int64_t hi) {
  const std::string range = std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        int64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [at, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || at != end || ec == std::errc::invalid_argument)
          return "\"" + text + "\" is not a number (N: " + range + ")";
        if (ec == std::errc::result_out_of_range || v < lo || v > hi) return text + " is not in range " + range;
        return {};
      },
      "");
}

}  // namespace swthrottle::cli
