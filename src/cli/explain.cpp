#include "cli/explain.h"

#include <fmt/format.h>

#include "util/json.h"

namespace swthrottle::cli {
namespace {

using engine::Verdict;

std::string join_events(const config::Rule& r, uint64_t mask) {
  std::string s;
  for (std::size_t i = 0; i < r.events.size(); ++i) {
    if (!(mask >> i & 1)) continue;
    if (!s.empty()) s += ", ";
    s += r.events[i].name;
  }
  return s;
}

std::string throttle_decision(const config::RuleSet& rules, const config::Rule& r, const engine::ExplainEntry& e) {
  const engine::Decision& d = e.decision;
  std::string out =
      fmt::format("{}{} ({} of {} per {} in the window)", d.verdict == Verdict::Passed ? "passed" : "suppressed",
                  d.late ? ", late: decided at now" : "", e.counts.empty() ? 0 : e.counts[0], r.threshold.value_or(0),
                  r.window_text);
  switch (d.fleet) {
    case engine::FleetSaid::Room: out += "; fleet window has room"; break;
    case engine::FleetSaid::Full: out += "; fleet window is full"; break;
    case engine::FleetSaid::Unreachable:
      out += fmt::format("; fleet unreachable: on_unreachable = {}", to_string(rules.settings.fleet.on_unreachable));
      break;
    case engine::FleetSaid::None: break;
  }
  return out;
}

}  // namespace

std::string explain_decision(const config::RuleSet& rules, const engine::ExplainEntry& e) {
  const config::Rule& r = rules.rules[e.rule];
  const bool throttle = r.kind == config::RuleKind::Throttle;
  switch (e.decision.verdict) {
    case Verdict::Passed:
    case Verdict::Suppressed: return throttle_decision(rules, r, e);
    case Verdict::Untimed:
      return throttle ? "passed: no timestamp seen yet, not windowed" : "ignored: no timestamp seen yet, not windowed";
    case Verdict::Copy: return "decided on the window of the rule it copies";
    case Verdict::Late: return "late: older than the window, not counted";
    case Verdict::Counted: return "counted; condition false";
    case Verdict::CountedFiring: return "counted; condition false, still firing: resolve_when does not hold";
    case Verdict::HeldBack: return "condition holds; no alert: inside the cooldown since the last one";
    case Verdict::Alert: return "alert";
    case Verdict::Resolved: return "resolved: the condition no longer holds";
    case Verdict::FleetQueued: return "counted; sent to the fleet with the next flush";
    case Verdict::FleetNoAlert:
      return fmt::format("fleet unreachable: on_unreachable = {}, no alert",
                         to_string(rules.settings.fleet.on_unreachable));
    case Verdict::FleetLate: return "late: older than the fleet window, not counted";
    case Verdict::FleetClaimed: return "alert (claimed for the fleet)";
    case Verdict::FleetHeldBack:
      return "condition holds in the fleet window; no alert: inside the cooldown of the fleet's last";
    case Verdict::FleetCounted: return "counted in the fleet window; condition false";
  }
  return "";
}

std::string explain_line(const engine::ExplainedLine& line) {
  const config::RuleSet& rules = *line.rules;
  std::string out = fmt::format("explain: {}:{}: ", line.input, line.line_no);
  append_text_escaped(out, line.text);
  out += "\n  time: ";
  if (line.timed) append_rfc3339_ms(out, line.t_ms);
  else out += "none yet (not windowed)";
  out += "\n";
  for (const engine::ExplainEntry& e : *line.entries) {
    const config::Rule& r = rules.rules[e.rule];
    out += fmt::format("  rule {}: events {}", r.name, join_events(r, e.events));
    for (const auto& [name, value] : e.captures) {
      out += fmt::format("; {}=", name);
      append_text_escaped(out, value);
    }
    if (r.key) {
      out += "; key \"";
      append_text_escaped(out, e.key);
      out += "\"";
    }
    if (!e.counts.empty()) {
      if (r.kind == config::RuleKind::Throttle) {
        out += fmt::format("; passed in window {}", e.counts[0]);
      } else {
        out += "; counts";
        for (std::size_t i = 0; i < e.counts.size() && i < r.events.size(); ++i)
          out += fmt::format(" {}={}", r.events[i].name, e.counts[i]);
      }
    }
    out += fmt::format(" -> {}\n", explain_decision(rules, e));
  }
  return out;
}

}  // namespace swthrottle::cli
