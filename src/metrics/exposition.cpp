#include "metrics/exposition.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/json.h"

namespace swthrottle::metrics {

namespace {

// Milliseconds as exact decimal seconds: "1.5", "-0.25", "1764130505.123".
// Exact, not through double: a timestamp of 13 digits keeps its milliseconds.
std::string seconds_text(int64_t ms) {
  std::string out;
  // Unsigned, so that the magnitude of INT64_MIN does not overflow.
  uint64_t mag = static_cast<uint64_t>(ms);
  if (ms < 0) {
    out += '-';
    mag = 0 - mag;
  }
  out += std::to_string(mag / 1000);
  if (const uint64_t frac = mag % 1000; frac != 0) {
    std::string digits = std::to_string(frac);
    digits.insert(0, 3 - digits.size(), '0');
    while (digits.back() == '0') digits.pop_back();
    out += '.';
    out += digits;
  }
  return out;
}

// A label value: repaired to UTF-8, then escaped as the text format asks
// (backslash, double quote and line feed; everything else is literal).
void append_label_value(std::string& out, std::string_view value) {
  std::string repaired;
  append_utf8_repaired(repaired, value);
  out += '"';
  for (const char c : repaired) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  out += '"';
}

// `{name="value",...}`: the label set of one sample.
using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

std::string label_set(const Labels& labels) {
  if (labels.empty()) return {};
  std::string out = "{";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out += ',';
    out += labels[i].first;
    out += '=';
    append_label_value(out, labels[i].second);
  }
  out += '}';
  return out;
}

struct Sample {
  std::string labels;  // as label_set() wrote it ("" : none)
  std::string value;
};

// Appends one family: HELP, TYPE, then its samples; nothing at all when it
// has no sample (a family of HELP and TYPE alone would say nothing, and a
// 0 would be a figure we do not have).
void family(std::string& out, std::string_view name, std::string_view type, std::string_view help,
            const std::vector<Sample>& samples) {
  if (samples.empty()) return;
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;  // our own constant texts: no backslash or line feed to escape
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
  for (const Sample& s : samples) {
    out += name;
    out += s.labels;
    out += ' ';
    out += s.value;
    out += '\n';
  }
}

void single(std::string& out, std::string_view name, std::string_view type, std::string_view help, std::string value) {
  family(out, name, type, help, {Sample{"", std::move(value)}});
}

std::string num(uint64_t v) { return std::to_string(v); }

// One family over the rules, a figure per rule.
template <typename Get>
void per_rule(std::string& out, const Snapshot& s, std::string_view name, std::string_view type, std::string_view help,
              Get get) {
  std::vector<Sample> samples;
  samples.reserve(s.rules.size());
  for (const RuleCounters& r : s.rules)
    samples.push_back({label_set({{"rule", r.rule}, {"kind", r.kind}}), num(get(r))});
  family(out, name, type, help, samples);
}

template <typename Get>
void per_destination(std::string& out, const Snapshot& s, std::string_view name, std::string_view type,
                     std::string_view help, Get get) {
  std::vector<Sample> samples;
  samples.reserve(s.delivery.destinations.size());
  for (const delivery::DestinationStats& d : s.delivery.destinations)
    samples.push_back({label_set({{"destination", d.label}}), num(get(d))});
  family(out, name, type, help, samples);
}

std::string rfc3339(int64_t ms) {
  std::string out;
  append_rfc3339_ms(out, ms);
  return out;
}

std::string repaired(std::string_view s) {
  std::string out;
  append_utf8_repaired(out, s);
  return out;
}

// The fleet client's counters (present with fleet rules only).
void fleet_families(std::string& out, const fleet::FleetCounts& f) {
  single(out, "swthrottle_fleet_degraded", "gauge", "1 while fleet rules decide alone (fleet unreachable), else 0.",
         f.degraded_now ? "1" : "0");
  single(out, "swthrottle_fleet_asked_total", "counter", "Questions sent to the fleet.", num(f.asked));
  single(out, "swthrottle_fleet_answered_total", "counter", "Questions the fleet answered.", num(f.answered));
  single(out, "swthrottle_fleet_unanswered_total", "counter", "Questions decided alone, unanswered.",
         num(f.unanswered));
  single(out, "swthrottle_fleet_timeouts_total", "counter", "Fleet requests that timed out.", num(f.timeouts));
  single(out, "swthrottle_fleet_errors_total", "counter", "Fleet requests that failed.", num(f.errors));
  single(out, "swthrottle_fleet_reconnects_total", "counter", "Reconnections to the fleet.", num(f.reconnects));
  single(out, "swthrottle_fleet_evicted_keys_total", "counter",
         "Keys the fleet's Redis evicted (fleet windows among them start over).", num(f.evicted));
  single(out, "swthrottle_fleet_failovers_total", "counter", "Fleet primaries replaced by a replica.",
         num(f.failovers));
  single(out, "swthrottle_fleet_unconfirmed_total", "counter",
         "Counts no replica had acknowledged when their primary failed over: what failovers may have lost.",
         num(f.unconfirmed));
}

// The process: readiness, reloads, and the lines of every input together.
void process_families(std::string& out, const Snapshot& s) {
  single(out, "swthrottle_ready", "gauge", "1 once the rules are loaded and the inputs open, else 0.",
         s.ready ? "1" : "0");
  single(out, "swthrottle_start_time_seconds", "gauge", "When the process started, in seconds since the Unix epoch.",
         seconds_text(s.started_ms));
  single(out, "swthrottle_reloads_total", "counter", "Reloads of the rules (SIGHUP) that took effect.", num(s.reloads));
  single(out, "swthrottle_reload_failures_total", "counter", "Reloads that failed, the old rules kept.",
         num(s.reload_failures));

  single(out, "swthrottle_lines_read_total", "counter", "Lines read from all inputs.", num(s.counts.lines));
  single(out, "swthrottle_lines_matched_total", "counter", "Lines that matched a rule.", num(s.counts.matched));
  single(out, "swthrottle_lines_written_total", "counter", "Lines written to the output.", num(s.counts.written));
  single(out, "swthrottle_lines_truncated_total", "counter", "Lines cut at the line length limit.",
         num(s.counts.truncated));
  single(out, "swthrottle_lines_untimed_total", "counter", "Lines decided without a time of their own.",
         num(s.counts.untimed));
  single(out, "swthrottle_lines_no_timestamp_total", "counter", "Lines in which no timestamp was found.",
         num(s.counts.no_timestamp));
  single(out, "swthrottle_lines_untrusted_total", "counter",
         "Lines whose timestamp was not trusted (too far from the others).", num(s.counts.untrusted));
  single(out, "swthrottle_lines_invalid_json_total", "counter", "Lines of a JSON input that were not valid JSON.",
         num(s.counts.invalid_json));
  single(out, "swthrottle_lines_json_repaired_total", "counter",
         "Lines of a JSON input read leniently: bytes or escapes in a string that JSON does not allow.",
         num(s.counts.json_repaired));
  single(out, "swthrottle_events_cut_total", "counter", "Multi-line events cut at a size or line cap.",
         num(s.counts.cut));
}

// Per rule (label rule).
void rule_families(std::string& out, const Snapshot& s) {
  per_rule(out, s, "swthrottle_rule_lines_total", "counter", "Lines that matched the rule.",
           [](const RuleCounters& r) { return r.counts.lines; });
  per_rule(out, s, "swthrottle_rule_events_total", "counter", "Events the rule counted.",
           [](const RuleCounters& r) { return r.counts.events; });
  per_rule(out, s, "swthrottle_rule_passed_total", "counter", "Lines of a throttle rule let through.",
           [](const RuleCounters& r) { return r.counts.passed; });
  per_rule(out, s, "swthrottle_rule_suppressed_total", "counter", "Lines of a throttle rule held back.",
           [](const RuleCounters& r) { return r.counts.suppressed; });
  per_rule(out, s, "swthrottle_rule_alerts_total", "counter", "Alerts the rule raised.",
           [](const RuleCounters& r) { return r.counts.alerts; });
  per_rule(out, s, "swthrottle_rule_resolved_total", "counter", "Alerts of the rule that resolved.",
           [](const RuleCounters& r) { return r.counts.resolved; });
  per_rule(out, s, "swthrottle_rule_summaries_total", "counter", "Summaries of held-back lines the rule wrote.",
           [](const RuleCounters& r) { return r.counts.summaries; });
  per_rule(out, s, "swthrottle_rule_late_total", "counter", "Lines too late for the rule's window.",
           [](const RuleCounters& r) { return r.counts.late; });
  per_rule(out, s, "swthrottle_rule_untimed_total", "counter", "Lines the rule decided without a time of their own.",
           [](const RuleCounters& r) { return r.counts.untimed; });
  per_rule(out, s, "swthrottle_rule_keys", "gauge", "Keys of the rule with a window now.",
           [](const RuleCounters& r) { return r.keys_now; });
  per_rule(out, s, "swthrottle_rule_keys_created_total", "counter", "Keys of the rule given a window.",
           [](const RuleCounters& r) { return r.counts.keys; });
  per_rule(out, s, "swthrottle_rule_evictions_total", "counter", "Keys of the rule evicted at the key limit.",
           [](const RuleCounters& r) { return r.counts.evictions; });
  per_rule(out, s, "swthrottle_rule_forgotten_total", "counter",
           "Keys of a watched rule forgotten after `forget` without an event.",
           [](const RuleCounters& r) { return r.counts.forgotten; });
}

// Per input (label input).
void input_families(std::string& out, const Snapshot& s) {
  std::vector<Sample> lines, behind, lag, progress, no_timestamp;
  for (const InputState& in : s.inputs) {
    const std::string labels = label_set({{"input", in.input}});
    lines.push_back({labels, num(in.lines)});
    no_timestamp.push_back({labels, in.no_timestamp ? "1" : "0"});
    if (in.bytes_behind) behind.push_back({labels, num(*in.bytes_behind)});
    if (in.newest_log_ms) lag.push_back({labels, seconds_text(s.wall_ms - *in.newest_log_ms)});
    if (in.last_progress_ms != 0) progress.push_back({labels, seconds_text(in.last_progress_ms)});
  }
  family(out, "swthrottle_input_lines_total", "counter", "Lines read from the input.", lines);
  family(out, "swthrottle_input_behind_bytes", "gauge", "Bytes of a followed file not read yet.", behind);
  family(out, "swthrottle_input_log_time_lag_seconds", "gauge",
         "How far the newest timestamp read from the input is behind the wall clock.", lag);
  family(out, "swthrottle_input_last_progress_timestamp_seconds", "gauge",
         "When a line of the input was last decided, in seconds since the Unix epoch.", progress);
  family(out, "swthrottle_input_no_timestamp", "gauge",
         "1 while the input is reported for giving no timestamp under time = \"log\", else 0.", no_timestamp);
}

// The exec actions, when a rule has one.
void exec_families(std::string& out, const Snapshot& s) {
  if (!s.exec) return;
  const output::ExecStats& e = *s.exec;
  single(out, "swthrottle_exec_started_total", "counter", "Exec actions started.", num(e.started));
  single(out, "swthrottle_exec_succeeded_total", "counter", "Exec actions that exited 0.", num(e.succeeded));
  single(out, "swthrottle_exec_failed_attempts_total", "counter", "Exec attempts that failed.", num(e.failed_attempts));
  single(out, "swthrottle_exec_timed_out_total", "counter", "Exec attempts killed at their timeout.", num(e.timed_out));
  single(out, "swthrottle_exec_gave_up_total", "counter", "Exec actions given up after their last attempt.",
         num(e.gave_up));
  single(out, "swthrottle_exec_dropped_total", "counter", "Exec actions dropped at a full queue.", num(e.dropped));
  single(out, "swthrottle_exec_not_run_total", "counter", "Exec actions ended by a stop (SIGTERM) before they ran.",
         num(e.not_run));
  single(out, "swthrottle_exec_queued", "gauge", "Exec actions waiting for a command slot.", num(e.queued));
}

// Per destination (label destination), and the outbox when there is one.
void delivery_families(std::string& out, const Snapshot& s) {
  per_destination(out, s, "swthrottle_delivery_queued_total", "counter", "Records queued for the destination.",
                  [](const delivery::DestinationStats& d) { return d.queued; });
  per_destination(out, s, "swthrottle_delivery_delivered_total", "counter", "Records the destination accepted.",
                  [](const delivery::DestinationStats& d) { return d.delivered; });
  per_destination(out, s, "swthrottle_delivery_attempts_total", "counter", "Requests sent to the destination.",
                  [](const delivery::DestinationStats& d) { return d.attempts; });
  per_destination(out, s, "swthrottle_delivery_failed_attempts_total", "counter",
                  "Requests to the destination that failed.",
                  [](const delivery::DestinationStats& d) { return d.failed_attempts; });
  per_destination(out, s, "swthrottle_delivery_dead_letters_total", "counter",
                  "Records for the destination given up (dead letters).",
                  [](const delivery::DestinationStats& d) { return d.dead_letters; });
  per_destination(out, s, "swthrottle_delivery_reposts_total", "counter",
                  "Reposts of firing alerts to the destination.",
                  [](const delivery::DestinationStats& d) { return d.reposts; });
  per_destination(out, s, "swthrottle_delivery_pending", "gauge", "Records waiting for the destination.",
                  [](const delivery::DestinationStats& d) { return d.pending; });
  per_destination(out, s, "swthrottle_delivery_circuit_open", "gauge",
                  "1 while the destination's circuit breaker is open, else 0.",
                  [](const delivery::DestinationStats& d) { return uint64_t{d.circuit_open ? 1u : 0u}; });
  if (!s.delivery.outbox) return;
  const delivery::OutboxStats& o = *s.delivery.outbox;
  single(out, "swthrottle_outbox_pending", "gauge", "Records waiting in the outbox.", num(o.pending));
  single(out, "swthrottle_outbox_dead_letters_total", "counter", "Records of the outbox given up (dead letters).",
         num(o.dead_letters));
  single(out, "swthrottle_outbox_dropped_total", "counter", "Records dropped from a full outbox, oldest first.",
         num(o.dropped));
  single(out, "swthrottle_outbox_unrecorded", "gauge",
         "Records done but still listed in the outbox (its journal could not be written): a restart sends them again.",
         num(o.unrecorded));
}

}  // namespace

std::string prometheus_text(const Snapshot& s) {
  std::string out;
  out.reserve(4096 + 1024 * s.rules.size());
  process_families(out, s);
  rule_families(out, s);
  input_families(out, s);
  exec_families(out, s);
  delivery_families(out, s);
  if (s.fleet) fleet_families(out, s.fleet->counts);
  return out;
}

std::string stats_json(const Snapshot& s) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["time"] = rfc3339(s.wall_ms);
  j["started"] = rfc3339(s.started_ms);
  j["ready"] = s.ready;
  j["reloads"] = s.reloads;
  j["reload_failures"] = s.reload_failures;
  const engine::GlobalCounts& c = s.counts;
  j["lines"] = {{"read", c.lines},          {"matched", c.matched},          {"written", c.written},
                {"truncated", c.truncated}, {"untimed", c.untimed},          {"no_timestamp", c.no_timestamp},
                {"untrusted", c.untrusted}, {"invalid_json", c.invalid_json}};
  j["lines"]["json_repaired"] = c.json_repaired;
  j["events_cut"] = c.cut;

  ordered_json rules = ordered_json::array();
  for (const RuleCounters& r : s.rules) {
    rules.push_back({{"rule", repaired(r.rule)},
                     {"kind", r.kind},
                     {"lines", r.counts.lines},
                     {"events", r.counts.events},
                     {"passed", r.counts.passed},
                     {"suppressed", r.counts.suppressed},
                     {"alerts", r.counts.alerts},
                     {"resolved", r.counts.resolved},
                     {"summaries", r.counts.summaries},
                     {"late", r.counts.late},
                     {"untimed", r.counts.untimed},
                     {"keys", r.counts.keys},
                     {"evictions", r.counts.evictions},
                     {"forgotten", r.counts.forgotten},
                     {"keys_now", r.keys_now}});
  }
  j["rules"] = std::move(rules);

  ordered_json inputs = ordered_json::array();
  for (const InputState& in : s.inputs) {
    ordered_json o;
    o["input"] = repaired(in.input);
    o["lines"] = in.lines;
    if (in.bytes_behind) o["bytes_behind"] = *in.bytes_behind;
    // A JSON number from the exact decimal text, so that it reads the same
    // as the Prometheus sample.
    if (in.newest_log_ms) o["log_time_lag_seconds"] = ordered_json::parse(seconds_text(s.wall_ms - *in.newest_log_ms));
    o["last_progress"] = in.last_progress_ms != 0 ? ordered_json(rfc3339(in.last_progress_ms)) : ordered_json(nullptr);
    o["no_timestamp"] = in.no_timestamp;
    inputs.push_back(std::move(o));
  }
  j["inputs"] = std::move(inputs);

  if (s.exec) {
    const output::ExecStats& e = *s.exec;
    j["exec"] = {{"started", e.started},     {"succeeded", e.succeeded}, {"failed_attempts", e.failed_attempts},
                 {"timed_out", e.timed_out}, {"gave_up", e.gave_up},     {"dropped", e.dropped},
                 {"not_run", e.not_run},     {"queued", e.queued}};
  }

  ordered_json destinations = ordered_json::array();
  for (const delivery::DestinationStats& d : s.delivery.destinations) {
    destinations.push_back({{"destination", repaired(d.label)},
                            {"queued", d.queued},
                            {"delivered", d.delivered},
                            {"attempts", d.attempts},
                            {"failed_attempts", d.failed_attempts},
                            {"dead_letters", d.dead_letters},
                            {"reposts", d.reposts},
                            {"pending", d.pending},
                            {"circuit_open", d.circuit_open}});
  }
  j["destinations"] = std::move(destinations);

  if (const auto& o = s.delivery.outbox)
    j["outbox"] = {{"pending", o->pending},
                   {"dead_letters", o->dead_letters},
                   {"dropped", o->dropped},
                   {"unrecorded", o->unrecorded}};
  if (s.fleet) {
    const fleet::FleetCounts& f = s.fleet->counts;
    j["fleet"] = {{"degraded", f.degraded_now},  {"asked", f.asked},       {"answered", f.answered},
                  {"unanswered", f.unanswered},  {"timeouts", f.timeouts}, {"errors", f.errors},
                  {"reconnects", f.reconnects},  {"evicted", f.evicted},   {"failovers", f.failovers},
                  {"unconfirmed", f.unconfirmed}};
  }
  // replace: a repair missed above must not throw in the middle of --stats.
  return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

}  // namespace swthrottle::metrics
