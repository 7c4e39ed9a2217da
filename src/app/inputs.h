// The inputs the command line names, opened before the first line (DESIGN.md §6).
#pragma once

#include <string>
#include <vector>

#include "cli/options.h"
#include "util/result.h"

namespace swthrottle::app {

struct InputSpec {
  std::string name;  // as given; "-" is standard input
  int fd = -1;       // opened up front unless followed
  bool follow = false;
};

// Without --follow every file must open now (an error: exit 2, nothing
// processed); with --follow a file is followed by name and a missing one is
// waited for, like tail -F. No file named: standard input.
Result<std::vector<InputSpec>> open_inputs(const cli::Options& options);

}  // namespace swthrottle::app
