// The inputs the command line names, opened before the first line (DESIGN.md §6).
#pragma once

#include <string>
#include <vector>

#include "cli/options.h"
#include "input/follower_handle.h"
#include "util/result.h"

namespace swthrottle::app {

struct InputSpec {
  std::string name;  // as given; "-" is standard input
  int fd = -1;       // opened up front unless followed
  bool follow = false;
  // A replay: a regular file read, not followed (standard input too when it
  // is one: `swthrottle < old.log`). Not a pipe, a FIFO or a terminal, whose
  // lines come as they are written. Its time is the log's alone (the wall
  // clock excuses no jump of its stamps: pipeline/line_time.h).
  bool replay = false;
  // --follow with a pattern (input/glob_watcher.h): `name` is the pattern,
  // and each file it matches is followed as an input of its own.
  bool glob = false;
  // A file of a pattern: read from its start whatever --from-start says (it
  // appeared after the start), and let go of through `handle` (not owned).
  bool from_start = false;
  input::FollowerHandle* handle = nullptr;
};

// Without --follow every file must open now (an error: exit 2, nothing
// processed); with --follow a file is followed by name and a missing one is
// waited for, like tail -F. No file named: standard input. With --follow, a
// name holding a wildcard (*, ?, [) is a pattern (InputSpec::glob).
Result<std::vector<InputSpec>> open_inputs(const cli::Options& options);

}  // namespace swthrottle::app
