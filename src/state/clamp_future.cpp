#include "state/clamp_future.h"

#include <algorithm>

#include "config/duration.h"
#include "util/json.h"

namespace swthrottle::state {

std::string clamp_future(engine::EngineState& st, int64_t wall_ms, int64_t bound_ms) {
  if (bound_ms < 0) return {};
  const int64_t ahead = std::max(st.now_ms, st.last_log_ms);
  if (ahead <= wall_ms + bound_ms) return {};
  std::size_t dropped = 0;
  for (auto& rule : st.rules) {
    const auto future = [&](const engine::RuleWindows::Keyed& k) { return k.window.now_ms > wall_ms + bound_ms; };
    const auto before = rule.windows.size();
    std::erase_if(rule.windows, future);
    dropped += before - rule.windows.size();
  }
  std::string m = "its time ";
  append_rfc3339_ms(m, ahead);
  m += " is more than " + config::format_duration(bound_ms) + " ahead of the wall clock (";
  append_rfc3339_ms(m, wall_ms);
  m += ", setting max_future); clamped to the wall clock";
  if (dropped > 0) m += ", " + std::to_string(dropped) + " windows dated ahead of it start fresh";
  st.now_ms = std::min(st.now_ms, wall_ms);
  st.last_log_ms = std::min(st.last_log_ms, wall_ms);
  return m;
}

}  // namespace swthrottle::state
