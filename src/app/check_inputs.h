// --check FILE...: what the timestamp setting reads of a sample of each file
// (DESIGN.md §4 "Missing time is loud"), before a run finds out the hard way: how
// many of its first kSampleLines lines give a time, the first one read (in
// UTC) with its line, and, when that is none or fewer than half of them, the
// built-in forms that read more, with the setting to write.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/rules.h"

namespace swthrottle::app {

inline constexpr std::size_t kSampleLines = 1000;

struct InputsChecked {
  std::string text;     // the report, one block per file
  bool failed = false;  // a file could not be read, or (time = "log") its lines give no timestamp
};

// `names` as the command line gives them ("-": standard input). `wall_ms`:
// now, for the year of stamps without one.
InputsChecked check_inputs(const config::Settings& settings, const std::vector<std::string>& names, int64_t wall_ms);

}  // namespace swthrottle::app
