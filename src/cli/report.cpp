#include "cli/report.h"

#include <algorithm>

#include <bit>

#include <fmt/format.h>

#include "config/condition_probe.h"
#include "config/duration.h"
#include "config/watch_parser.h"
#include "match/prefilter.h"
#include "util/json.h"

namespace swthrottle::cli {

namespace {

// for, forget, then and within, and the warnings about a condition that can
// never hold or holds only on silence (man page: SILENCE AND SEQUENCES).
std::string watch_lines(const config::Rule& r) {
  if (r.kind == config::RuleKind::Throttle) return "";
  std::string out;
  if (config::is_sequence(r)) {
    out +=
        fmt::format("  then: \"{}\" within {} after when holds\n", r.then_text, config::format_duration(r.within_ms));
  } else if (config::is_watched(r)) {
    out += "  checked at every boundary:";
    if (config::holds_when_empty(r)) out += " holds on an empty window (silence), after a window's warm-up;";
    if (r.for_ms > 0) out += fmt::format(" for {};", config::format_duration(r.for_ms));
    if (r.forget_ms > 0)
      out += fmt::format(" a key is forgotten after {} without an event;", config::format_duration(r.forget_ms));
    out.back() = '\n';
  }
  const std::string& when = r.threshold ? std::string() : r.when_text;
  const config::ConditionProbe p = config::probe_condition(r.when, r.events.size());
  if (!p.holds_somewhere)
    out += fmt::format(
        "  warning: when \"{}\" can never hold (no counts swthrottle tried make it true): the rule "
        "never alerts\n",
        when);
  else if (p.holds_only_when_empty && !r.resolve && !config::is_sequence(r))
    out += fmt::format(
        "  warning: when \"{}\" holds only on an empty window (silence): without resolve = true "
        "nothing says when its events come back\n",
        when);
  if (r.then && !config::probe_condition(*r.then, r.events.size()).holds_somewhere)
    out += fmt::format("  warning: then \"{}\" can never hold: the sequence never completes\n", r.then_text);
  return out;
}

}  // namespace

std::string check_summary(const config::RuleSet& rules) {
  std::string out;
  const config::Settings& s = rules.settings;
  out += fmt::format("settings: time {}", to_string(s.time));
  if (s.time == config::TimeSource::Log) {
    out += fmt::format(", timestamp {}, timezone {}", s.timestamp.text.empty() ? "auto" : s.timestamp.text,
                       s.timezone.text);
    if (s.year != 0) out += fmt::format(", year {}", s.year);
    // Trusted time: shown when not the default.
    const auto bound = [](int64_t ms) { return ms < 0 ? std::string("off") : config::format_duration(ms); };
    const config::Settings defaults;
    if (s.max_future_ms != defaults.max_future_ms) out += ", max_future " + bound(s.max_future_ms);
    if (s.max_jump_ms != defaults.max_jump_ms) out += ", max_jump " + bound(s.max_jump_ms);
  }
  // multiline: shown when set, so that the text of rules without it stays as it was.
  if (s.multiline.kind != config::MultilineSpec::Kind::Off) out += ", multiline " + s.multiline.text;
  out += "\n";
  // [fleet]: shown when given or used, as the rules and the command line set it.
  if (s.fleet.given || config::uses_fleet(rules)) {
    const auto& f = s.fleet;
    out += fmt::format("fleet: redis {}, namespace {}, host {}, timeout {}, sync {}, on_unreachable {}",
                       f.redis.empty() ? "(none)" : f.redis, f.namespace_name, f.host.empty() ? "(host name)" : f.host,
                       config::format_duration(f.timeout_ms), config::format_duration(f.sync_ms),
                       to_string(f.on_unreachable));
    out += "\n";
  }
  for (const config::InputTime& in : s.inputs) {  // [[settings.input]]
    out +=
        fmt::format("input {}: timestamp {}, timezone {}", in.path, in.timestamp ? in.timestamp->text : "as [settings]",
                    in.timezone ? in.timezone->text : "as [settings]");
    if (in.multiline) out += ", multiline " + in.multiline->text;
    out += "\n";
  }
  for (const config::Rule& r : rules.rules) {
    const bool throttle = r.kind == config::RuleKind::Throttle;
    out += fmt::format("rule {} ({}:{}): {} ", r.name, r.file, r.line, to_string(r.kind));
    if (r.new_value) out += fmt::format("one alert per new value within {}", r.window_text);
    else if (r.threshold) out += fmt::format("{} per {}", *r.threshold, r.window_text);
    else out += fmt::format("when \"{}\" within {}", r.when_text, r.window_text);
    out += fmt::format(", {} buckets of {}, {} mode", r.buckets, config::format_duration(r.window_ms / r.buckets),
                       to_string(r.mode));
    if (r.fleet != config::FleetMode::Off) out += fmt::format(", fleet {}", to_string(r.fleet));
    out += "\n";
    for (const config::Event& e : r.events) {
      out += fmt::format("  event {}: {}", e.name, e.match);
      if (!e.captures.empty()) {
        out += "  (captures:";
        for (const auto& c : e.captures) out += " " + c;
        out += ")";
      }
      out += "\n";
    }
    if (r.key) out += fmt::format("  key: {} (at most {} keys)\n", r.key->text(), r.max_keys);
    if (r.distinct) out += fmt::format("  distinct: {} (exact up to 256 values a window)\n", r.distinct->text());
    if (r.new_value) {
      out += fmt::format("  new: {} (remember {}, learn {}, at most {} values)\n", r.new_value->text(), r.window_text,
                         r.learn_text, r.max_values);
    }
    if (r.keeps_previous) out += "  keeps the previous window (previous() in its condition)\n";
    if (!r.ignore.empty()) out += fmt::format("  ignore: {}\n", r.ignore);
    if (!throttle && !r.new_value) {
      out += fmt::format("  cooldown: {}{}", config::format_duration(r.cooldown_ms),
                         r.resolve ? ", reports resolved" : "");
      if (r.resolve_when) out += fmt::format(" when \"{}\"", r.resolve_when_text);
      out += "\n";
    }
    out += watch_lines(r);
    if (r.message) out += fmt::format("  message: {}\n", r.message->text());
    if (!r.exec.empty()) {
      out += "  exec:";
      for (const auto& a : r.exec) out += " " + a;
      out += "\n";
    }
  }
  // Whether lines are searched for literals before RE2 (match/prefilter.h),
  // and if not, why: a pattern with no literal makes every line go to RE2.
  const match::Prefilter pf = match::Prefilter::make(rules);
  if (pf.active()) {
    out += fmt::format("prefilter: {} literal{}:", pf.atoms().size(), pf.atoms().size() == 1 ? "" : "s");
    for (const std::string& a : pf.atoms()) {
      out += ' ';
      append_json_string(out, a);
    }
    out += "\n";
  } else if (!rules.rules.empty()) {
    out += "prefilter: off: " + pf.reason() + "\n";
  }
  out += fmt::format("{} rule{} OK\n", rules.rules.size(), rules.rules.size() == 1 ? "" : "s");
  return out;
}

}  // namespace swthrottle::cli
