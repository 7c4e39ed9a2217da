// IgnoredStamps: the notice, once on stderr, for an input whose lines carry
// timestamps while the run decides by arrival time only because no `time`
// was set (DESIGN.md §4). Without it, a replay of an old file through a pipe
// raises the alerts of lines counted at the speed they are read, and
// nothing says that the file's own times were there to use.
//
// It reads the input's first lines with a probe: the input's own timestamp
// setting, as log time would read them (a container runtime's line has its
// envelope's time). When they carry timestamps (stamp_sample.h: at least
// half of the first 10 non-blank lines), the notice names the input, why
// arrival time is the default here, and the settings that change it; as
// soon as that is known (the 5th stamped line), or at the end of a shorter
// input. Past the sample it costs one branch a line.
//
// An explicit time = "arrival" (or --time arrival) is a choice, not a
// default: the decider makes no IgnoredStamps then.
//
// Not thread-safe: one per input, used by its decider.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "match/logtime.h"
#include "pipeline/stamp_sample.h"

namespace swthrottle::pipeline {

class IgnoredStamps {
 public:
  using Report = std::function<void(const std::string&)>;

  // `name`: the input as given ("-": standard input); `probe`: its
  // timestamp setting; `why`: why arrival time is the default
  // (Generation::arrival_by_default). `report` gets the one message, without
  // "swthrottle: " and without a newline.
  IgnoredStamps(std::string name, match::LogTime probe, std::string why, Report report)
      : name_(std::move(name)), probe_(std::move(probe)), why_(std::move(why)), report_(std::move(report)) {}

  bool done() const { return done_; }

  // One line decided under arrival time. `enveloped`: a container runtime's
  // line (its time is the envelope's). `wall_ms`: for the year of stamps
  // without one.
  void line(std::string_view text, bool enveloped, int64_t wall_ms);

  // The input ended: a shorter input that carries timestamps is reported now.
  void end();

  // The notice for `name` (for tests, and the man page's example).
  static std::string message(std::string_view name, const StampSample& sample, std::string_view why);

 private:
  void settle();

  const std::string name_;
  const match::LogTime probe_;
  const std::string why_;
  const Report report_;
  StampSample sample_;
  bool done_ = false;
};

}  // namespace swthrottle::pipeline
