#include "pipeline/stamp_watch.h"

#include <fmt/format.h>

#include "util/json.h"

namespace swthrottle::pipeline {

namespace {

bool blank(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

}  // namespace

void StampWatch::unstamped(std::string_view text) {
  const uint64_t seen = seen_.load(std::memory_order_relaxed) + 1;
  seen_.store(seen, std::memory_order_relaxed);  // one writer
  if (!have_sample_ && !blank(text)) {
    have_sample_ = true;
    sample_.assign(text.substr(0, kSampleBytes + 4));  // enough to tell a cut
    // From here the timer may read sample_: it is never written again.
    if (clock_ != nullptr) armed_at_.store(clock_->steady_ms(), std::memory_order_release);
  }
  if (seen >= lines_) fire(false, false);
}

void StampWatch::end() {
  if (state_.load(std::memory_order_relaxed) == kWatching && seen_.load(std::memory_order_relaxed) > 0)
    fire(true, false);
}

bool StampWatch::due(int64_t steady_ms) {
  if (state_.load(std::memory_order_relaxed) != kWatching) return false;
  const int64_t armed = armed_at_.load(std::memory_order_acquire);
  if (armed == kNotArmed || steady_ms - armed < kQuietMs) return false;
  fire(false, true);
  return state_.load(std::memory_order_relaxed) == kReported;
}

void StampWatch::fire(bool all, bool quiet) {
  uint8_t watching = kWatching;
  if (!state_.compare_exchange_strong(watching, kReported, std::memory_order_acq_rel)) return;
  report_(message(name_, seen_.load(std::memory_order_relaxed), all, sample_, quiet));
}

std::string StampWatch::shown_line(std::string_view line) {
  std::string out;
  append_line_sample(out, line, kSampleBytes);
  return out;
}

std::string StampWatch::message(std::string_view name, uint64_t lines, bool all, std::string_view sample, bool quiet) {
  const std::string shown = name == "-" ? "(standard input)" : std::string(name);
  const std::string quoted = shown_line(sample);
  std::string counted;
  if (quiet) counted = fmt::format("the {} line{} of its first minute", lines, lines == 1 ? "" : "s");
  else if (all) counted = fmt::format("its {} line{}", lines, lines == 1 ? "" : "s");
  else counted = fmt::format("the first {} lines", lines);
  return fmt::format(
      "{}: no timestamp in {} under time = \"log\": e.g. \"{}\"; set timestamp in [settings] or a [[settings.input]] "
      "(swthrottle -r RULES --check {} shows the forms that read it)",
      shown, counted, quoted, name);
}

}  // namespace swthrottle::pipeline
