#include "delivery/delivery_pool.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "delivery/http_client.h"
#include "delivery/record_body.h"
#include "delivery/request_builder.h"
#include "output/record_id.h"

namespace swthrottle::delivery {

namespace {

// Alertmanager alerts per POST, at most (its API takes an array).
constexpr std::size_t kAlertmanagerBatch = 64;
// How often a failing destination says so on stderr, at most.
constexpr int64_t kReportEveryMs = 60'000;

std::string outcome_text(const HttpResponse& r) {
  if (r.status == 0) return r.error.empty() ? std::string("no response") : r.error;
  std::string body = r.body.substr(0, std::min<std::size_t>(r.body.find('\n'), 120));
  return body.empty() ? fmt::format("HTTP {}", r.status) : fmt::format("HTTP {}: {}", r.status, body);
}

std::string seconds(int64_t ms) { return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000.0); }

}  // namespace

struct DeliveryPool::Worker {
  Destination dest;
  uint32_t index = 0;
  std::mutex mu;
  std::condition_variable work;     // something queued, or stop
  std::condition_variable changed;  // the queue shrank (room, drained)
  std::deque<Delivery> queue;
  std::size_t batch = 0;  // the front deliveries being tried together (0: none yet); fixed until they end
  bool stop = false;
  DestinationStats stats;
  std::unique_ptr<FiringAlerts> firing;  // Alertmanager
  Circuit circuit;
  int64_t reported_ms = INT64_MIN;  // the last failure line
  uint64_t unreported = 0;          // failures since
  bool failing = false;
  std::thread thread;

  Worker(Destination d, uint32_t i, const DeliveryOptions& o)
      : dest(std::move(d)), index(i), circuit(o.circuit_failures, o.circuit_open_ms) {
    stats.url = dest.target();
    if (dest.kind == DestinationKind::Alertmanager) firing = std::make_unique<FiringAlerts>(o.alertmanager);
  }
};

DeliveryPool::DeliveryPool(DeliveryOptions options, Outbox* outbox, Report report, const Clock& clock)
    : options_(std::move(options)), clock_(clock), outbox_(outbox), report_(std::move(report)) {
  if (options_.seed == 0) options_.seed = (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  options_.batch = std::max<std::size_t>(1, options_.batch);
  options_.queue_capacity = std::max<std::size_t>(1, options_.queue_capacity);
  auto add_worker = [&](Destination d) {
    const auto i = static_cast<uint32_t>(workers_.size());
    workers_.push_back(std::make_unique<Worker>(std::move(d), i, options_));
  };
  for (Destination& d : options_.destinations) add_worker(d);
  if (outbox_) {
    // A previous run's deliveries go first, to where they were meant to go
    // (a destination not configured now still gets what was decided for it).
    for (Delivery& d : outbox_->recovered()) {
      auto it =
          std::find_if(workers_.begin(), workers_.end(), [&](const auto& w) { return w->dest.target() == d.target; });
      if (it == workers_.end()) {
        Destination dest;
        dest.kind = d.target.starts_with("alertmanager ") ? DestinationKind::Alertmanager : DestinationKind::Webhook;
        dest.url = d.target.substr(d.target.find(' ') + 1);
        for (const Destination& like : options_.destinations)
          if (like.kind == dest.kind) {
            dest.headers = like.headers;
            dest.basic_auth = like.basic_auth;
            break;
          }
        add_worker(std::move(dest));
        it = std::prev(workers_.end());
      }
      d.destination = destination_number(d.target);
      d.in_outbox = true;
      ++(*it)->stats.queued;
      (*it)->queue.push_back(std::move(d));
    }
  }
  for (auto& w : workers_) {
    Worker* raw = w.get();
    raw->thread = std::thread([this, raw] { run(*raw); });
  }
}

DeliveryPool::~DeliveryPool() { stop(); }

void DeliveryPool::stop() {
  for (auto& w : workers_) {
    {
      std::lock_guard lock(w->mu);
      w->stop = true;
    }
    w->work.notify_all();
    w->changed.notify_all();
  }
  for (auto& w : workers_)
    if (w->thread.joinable()) w->thread.join();
}

std::vector<uint32_t> DeliveryPool::route(const engine::Record& r) {
  std::lock_guard lock(route_mu_);
  auto found = routes_.find(r.rule);
  if (found != routes_.end()) return found->second;
  std::vector<uint32_t> out;
  for (const auto& w : workers_) {
    const Destination& d = w->dest;
    const auto& own = d.kind == DestinationKind::Webhook ? r.rule->webhooks : r.rule->alertmanagers;
    if (d.every_rule || std::find(own.begin(), own.end(), d.url) != own.end()) out.push_back(w->index);
  }
  routes_.emplace(r.rule, out);
  return out;
}

std::optional<Delivery> DeliveryPool::encode(Worker& w, const engine::Record& r, const std::string& id, int64_t t) {
  Delivery d;
  d.id = id;
  d.target = w.dest.target();
  d.destination = destination_number(d.target);
  d.created_ms = t;
  if (w.dest.kind == DestinationKind::Webhook) {
    d.body = webhook_body(r, id);
    return d;
  }
  AmAlert alert;
  {
    std::lock_guard lock(w.mu);
    if (!w.firing->on_record(r, t, alert)) return std::nullopt;  // summaries are not alerts
  }
  d.body = alertmanager_alert_body(alert, options_.alertmanager.generator_url);
  return d;
}

void DeliveryPool::submit(std::span<const engine::Record> records) {
  std::lock_guard one_at_a_time(submit_mu_);
  std::vector<Delivery> batch;
  std::vector<uint32_t> worker_of;  // by delivery: its worker
  const int64_t t = now();
  for (const engine::Record& r : records) {
    if (r.type == engine::RecordType::Line || r.rule == nullptr) continue;
    const std::vector<uint32_t> to = route(r);
    if (to.empty()) continue;
    const std::string id = output::record_id(r);
    for (uint32_t i : to) {
      std::optional<Delivery> d = encode(*workers_[i], r, id, t);
      if (!d) continue;
      batch.push_back(std::move(*d));
      worker_of.push_back(i);
    }
  }
  if (batch.empty()) return;
  journal(batch);
  for (std::size_t k = 0; k < batch.size(); ++k) enqueue(*workers_[worker_of[k]], std::move(batch[k]));
}

// Durable first: once submit() returns, a crash cannot lose them.
void DeliveryPool::journal(std::vector<Delivery>& batch) {
  if (!outbox_) return;
  if (outbox_->add(batch)) {
    for (Delivery& d : batch) d.in_outbox = true;
    if (outbox_refusing_.exchange(false)) report_("delivery: the outbox takes records again");
  } else if (!outbox_refusing_.exchange(true)) {
    // Once per episode: a full disk refuses every batch after it.
    report_(fmt::format(
        "delivery: the outbox does not take records ({}); they are sent without it, and those not delivered "
        "when the run ends are lost",
        outbox_->last_error().empty() ? "closed" : outbox_->last_error()));
  }
}

void DeliveryPool::enqueue(Worker& w, Delivery&& d) {
  std::unique_lock lock(w.mu);
  // Back-pressure: a full queue slows the input down; nothing is dropped.
  w.changed.wait(lock, [&] {
    return w.stop || w.queue.size() < options_.queue_capacity || unblocked_.load(std::memory_order_acquire);
  });
  if (w.stop) return;  // shutting down: the outbox keeps it
  ++w.stats.queued;
  w.queue.push_back(std::move(d));
  w.work.notify_one();
}

// Alertmanager: firing alerts, again before their endsAt passes (best
// effort: a failed repost is replaced by the next one). Whether it posted.
bool DeliveryPool::repost(Worker& w, HttpClient& http, std::unique_lock<std::mutex>& lock, int64_t t) {
  if (!w.firing) return false;
  std::vector<AmAlert> due = w.firing->due(t);
  if (due.empty()) return false;
  HttpRequest req;
  req.url = w.dest.endpoint();
  req.timeout = options_.timeout;
  req.basic_auth = w.dest.basic_auth;
  req.headers = {"Content-Type: application/json"};
  req.body = alertmanager_body(due, options_.alertmanager.generator_url);
  lock.unlock();
  const HttpResponse resp = http.post(req, t);
  lock.lock();
  ++w.stats.attempts;
  if (classify(resp) == Verdict::Delivered) {
    w.stats.reposts += due.size();
  } else {
    ++w.stats.failed_attempts;
  }
  return true;
}

// One the outbox dropped as the oldest of a full outbox is dead-lettered
// there: it is not sent after all (also a member of a batch being retried:
// it may be dropped during the wait).
void DeliveryPool::drop_gone(Worker& w) {
  if (!outbox_) return;
  std::size_t dropped = 0;
  auto gone = [&](const Delivery& d) { return d.in_outbox && !outbox_->holds(d.id, d.destination); };
  if (w.batch == 0) {
    while (!w.queue.empty() && gone(w.queue.front())) {
      w.queue.pop_front();
      ++dropped;
    }
  } else {
    for (std::size_t i = 0; i < w.batch;) {
      if (gone(w.queue[i])) {
        w.queue.erase(w.queue.begin() + static_cast<std::ptrdiff_t>(i));
        --w.batch;
        ++dropped;
      } else {
        ++i;
      }
    }
  }
  if (dropped > 0) {
    w.stats.dead_letters += dropped;
    w.changed.notify_all();
  }
}

// Batching: a batch keeps its members until it is delivered or given up:
// what comes meanwhile waits for the next one (the same Idempotency-Key on
// every attempt).
std::size_t DeliveryPool::take_batch(Worker& w) const {
  if (w.batch == 0) {
    const std::size_t most = w.dest.kind == DestinationKind::Alertmanager ? kAlertmanagerBatch : options_.batch;
    w.batch = std::min(w.queue.size(), most);
  }
  return w.batch;
}

void DeliveryPool::run(Worker& w) {
  HttpClient http;
  std::mt19937_64 jitter(options_.seed + w.index);
  const int64_t idle_ms = w.firing ? std::max<int64_t>(1000, options_.alertmanager.repost_ms) / 4 : 60'000;
  const RequestOptions request_options{options_.timeout, options_.batch > 1};

  std::unique_lock lock(w.mu);
  while (!w.stop) {
    const int64_t t = now();
    if (repost(w, http, lock, t)) continue;
    if (w.queue.empty()) {
      clock_.wait_for(w.work, lock, idle_ms, [&] { return w.stop || !w.queue.empty(); });
      continue;
    }
    if (!w.circuit.allow(t)) {
      w.stats.circuit_open = true;
      clock_.wait_for(w.work, lock, std::max<int64_t>(1, w.circuit.reopens_at() - t), [&] { return w.stop; });
      continue;
    }
    w.stats.circuit_open = false;
    drop_gone(w);
    if (w.queue.empty()) continue;
    const std::size_t n = take_batch(w);
    const std::vector<Delivery> sending(w.queue.begin(), w.queue.begin() + static_cast<std::ptrdiff_t>(n));
    const HttpRequest req = build_request(w.dest, sending, request_options);
    lock.unlock();
    const HttpResponse resp = http.post(req, t);
    lock.lock();
    ++w.stats.attempts;
    const Verdict v = classify(resp);
    if (v == Verdict::Delivered) {
      delivered(w, n);
    } else if (v == Verdict::GiveUp) {
      refused(w, n, resp);
    } else if (const int64_t delay = failed(w, n, resp, jitter()); delay > 0) {
      clock_.wait_for(w.work, lock, delay, [&] { return w.stop; });
    }
  }
}

// The first n of the queue end: delivered, or dead-lettered with `why`.
void DeliveryPool::finish(Worker& w, std::size_t n, bool delivered, const std::string& why) {
  const int64_t at = now();
  w.batch = 0;
  for (std::size_t i = 0; i < n && !w.queue.empty(); ++i) {
    Delivery& d = w.queue.front();
    if (delivered) {
      ++w.stats.delivered;
      if (outbox_ && d.in_outbox) outbox_->done(d.id, d.destination);
    } else {
      ++w.stats.dead_letters;
      dead_letters_.fetch_add(1, std::memory_order_relaxed);
      if (outbox_ && d.in_outbox) outbox_->dead_letter(d, why, at);
    }
    w.queue.pop_front();
  }
  w.changed.notify_all();
}

void DeliveryPool::delivered(Worker& w, std::size_t n) {
  w.circuit.success();
  if (w.failing) {
    report_(fmt::format("delivery: {}: delivering again", w.dest.target()));
    w.failing = false;
  }
  finish(w, n, true, "");
}

// Another 4xx: it answered, so the receiver is up; the request is what it
// refuses, and a retry would not change that.
void DeliveryPool::refused(Worker& w, std::size_t n, const HttpResponse& resp) {
  ++w.stats.failed_attempts;
  w.circuit.success();
  const std::string what = outcome_text(resp);
  report_(fmt::format("delivery: {}: {}; not retried (a {} will not change): {} record{} dead-lettered",
                      w.dest.target(), what, resp.status, n, n == 1 ? "" : "s"));
  finish(w, n, false, what);
}

// No answer, 5xx, 408, 429: the batch is tried again after the returned
// delay (0: nothing to wait for, those of the batch that have been retried
// for retry_for were dead-lettered, the others form the next batch).
int64_t DeliveryPool::failed(Worker& w, std::size_t n, const HttpResponse& resp, uint64_t random) {
  ++w.stats.failed_attempts;
  const int64_t after = now();
  w.circuit.failure(after);
  const std::string what = outcome_text(resp);
  uint32_t attempts = 0;
  std::size_t expired = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Delivery& d = w.queue[i];
    ++d.attempts;
    attempts = std::max(attempts, d.attempts);
    if (outbox_ && d.in_outbox) outbox_->tried(d);
    if (after - d.created_ms >= options_.retry.give_up_after_ms) ++expired;
  }
  if (expired > 0) {
    give_up_expired(w, n, what, attempts, after);
    return 0;
  }
  const int64_t delay = next_delay_ms(options_.retry, attempts, resp.retry_after_ms, random);
  ++w.unreported;
  if (!w.failing || after - w.reported_ms >= kReportEveryMs) {
    report_(fmt::format("delivery: {}: {}; retrying in {} ({} failed attempt{} so far){}", w.dest.target(), what,
                        seconds(delay), w.unreported, w.unreported == 1 ? "" : "s",
                        outbox_ ? "" : "; without --state, a restart loses what waits"));
    w.reported_ms = after;
    w.unreported = 0;
    w.failing = true;
  }
  return delay;
}

void DeliveryPool::give_up_expired(Worker& w, std::size_t n, const std::string& what, uint32_t attempts,
                                   int64_t after) {
  std::size_t expired = 0;
  const std::string why = fmt::format("{} (gave up after {} attempts)", what, attempts);
  std::deque<Delivery> kept;
  for (std::size_t i = 0; i < n; ++i) {
    Delivery& d = w.queue[i];
    if (after - d.created_ms >= options_.retry.give_up_after_ms) {
      ++expired;
      ++w.stats.dead_letters;
      dead_letters_.fetch_add(1, std::memory_order_relaxed);
      if (outbox_ && d.in_outbox) outbox_->dead_letter(d, why, after);
    } else {
      kept.push_back(std::move(d));
    }
  }
  report_(fmt::format("delivery: {}: {}; gave up after {} attempts over {}: {} record{} dead-lettered", w.dest.target(),
                      what, attempts, seconds(options_.retry.give_up_after_ms), expired, expired == 1 ? "" : "s"));
  w.queue.erase(w.queue.begin(), w.queue.begin() + static_cast<std::ptrdiff_t>(n));
  w.queue.insert(w.queue.begin(), std::make_move_iterator(kept.begin()), std::make_move_iterator(kept.end()));
  w.batch = 0;
  w.changed.notify_all();
}

void DeliveryPool::unblock() {
  unblocked_.store(true, std::memory_order_release);
  // An add() waiting for room in a full outbox goes on, past the bound: what
  // is decided while stopping is still journaled.
  if (outbox_) outbox_->stop_waiting();
  for (auto& w : workers_) {
    std::lock_guard lock(w->mu);
    w->changed.notify_all();
  }
}

DeliveryPool::Pending DeliveryPool::drain(std::chrono::milliseconds within) {
  const int64_t deadline = clock_.steady_ms() + within.count();
  Pending left;
  for (auto& w : workers_) {
    std::unique_lock lock(w->mu);
    clock_.wait_until(w->changed, lock, deadline, [&] { return w->queue.empty() || w->stop; });
    for (const Delivery& d : w->queue) ++(d.in_outbox ? left.kept : left.lost);
  }
  return left;
}

std::vector<DestinationStats> DeliveryPool::stats() const {
  std::vector<DestinationStats> out;
  for (const auto& w : workers_) {
    std::lock_guard lock(w->mu);
    DestinationStats s = w->stats;
    s.pending = w->queue.size();
    out.push_back(std::move(s));
  }
  return out;
}

uint64_t DeliveryPool::dead_letters() const { return dead_letters_.load(std::memory_order_relaxed); }

}  // namespace swthrottle::delivery
