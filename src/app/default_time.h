// The time a run decides by when no rules file sets `time` and --time is
// not given (DESIGN.md §4, man page: time in [settings]).
//
// Log time when every input is a replayed file (named on the command line,
// not followed, a regular file: plain or compressed) and every one of them
// that has lines carries timestamps (pipeline/stamp_sample.h: at least half
// of its first 10 non-blank lines or events give one under the input's own
// timestamp setting). A replay then gives the records of the history it
// holds, at any speed, as a backtest does.
//
// Otherwise arrival time, for the whole run (time is one setting: the inputs
// share the windows):
//  - standard input and followed files are live: a line is decided the
//    moment it is read, so an alert is never held back for a stamp that is
//    missing, late or wrong (the input cannot be read ahead either: a pipe
//    gives its lines once);
//  - any other file that is not a regular file (a FIFO, /dev/fd/N of a
//    process substitution) is a pipe;
//  - a replayed file whose lines do not carry timestamps would leave them
//    untimed under log time.
// `why` says which input made it arrival time, for the notice of ignored
// timestamps (pipeline/ignored_stamps.h).
//
// A replayed file is read twice: here through a second open of its path,
// its first lines only (decompressed as its reader will), and then by the
// run. Files that cannot be opened are left to the run's own open, which
// reports them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config/rules.h"
#include "pipeline/stamp_sample.h"

namespace swthrottle::app {

struct DefaultTime {
  config::TimeSource time = config::TimeSource::Arrival;
  std::string why;  // arrival: which input made it so, and why ("app.log is followed")
};

// `inputs` as the command line names them (empty: standard input);
// `follow`: --follow; `max_line`: --max-line; `wall_ms`: now, for the year
// of stamps without one.
DefaultTime default_time(const config::Settings& settings, const std::vector<std::string>& inputs, bool follow,
                         std::size_t max_line, int64_t wall_ms);

// What the first lines of the regular file at `path` say (empty: it could
// not be read), read with the settings of the input named `path`.
pipeline::StampSample sample_file(const config::Settings& settings, const std::string& path, std::size_t max_line,
                                  int64_t wall_ms);

}  // namespace swthrottle::app
