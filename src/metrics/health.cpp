#include "metrics/health.h"

#include <string>
#include <utility>

#include "util/json.h"

namespace swthrottle::metrics {

namespace {

// "90 s", or "1500 ms" when whole seconds would hide the figure.
std::string duration_text(int64_t ms) {
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

}  // namespace

Health health_of(const Snapshot& s, int64_t stall_ms) {
  Health h;
  auto problem = [&h](std::string text) {
    h.ok = false;
    h.problems.push_back(std::move(text));
  };
  if (!s.ready) problem("not ready: the rules are not loaded or the inputs not open yet");
  for (const InputState& in : s.inputs) {
    // Only an input with lines waiting can stall: a quiet file read to its
    // end is idle, not stuck.
    if (!in.bytes_behind || *in.bytes_behind == 0) continue;
    // Never decided a line: the stall counts from the start.
    const int64_t since = s.wall_ms - (in.last_progress_ms != 0 ? in.last_progress_ms : s.started_ms);
    if (since <= stall_ms) continue;
    std::string text = "input ";
    append_utf8_one_line(text, in.input);  // a body of one problem per line
    text += ": " + std::to_string(*in.bytes_behind) + " bytes waiting and no line decided ";
    text += in.last_progress_ms != 0 ? "for " : "since the start, ";
    text += duration_text(since) + " (stall limit " + duration_text(stall_ms) + ")";
    problem(std::move(text));
  }
  if (s.fleet && s.fleet->counts.degraded_now)
    problem("fleet degraded: fleet rules decide alone, the fleet does not answer");
  return h;
}

}  // namespace swthrottle::metrics
