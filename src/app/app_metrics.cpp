// The App's part of a snapshot (man page: METRICS): the counters of the
// current generation's engine and what each owner says about itself.
// RunMetrics (run_metrics.h) adds the process's and the inputs' figures.
#include "app/app.h"

namespace swthrottle::app {

namespace {

// The fleet client's counters, as a scrape sees them.
void fleet_counters(const fleet::FleetCounts& f, metrics::Snapshot& s) {
  s.fleet = true;
  s.fleet_degraded = f.degraded_now;
  s.fleet_asked = f.asked;
  s.fleet_answered = f.answered;
  s.fleet_unanswered = f.unanswered;
  s.fleet_timeouts = f.timeouts;
  s.fleet_errors = f.errors;
  s.fleet_reconnects = f.reconnects;
  s.fleet_evicted = f.evicted;
  s.fleet_failovers = f.failovers;
  s.fleet_unconfirmed = f.unconfirmed;
}

}  // namespace

void App::add_snapshot_parts(metrics::Snapshot& s) {
  const pipeline::Generation& g = *current();
  const engine::Engine& e = *g.engine;
  const engine::GlobalStats& gs = e.stats();
  s.lines = gs.lines.get();
  s.matched = gs.matched.get();
  s.written = gs.written.get();
  s.truncated = gs.truncated.get();
  s.untimed = gs.untimed.get();
  s.no_timestamp = gs.no_timestamp.get();
  s.untrusted = gs.untrusted.get();
  s.invalid_json = gs.invalid_json.get();
  s.json_repaired = gs.json_repaired.get();
  s.cut = gs.cut.get();
  for (std::size_t r = 0; r < g.rules->rules.size(); ++r) {
    const config::Rule& rule = g.rules->rules[r];
    const engine::RuleStats& rs = e.rule_stats(r);
    metrics::RuleCounters c;
    c.rule = rule.name;
    c.kind = std::string(config::to_string(rule.kind));
    c.lines = rs.lines.get();
    c.events = rs.events.get();
    c.passed = rs.passed.get();
    c.suppressed = rs.suppressed.get();
    c.alerts = rs.alerts.get();
    c.resolved = rs.resolveds.get();
    c.summaries = rs.summaries.get();
    c.late = rs.late.get();
    c.untimed = rs.untimed.get();
    c.keys = rs.keys.get();
    c.evictions = rs.evictions.get();
    c.forgotten = rs.forgotten.get();
    c.keys_now = e.key_count(r);
    s.rules.push_back(std::move(c));
  }
  if (const auto exec = exec_.stats()) {
    const output::ExecStats& x = *exec;
    s.exec = true;
    s.exec_started = x.started;
    s.exec_succeeded = x.succeeded;
    s.exec_failed_attempts = x.failed_attempts;
    s.exec_timed_out = x.timed_out;
    s.exec_gave_up = x.gave_up;
    s.exec_dropped = x.dropped;
    s.exec_not_run = x.not_run;
    s.exec_queued = x.queued;
  }
  const delivery::DeliveryStats delivery = deliveries_.stats();
  {
    for (const delivery::DestinationStats& d : delivery.destinations) {
      metrics::DestinationCounters c;
      c.destination = d.label;
      c.queued = d.queued;
      c.delivered = d.delivered;
      c.attempts = d.attempts;
      c.failed_attempts = d.failed_attempts;
      c.dead_letters = d.dead_letters;
      c.reposts = d.reposts;
      c.pending = d.pending;
      c.circuit_open = d.circuit_open;
      s.destinations.push_back(std::move(c));
    }
  }
  if (delivery.outbox) {
    const delivery::OutboxStats& o = *delivery.outbox;
    s.outbox = true;
    s.outbox_pending = o.pending;
    s.outbox_dead_letters = o.dead_letters;
    s.outbox_dropped = o.dropped;
    s.outbox_unrecorded = o.unrecorded;
  }
  if (const auto f = fleet_.stats()) fleet_counters(*f, s);
}

}  // namespace swthrottle::app
