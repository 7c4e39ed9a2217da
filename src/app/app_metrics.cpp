// The App's side of metrics and systemd (man page: METRICS, SYSTEMD): the
// snapshot of what the run has done, the metrics file, the STATUS line and
// the watchdog pings, which go only while the pipeline is healthy.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "app/app.h"
#include "metrics/exposition.h"
#include "metrics/health.h"
#include "pipeline/batch.h"
#include "util/atomic_file.h"
#include "util/stderr.h"

namespace swthrottle::app {

namespace {

// How often the metrics file is written and the STATUS line sent, at most
// (the watchdog may ask for more often).
constexpr int64_t kMetricsEveryMs = 5'000;

}  // namespace

App::InputMeter* App::meter_of(const std::string& input) {
  for (auto& m : meters_)
    if (m->name == input) return m.get();
  return nullptr;
}

void App::progressed(const std::string& input, uint64_t lines, int64_t newest_log_ms) {
  InputMeter* m = meter_of(input);
  if (m == nullptr) return;
  m->lines.fetch_add(lines, std::memory_order_relaxed);
  if (newest_log_ms != pipeline::kNoStamp) {
    m->no_timestamp.store(false, std::memory_order_relaxed);
    int64_t cur = m->newest_log_ms.load(std::memory_order_relaxed);
    while (newest_log_ms > cur && !m->newest_log_ms.compare_exchange_weak(cur, newest_log_ms)) {
    }
  }
  m->progress_ms.store(clock_.wall_ms(), std::memory_order_relaxed);
}

// A timestamp since clears it (progressed()): the gauge says what is true now.
void App::no_timestamp(const std::string& input, const std::string& message) {
  if (InputMeter* m = meter_of(input)) m->no_timestamp.store(true, std::memory_order_relaxed);
  print_message(message);
}

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

metrics::Snapshot App::snapshot() {
  metrics::Snapshot s;
  s.wall_ms = clock_.wall_ms();
  s.started_ms = started_wall_ms_;
  s.ready = ready_.load(std::memory_order_acquire);
  s.reloads = reloads_.load(std::memory_order_relaxed);
  s.reload_failures = reload_failures_.load(std::memory_order_relaxed);
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
  {
    std::lock_guard lock(mu_);
    for (const auto& m : meters_) {
      metrics::InputState in;
      in.input = m->name;
      in.lines = m->lines.load(std::memory_order_relaxed);
      const int64_t newest = m->newest_log_ms.load(std::memory_order_relaxed);
      if (newest != INT64_MIN) in.newest_log_ms = newest;
      in.last_progress_ms = m->progress_ms.load(std::memory_order_relaxed);
      in.no_timestamp = m->no_timestamp.load(std::memory_order_relaxed);
      if (m->follower != nullptr) in.bytes_behind = m->follower->bytes_behind();
      s.inputs.push_back(std::move(in));
    }
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
  return s;
}

bool App::needs_metrics_thread() const { return !options_.metrics_file.empty() || notify_.enabled(); }

void App::write_metrics_file() {
  if (options_.metrics_file.empty()) return;
  // finish() and the metrics thread may both write: one at a time (they
  // share the temporary file's name).
  static std::mutex one_writer;
  std::lock_guard lock(one_writer);
  // Replaced whole, so node_exporter's textfile collector never reads half.
  if (const int err = replace_file_atomically(options_.metrics_file, metrics::prometheus_text(snapshot()), 0644)) {
    static std::atomic<bool> told{false};
    if (!told.exchange(true))
      print_message(
          fmt::format("--metrics-file {}: cannot write it: {} (said once)", options_.metrics_file, std::strerror(err)));
  }
}

std::string App::status_line() {
  const metrics::Snapshot s = snapshot();
  uint64_t alerts = 0, suppressed = 0;
  for (const auto& r : s.rules) {
    alerts += r.alerts;
    suppressed += r.suppressed;
  }
  std::string line =
      fmt::format("{} lines, {} matched, {} alerts, {} suppressed", s.lines, s.matched, alerts, suppressed);
  uint64_t pending = 0;
  for (const auto& d : s.destinations) pending += d.pending;
  if (!s.destinations.empty()) line += fmt::format(", {} waiting for delivery", pending);
  if (s.fleet && s.fleet_degraded) line += ", fleet unreachable";
  return line;
}

void App::metrics_loop() {
  const int64_t watchdog_ms = std::chrono::duration_cast<std::chrono::milliseconds>(notify_.watchdog()).count();
  // Pings at half the watchdog's interval, as sd_watchdog_enabled(3) advises.
  const int64_t every =
      watchdog_ms > 0 ? std::min(kMetricsEveryMs, std::max<int64_t>(watchdog_ms / 2, 100)) : kMetricsEveryMs;
  std::optional<int64_t> last_status;
  std::unique_lock lock(mu_);
  while (!metrics_done_) {
    lock.unlock();
    write_metrics_file();
    const int64_t now = clock_.wall_ms();
    if (notify_.enabled()) {
      if (!last_status || now - *last_status >= kMetricsEveryMs) {
        notify_.status(status_line());
        last_status = now;
      }
      // Only while healthy: a decider stuck with lines waiting stops the
      // pings, and WatchdogSec restarts the service.
      if (watchdog_ms > 0 && metrics::health_of(snapshot(), watchdog_ms).ok) notify_.watchdog_ping();
    }
    lock.lock();
    clock_.wait_for(cv_, lock, every, [this] { return metrics_done_; });
  }
}

}  // namespace swthrottle::app
