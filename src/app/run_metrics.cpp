#include "app/run_metrics.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "metrics/exposition.h"
#include "metrics/health.h"
#include "pipeline/batch.h"
#include "util/atomic_file.h"
#include "util/atomic_max.h"
#include "util/stderr.h"

namespace swthrottle::app {

namespace {

// How often the metrics file is written and the STATUS line sent, at most
// (the watchdog may ask for more often).
constexpr int64_t kMetricsEveryMs = 5'000;

// /healthz calls an input stalled after a minute with lines waiting.
constexpr int64_t kStallMs = 60'000;

}  // namespace

RunMetrics::RunMetrics(const cli::Options& options, const Clock& clock, AddParts add_parts)
    : options_(options),
      clock_(clock),
      add_parts_(std::move(add_parts)),
      started_wall_ms_(clock.wall_ms()),
      notify_(clock) {}

RunMetrics::~RunMetrics() { end_thread(); }

void RunMetrics::end_thread() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool RunMetrics::start_server() {
  if (options_.metrics_listen.empty()) return true;
  auto server = metrics::MetricsServer::start(
      options_.metrics_listen, [this] { return snapshot(); }, kStallMs);
  if (!server) {
    print_message(server.error().str());
    return false;
  }
  server_ = std::move(*server);
  return true;
}

void RunMetrics::start(const std::vector<InputSpec>& inputs) {
  {
    std::lock_guard lock(mu_);  // /metrics may be reading them already
    for (const InputSpec& in : inputs) {
      if (own_meter(in.name) != nullptr) continue;
      meters_.push_back(std::make_unique<InputMeter>());
      meters_.back()->name = in.name;
    }
  }
  ready_.store(true, std::memory_order_release);
  notify_.ready();
  if (needs_thread()) thread_ = std::thread([this] { loop(); });
}

RunMetrics::InputMeter* RunMetrics::own_meter(const std::string& input) {
  for (auto& m : meters_)
    if (m->name == input) return m.get();
  return nullptr;
}

RunMetrics::InputMeter* RunMetrics::meter_of(const std::string& input) {
  if (InputMeter* m = own_meter(input)) return m;
  for (const auto& [file, meter] : adopted_)
    if (file == input) return meter;
  return nullptr;
}

void RunMetrics::adopt(const std::string& file, const std::string& pattern) {
  std::lock_guard lock(mu_);
  if (own_meter(file) != nullptr) return;  // also named on its own: metered as itself
  if (InputMeter* m = own_meter(pattern)) adopted_.emplace_back(file, m);
}

void RunMetrics::release(const std::string& file) {
  std::lock_guard lock(mu_);
  for (auto it = adopted_.begin(); it != adopted_.end(); ++it) {
    if (it->first != file) continue;
    stamped(*it->second, file);  // a file let go of no longer speaks for the pattern
    adopted_.erase(it);
    return;
  }
}

void RunMetrics::progressed(const std::string& input, uint64_t lines, int64_t newest_log_ms) {
  InputMeter* m = own_meter(input);
  if (m == nullptr) {  // a pattern's file: once per decided batch of it
    std::lock_guard lock(mu_);
    m = meter_of(input);
  }
  if (m == nullptr) return;
  m->lines.fetch_add(lines, std::memory_order_relaxed);
  if (newest_log_ms != pipeline::kNoStamp) {
    if (m->no_timestamp.load(std::memory_order_relaxed)) {
      std::lock_guard lock(mu_);
      stamped(*m, input);
    }
    atomic_max(m->newest_log_ms, newest_log_ms);
  }
  m->progress_ms.store(clock_.wall_ms(), std::memory_order_relaxed);
}

void RunMetrics::stamped(InputMeter& m, const std::string& input) {
  std::erase(m.unstamped, input);
  m.no_timestamp.store(!m.unstamped.empty(), std::memory_order_relaxed);
}

// A timestamp since clears it (progressed()): the gauge says what is true now.
void RunMetrics::no_timestamp(const std::string& input, const std::string& message) {
  {
    std::lock_guard lock(mu_);
    if (InputMeter* m = meter_of(input)) {
      if (std::find(m->unstamped.begin(), m->unstamped.end(), input) == m->unstamped.end())
        m->unstamped.push_back(input);
      m->no_timestamp.store(true, std::memory_order_relaxed);
    }
  }
  print_message(message);
}

void RunMetrics::follow(const std::string& input, input::Follower* follower) {
  std::lock_guard lock(mu_);
  if (InputMeter* m = meter_of(input)) m->followers.push_back(follower);
}

void RunMetrics::unfollow(const std::string& input, const input::Follower* follower) {
  std::lock_guard lock(mu_);
  if (InputMeter* m = meter_of(input)) std::erase(m->followers, follower);
}

void RunMetrics::reload_started() { notify_.reloading(); }

void RunMetrics::reload_ended() { notify_.ready(); }

void RunMetrics::count_reload(bool took_effect) {
  (took_effect ? reloads_ : reload_failures_).fetch_add(1, std::memory_order_relaxed);
}

void RunMetrics::stopping() { notify_.stopping(); }

void RunMetrics::finish() {
  end_thread();
  write_metrics_file();
  server_.reset();
}

void RunMetrics::add_inputs(metrics::Snapshot& s) {
  std::lock_guard lock(mu_);
  for (const auto& m : meters_) {
    metrics::InputState in;
    in.input = m->name;
    in.lines = m->lines.load(std::memory_order_relaxed);
    const int64_t newest = m->newest_log_ms.load(std::memory_order_relaxed);
    if (newest != INT64_MIN) in.newest_log_ms = newest;
    in.last_progress_ms = m->progress_ms.load(std::memory_order_relaxed);
    in.no_timestamp = m->no_timestamp.load(std::memory_order_relaxed);
    for (const input::Follower* f : m->followers) in.bytes_behind = in.bytes_behind.value_or(0) + f->bytes_behind();
    s.inputs.push_back(std::move(in));
  }
}

metrics::Snapshot RunMetrics::snapshot() {
  metrics::Snapshot s;
  s.wall_ms = clock_.wall_ms();
  s.started_ms = started_wall_ms_;
  s.ready = ready_.load(std::memory_order_acquire);
  s.reloads = reloads_.load(std::memory_order_relaxed);
  s.reload_failures = reload_failures_.load(std::memory_order_relaxed);
  add_parts_(s);
  add_inputs(s);
  return s;
}

bool RunMetrics::needs_thread() const { return !options_.metrics_file.empty() || notify_.enabled(); }

void RunMetrics::write_metrics_file() {
  if (options_.metrics_file.empty()) return;
  std::lock_guard lock(file_mu_);
  // Replaced whole, so node_exporter's textfile collector never reads half.
  if (const int err = replace_file_atomically(options_.metrics_file, metrics::prometheus_text(snapshot()), 0644)) {
    if (!told_file_error_.exchange(true))
      print_message(
          fmt::format("--metrics-file {}: cannot write it: {} (said once)", options_.metrics_file, std::strerror(err)));
  }
}

std::string RunMetrics::status_line() {
  const metrics::Snapshot s = snapshot();
  uint64_t alerts = 0, suppressed = 0;
  for (const auto& r : s.rules) {
    alerts += r.counts.alerts;
    suppressed += r.counts.suppressed;
  }
  std::string line = fmt::format("{} lines, {} matched, {} alerts, {} suppressed", s.counts.lines, s.counts.matched,
                                 alerts, suppressed);
  uint64_t pending = 0;
  for (const auto& d : s.delivery.destinations) pending += d.pending;
  if (!s.delivery.destinations.empty()) line += fmt::format(", {} waiting for delivery", pending);
  if (s.fleet && s.fleet->counts.degraded_now) line += ", fleet unreachable";
  return line;
}

void RunMetrics::loop() {
  const int64_t watchdog_ms = std::chrono::duration_cast<std::chrono::milliseconds>(notify_.watchdog()).count();
  // Pings at half the watchdog's interval, as sd_watchdog_enabled(3) advises.
  const int64_t every =
      watchdog_ms > 0 ? std::min(kMetricsEveryMs, std::max<int64_t>(watchdog_ms / 2, 100)) : kMetricsEveryMs;
  std::optional<int64_t> last_status;
  std::unique_lock lock(mu_);
  while (!done_) {
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
    clock_.wait_for(cv_, lock, every, [this] { return done_; });
  }
}

}  // namespace swthrottle::app
