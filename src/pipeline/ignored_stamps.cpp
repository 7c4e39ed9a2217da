#include "pipeline/ignored_stamps.h"

#include <fmt/format.h>

namespace swthrottle::pipeline {

void IgnoredStamps::line(std::string_view text, bool enveloped, int64_t wall_ms) {
  if (done_ || StampSample::blank(text)) return;
  // A multi-line event's time is its first line's.
  sample_.add(enveloped || probe_.parse(text.substr(0, text.find('\n')), wall_ms).has_value());
  if (sample_.settled()) settle();
}

void IgnoredStamps::end() {
  if (!done_) settle();
}

void IgnoredStamps::settle() {
  done_ = true;
  if (sample_.carries()) report_(message(name_, sample_, why_));
}

std::string IgnoredStamps::message(std::string_view name, const StampSample& sample, std::string_view why) {
  const std::string shown = name == "-" ? "(standard input)" : std::string(name);
  return fmt::format(
      "{}: its lines carry timestamps ({} of {} read), but time is \"arrival\" by default here ({}): lines are "
      "counted when they are read; set time = \"log\" in [settings] or pass --time log to decide by their "
      "timestamps, or set time = \"arrival\" to keep arrival time without this notice",
      shown, sample.stamped, sample.lines, why);
}

}  // namespace swthrottle::pipeline
