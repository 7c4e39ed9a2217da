#include "fleet/fleet_client.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

namespace swthrottle::fleet {

namespace {

// Requests sent in one pipeline at most: enough to keep Redis busy, small
// enough that one slow reply does not hold up many askers.
constexpr std::size_t kMaxPipeline = 256;
// How often a connected client looks at the server again (restart, evictions, clock).
constexpr int64_t kCheckEveryMs = 10'000;
// How often it looks at how far the replicas are (ROLE), where there are some.
constexpr int64_t kReplicationEveryMs = 1'000;
constexpr int64_t kBackoffFirstMs = 100;
// A refused request is said on stderr at most this often.
constexpr int64_t kErrorEveryMs = 60'000;

std::string seconds_text(int64_t ms) { return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000.0); }

}  // namespace

struct FleetClient::Pending {
  Request request;
  Reply reply;
  int64_t deadline_ms = 0;
  bool done = false;
  bool ok = false;
};

FleetClient::FleetClient(const Clock& clock, FleetClientOptions options, Report report)
    : clock_(clock), options_(std::move(options)), report_(std::move(report)) {
  server_ = make_fleet_server(options_, clock_);
  if (!connect_now()) go_degraded(connect_error_);
  server_->watch([this] {
    {
      std::lock_guard lock(mu_);
      moved_ = true;
    }
    wake_.notify_all();
  });
  thread_ = std::thread([this] { loop(); });
}

FleetClient::~FleetClient() { stop(); }

void FleetClient::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  fail_queued();
  server_.reset();  // after the join: the server is the fleet thread's own; its watcher stops here
}

bool FleetClient::ask(const Request& request, Reply& reply) {
  stats_.asked.fetch_add(1, std::memory_order_relaxed);
  if (stats_.degraded_now.load(std::memory_order_acquire)) {
    stats_.unanswered.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  auto p = std::make_shared<Pending>();
  p->request = request;
  p->deadline_ms = clock_.steady_ms() + options_.timeout.count();
  std::unique_lock lock(mu_);
  if (stop_ || stats_.degraded_now.load(std::memory_order_acquire)) {  // went degraded since the look above
    stats_.unanswered.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  queue_.push_back(p);
  wake_.notify_one();
  if (!clock_.wait_until(done_, lock, p->deadline_ms, [&] { return p->done; })) {
    p->done = true;  // the fleet thread skips it, or drops its reply
    stats_.timeouts.fetch_add(1, std::memory_order_relaxed);
    stats_.unanswered.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (!p->ok) {
    stats_.unanswered.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  reply = std::move(p->reply);
  stats_.answered.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void FleetClient::add_batch_source(BatchSource* source) {
  {
    std::lock_guard lock(mu_);
    sources_.push_back(source);
    // A first flush now: the fleet thread may be waiting until a time that
    // knew of no source (its next server check).
    flush_asked_ = true;
  }
  wake_.notify_one();
}

void FleetClient::remove_batch_source(BatchSource* source) {
  std::unique_lock lock(mu_);
  std::erase(sources_, source);
  done_.wait(lock, [&] { return !flushing_; });  // no deadline: a flush ends within its timeouts
}

void FleetClient::flush_soon() {
  {
    std::lock_guard lock(mu_);
    flush_asked_ = true;
  }
  wake_.notify_one();
}

bool FleetClient::flush_now(std::chrono::milliseconds within) {
  const int64_t deadline_ms = clock_.steady_ms() + within.count();
  std::unique_lock lock(mu_);
  // A flush, then as many as the replies ask for (a `when` claimed in a
  // second step), within the time given.
  for (int round = 0; round < 4; ++round) {
    if (sources_.empty() || stop_ || stats_.degraded_now.load(std::memory_order_acquire)) return false;
    const uint64_t target = flushes_started_ + 1;  // one that starts after this call
    flush_asked_ = true;
    wake_.notify_one();
    if (!clock_.wait_until(done_, lock, deadline_ms, [&] { return flushes_done_ >= target || stop_; })) return false;
    const bool more = std::any_of(sources_.begin(), sources_.end(), [](BatchSource* b) { return b->has_followups(); });
    if (!more) return true;
  }
  return true;
}

bool FleetClient::finish(std::chrono::milliseconds within) {
  const int64_t deadline_ms = clock_.steady_ms() + within.count();
  const bool flushed = flush_now(within);
  std::unique_lock lock(mu_);
  if (stop_ || stats_.degraded_now.load(std::memory_order_acquire)) return false;
  const uint64_t target = checks_done_ + 1;
  check_asked_ = true;
  wake_.notify_one();
  // At least the time a check takes (a round trip), however long the flush took.
  const int64_t until = std::max(deadline_ms, clock_.steady_ms() + options_.timeout.count());
  return clock_.wait_until(done_, lock, until, [&] { return checks_done_ >= target || stop_; }) && flushed;
}

void FleetClient::flush_batches() {
  std::vector<BatchSource*> sources;
  {
    std::lock_guard lock(mu_);
    sources = sources_;
    flush_asked_ = false;
    ++flushes_started_;
    flushing_ = true;
  }
  next_flush_ms_ = clock_.steady_ms() + options_.sync.count();
  std::vector<Request> requests;
  std::vector<Reply> replies;
  bool refused = false;
  for (BatchSource* source : sources) {
    requests.clear();
    source->collect(requests);
    if (requests.empty()) continue;
    const bool alive = server_->run(requests, replies);
    replies.resize(requests.size());
    for (const Reply& r : replies) {
      if (alive && !r.ok) {
        stats_.errors.fetch_add(1, std::memory_order_relaxed);
        refused = true;
      }
    }
    source->done(requests, replies, alive);
    if (!alive) {
      go_degraded(server_->error());
      break;
    }
  }
  {
    std::lock_guard lock(mu_);
    ++flushes_done_;
    flushing_ = false;
  }
  done_.notify_all();
  // An error answer may be Redis out of memory: what it evicted, now.
  if (refused && !stats_.degraded_now.load(std::memory_order_acquire)) check_server(/*first=*/false);
}

bool FleetClient::connect_now() {
  if (!server_->connect()) {
    connect_error_ = server_->error();
    return false;
  }
  std::vector<Failover> failovers;
  server_->take_failovers(failovers);
  for (const Failover& f : failovers) {
    stats_.failovers.fetch_add(1, std::memory_order_relaxed);
    stats_.unconfirmed.fetch_add(f.unconfirmed, std::memory_order_relaxed);
    report_(
        fmt::format("fleet: redis {}: failover from {} to {}: {} counts this host wrote had not reached a "
                    "replica, and may be lost (each at most one more line passed, or one more alert)",
                    options_.endpoint.text, f.from, f.to, f.unconfirmed));
  }
  next_replication_ms_ = clock_.steady_ms() + kReplicationEveryMs;
  if (!check_server(/*first=*/true)) {
    server_->close();
    return false;
  }
  return true;
}

bool FleetClient::check_server(bool first) {
  next_check_ms_ = clock_.steady_ms() + kCheckEveryMs;
  const int64_t before = clock_.wall_ms();
  const auto infos = server_->info();
  if (!infos) {
    connect_error_ = server_->error();
    return false;  // the connection failed: the next request finds out
  }
  const int64_t after = clock_.wall_ms();
  const std::string& where = options_.endpoint.text;
  for (const NodeInfo& n : *infos) {
    const ServerInfo& info = n.info;
    if (first && !options_.allow_eviction && policy_evicts(info.maxmemory_policy)) {
      connect_error_ = fmt::format(
          "{} has maxmemory-policy {}, which can evict fleet windows (they would start over, and pass or alert "
          "again); refused: set it to noeviction, or [fleet] allow_eviction = true to accept it",
          n.label, info.maxmemory_policy);
      return false;
    }
    auto& run_id = run_ids_[n.label];
    if (!run_id.empty() && info.run_id != run_id) {
      stats_.resets.fetch_add(1, std::memory_order_relaxed);
      report_(fmt::format("fleet: redis {} restarted (its run_id changed): fleet windows it did not save start over",
                          n.label));
    }
    run_id = info.run_id;
    if (first && policy_evicts(info.maxmemory_policy) && !evicted_base_.contains(n.label)) {  // once per server
      report_(
          fmt::format("fleet: redis {} has maxmemory-policy {}: under memory pressure it can evict fleet "
                      "windows, which then start over (allowed by [fleet] allow_eviction)",
                      n.label, info.maxmemory_policy));
    }
    const auto base = evicted_base_.find(n.label);
    if (base != evicted_base_.end() && info.evicted_keys > base->second) {
      const auto count = static_cast<uint64_t>(info.evicted_keys - base->second);
      stats_.evicted.fetch_add(count, std::memory_order_relaxed);
      report_(fmt::format("fleet: redis {} evicted {} keys: fleet windows among them start over", n.label, count));
    }
    evicted_base_[n.label] = info.evicted_keys;
  }
  if (options_.skew_warn_ms > 0 && !infos->empty()) {
    // The host's clock at the middle of the round trip against the server's.
    const int64_t skew = (before + after) / 2 - infos->front().info.time_ms;
    if (std::llabs(skew) > options_.skew_warn_ms) {
      report_(
          fmt::format("fleet: this host's clock is {} ms {} redis {}'s (more than {} ms, a quarter of the "
                      "narrowest fleet bucket): its events land in other buckets than other hosts' would",
                      std::llabs(skew), skew > 0 ? "ahead of" : "behind", where, options_.skew_warn_ms));
    }
  }
  return true;
}

void FleetClient::go_degraded(const std::string& why) {
  server_->close();
  if (stats_.degraded_now.exchange(true, std::memory_order_acq_rel)) return;
  stats_.degraded.fetch_add(1, std::memory_order_relaxed);
  degraded_since_ms_ = clock_.steady_ms();
  // The connection's errors name the server already ("redis HOST:PORT: why").
  std::string_view reason = why;
  if (reason.starts_with("redis ") && reason.find(": ") != std::string_view::npos)
    reason.remove_prefix(reason.find(": ") + 2);
  report_(fmt::format("fleet: redis {} unreachable ({}); deciding by on_unreachable = {}", options_.endpoint.text,
                      reason, options_.fallback));
  fail_queued();
}

void FleetClient::fail_queued() {
  std::lock_guard lock(mu_);
  for (auto& p : queue_) p->done = true;  // ok stays false
  queue_.clear();
  done_.notify_all();
}

void FleetClient::loop_degraded(int64_t& backoff_ms, std::minstd_rand& jitter) {
  const int64_t wait_ms = backoff_ms + static_cast<int64_t>(jitter() % (backoff_ms / 2 + 1));
  {
    std::unique_lock lock(mu_);
    // Sentinel's +switch-master ends the wait: the new primary is ready.
    clock_.wait_for(wake_, lock, wait_ms, [&] { return stop_ || moved_; });
    if (stop_) return;
    moved_ = false;
  }
  if (!connect_now()) {
    server_->close();
    backoff_ms = std::min(backoff_ms * 2, server_->max_backoff_ms());
    return;
  }
  backoff_ms = kBackoffFirstMs;
  stats_.reconnects.fetch_add(1, std::memory_order_relaxed);
  // Before the report: a line written after it is decided with the fleet.
  stats_.degraded_now.store(false, std::memory_order_release);
  report_(fmt::format("fleet: redis {} reachable again after {}; fleet rules decide with the fleet again",
                      options_.endpoint.text, seconds_text(clock_.steady_ms() - degraded_since_ms_)));
}

void FleetClient::on_timers() {
  bool moved = false, check = false;
  {
    std::lock_guard lock(mu_);
    std::swap(moved, moved_);
    std::swap(check, check_asked_);
  }
  const int64_t now = clock_.steady_ms();
  if (!moved && now >= next_check_ms_) moved = !server_->still_current();
  if (moved) {
    // The servers moved under a working connection (a failover Sentinel
    // announced): the new ones now, without an episode when they answer.
    if (!connect_now()) go_degraded(connect_error_);
  } else if (check || now >= next_check_ms_) {
    if (!check_server(/*first=*/false)) go_degraded(connect_error_);
  } else if (server_->has_replicas() && now >= next_replication_ms_) {
    next_replication_ms_ = now + kReplicationEveryMs;
    if (!server_->look_at_replication()) go_degraded(server_->error());
  }
  if (check) {
    {
      std::lock_guard lock(mu_);
      ++checks_done_;
    }
    done_.notify_all();
  }
}

void FleetClient::send(std::vector<std::shared_ptr<Pending>>& batch) {
  std::vector<Request> requests;
  std::vector<Reply> replies;
  requests.reserve(batch.size());
  for (const auto& p : batch) requests.push_back(p->request);
  const bool alive = server_->run(requests, replies);
  const uint64_t reloads = server_->reloads();
  if (reloads > reloads_seen_) {
    stats_.reloads.fetch_add(reloads - reloads_seen_, std::memory_order_relaxed);
    report_(fmt::format("fleet: redis {} had lost its scripts (restart, failover or SCRIPT FLUSH); loaded again",
                        options_.endpoint.text));
  }
  reloads_seen_ = reloads;
  std::string first_error;
  {
    std::lock_guard lock(mu_);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      Pending& p = *batch[i];
      const bool ok = i < replies.size() && replies[i].ok;
      if (!ok && alive && i < replies.size() && first_error.empty()) first_error = replies[i].error;
      if (!ok && alive) stats_.errors.fetch_add(1, std::memory_order_relaxed);
      if (p.done) continue;  // its asker timed out meanwhile
      p.done = true;
      p.ok = ok;
      if (ok) p.reply = std::move(replies[i]);
    }
  }
  done_.notify_all();
  if (!alive) {
    go_degraded(server_->error());
    return;
  }
  if (first_error.empty()) return;
  const int64_t now_ms = clock_.steady_ms();
  if (last_error_report_ms_ < 0 || now_ms - last_error_report_ms_ >= kErrorEveryMs) {
    last_error_report_ms_ = now_ms;
    report_(fmt::format("fleet: redis {} refused a request ({}); its line was decided by on_unreachable = {}",
                        options_.endpoint.text, first_error, options_.fallback));
  }
  // An error answer may be Redis out of memory: what it evicted, now.
  if (!check_server(/*first=*/false)) go_degraded(connect_error_);
}

void FleetClient::loop() {
  std::minstd_rand jitter(static_cast<unsigned>(std::random_device{}()));
  int64_t backoff_ms = kBackoffFirstMs;
  std::vector<std::shared_ptr<Pending>> batch;
  for (;;) {
    if (stats_.degraded_now.load(std::memory_order_acquire)) {
      loop_degraded(backoff_ms, jitter);
      std::lock_guard lock(mu_);
      if (stop_) return;
      continue;
    }
    batch.clear();
    bool flush = false;
    {
      std::unique_lock lock(mu_);
      int64_t until_ms = sources_.empty() ? next_check_ms_ : std::min(next_check_ms_, next_flush_ms_);
      if (server_->has_replicas()) until_ms = std::min(until_ms, next_replication_ms_);
      clock_.wait_until(wake_, lock, until_ms,
                        [&] { return stop_ || !queue_.empty() || flush_asked_ || moved_ || check_asked_; });
      if (stop_) return;
      flush = !sources_.empty() && (flush_asked_ || clock_.steady_ms() >= next_flush_ms_);
      while (!queue_.empty() && batch.size() < kMaxPipeline) {
        auto p = std::move(queue_.front());
        queue_.pop_front();
        if (!p->done) batch.push_back(std::move(p));  // an asker that gave up is not sent
      }
    }
    if (flush) {
      flush_batches();
      if (stats_.degraded_now.load(std::memory_order_acquire)) continue;
    }
    if (!batch.empty()) {
      send(batch);
      if (stats_.degraded_now.load(std::memory_order_acquire)) continue;
    }
    on_timers();
  }
}

}  // namespace swthrottle::fleet
