#include "pipeline/stamp_watch.h"

#include <fmt/format.h>

#include "util/json.h"

namespace swthrottle::pipeline {

namespace {

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

}  // namespace

void StampWatch::unstamped(std::string_view text) {
  ++seen_;
  if (!have_sample_ && !blank(text)) {
    have_sample_ = true;
    sample_.assign(text.substr(0, kSampleBytes + 4));  // enough to tell a cut
  }
  if (seen_ >= lines_) fire(false);
}

void StampWatch::end() {
  if (!done_ && seen_ > 0) fire(true);
}

void StampWatch::fire(bool all) {
  done_ = true;
  report_(message(name_, seen_, all, sample_));
}

std::string StampWatch::shown_line(std::string_view line) {
  std::string out;
  append_line_sample(out, line, kSampleBytes);
  return out;
}

std::string StampWatch::message(std::string_view name, uint64_t lines, bool all, std::string_view sample) {
  const std::string shown = name == "-" ? "(standard input)" : std::string(name);
  const std::string quoted = shown_line(sample);
  const std::string counted =
      all ? fmt::format("its {} line{}", lines, lines == 1 ? "" : "s") : fmt::format("the first {} lines", lines);
  return fmt::format(
      "{}: no timestamp in {} under time = \"log\": e.g. \"{}\"; set timestamp in [settings] or a [[settings.input]] "
      "(swthrottle -r RULES --check {} shows the forms that read it)",
      shown, counted, quoted, name);
}

}  // namespace swthrottle::pipeline
