#include "metrics/stats_text.h"

#include <fmt/format.h>

namespace swthrottle::metrics {

namespace {

std::string lines_line(const Snapshot& s) {
  const engine::GlobalCounts& c = s.counts;
  std::string out =
      fmt::format("swthrottle: stats: lines {} matched {} written {} truncated {} untimed {} untrusted {}", c.lines,
                  c.matched, c.written, c.truncated, c.untimed, c.untrusted);
  // Only when there were some: the line of a run without JSON stays as it was.
  if (c.invalid_json > 0) out += fmt::format(" invalid_json {}", c.invalid_json);
  // Likewise: lines read as JSON leniently (a bad byte or escape in a string).
  if (c.json_repaired > 0) out += fmt::format(" json_repaired {}", c.json_repaired);
  // Only where events are grouped (`multiline`).
  if (s.groups_events) out += fmt::format(" cut {}", c.cut);
  return out + "\n";
}

std::string rule_line(const RuleCounters& r) {
  const engine::RuleCounts& c = r.counts;
  std::string out;
  if (r.kind == "throttle") {
    out = fmt::format(
        "swthrottle: stats: rule {}: lines {} passed {} suppressed {} summaries {} late {} untimed {} keys {} "
        "evicted {}",
        r.rule, c.lines, c.passed, c.suppressed, c.summaries, c.late, c.untimed, r.keys_now, c.evictions);
  } else {
    out = fmt::format(
        "swthrottle: stats: rule {}: lines {} events {} alerts {} resolved {} suppressed {} late {} untimed {} "
        "keys {} evicted {}",
        r.rule, c.lines, c.events, c.alerts, c.resolved, c.suppressed, c.late, c.untimed, r.keys_now, c.evictions);
  }
  // The figures only some rules have, on those rules alone.
  if (r.values_now) out += fmt::format(" learned {} values {}", c.learned, *r.values_now);
  if (r.forgets_keys) out += fmt::format(" forgotten {}", c.forgotten);
  if (r.fleet) out += fmt::format(" fleet_local {} fleet_late {}", c.fleet_local, c.fleet_late);
  return out + "\n";
}

std::string fleet_line(const FleetState& f) {
  const fleet::FleetCounts& c = f.counts;
  return fmt::format(
      "swthrottle: stats: fleet: redis {} namespace {} host {} state {} asked {} answered {} unanswered {} "
      "timeouts {} errors {} degraded {} reconnects {} reloads {} resets {} evicted {} failovers {} unconfirmed {} "
      "flushes {} late_flushed {} dropped {} local_alerts {} duplicates {}\n",
      f.redis, f.namespace_name, f.host, c.degraded_now ? "degraded" : "ok", c.asked, c.answered, c.unanswered,
      c.timeouts, c.errors, c.degraded, c.reconnects, c.reloads, c.resets, c.evicted, c.failovers, c.unconfirmed,
      c.flushes, c.late_flushed, c.dropped, c.local_alerts, c.duplicates);
}

std::string exec_line(const output::ExecStats& e) {
  return fmt::format(
      "swthrottle: stats: exec: started {} succeeded {} retried {} timed out {} gave up {} dropped {} not run {}\n",
      e.started, e.succeeded, e.retried, e.timed_out, e.gave_up, e.dropped, e.not_run);
}

std::string delivery_lines(const delivery::DeliveryStats& d) {
  std::string out;
  for (const delivery::DestinationStats& t : d.destinations) {
    out += fmt::format(
        "swthrottle: stats: delivery: {}: queued {} delivered {} attempts {} failed {} dead_letters {} reposts {} "
        "pending {}{}\n",
        t.label, t.queued, t.delivered, t.attempts, t.failed_attempts, t.dead_letters, t.reposts, t.pending,
        t.circuit_open ? " circuit open" : "");
  }
  if (const auto& o = d.outbox) {
    out += fmt::format(
        "swthrottle: stats: outbox: added {} delivered {} dead_letters {} dropped {} recovered {} pending {}{}\n",
        o->added, o->delivered, o->dead_letters, o->dropped, o->recovered, o->pending,
        o->unrecorded > 0 ? fmt::format(" unrecorded {}", o->unrecorded) : std::string());
  }
  return out;
}

}  // namespace

std::string stats_text(const Snapshot& s) {
  std::string out = lines_line(s);
  for (const RuleCounters& r : s.rules) out += rule_line(r);
  if (s.fleet) out += fleet_line(*s.fleet);
  if (s.exec) out += exec_line(*s.exec);
  out += delivery_lines(s.delivery);
  return out;
}

}  // namespace swthrottle::metrics
