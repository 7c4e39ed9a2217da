#include "delivery/delivery_pool.h"

#include <algorithm>
#include <map>
#include <random>

#include <fmt/format.h>

#include "delivery/encoder.h"
#include "delivery/http_client.h"
#include "delivery/record_body.h"
#include "delivery/record_fields.h"
#include "delivery/redact.h"
#include "delivery/request_builder.h"
#include "output/record_id.h"

namespace swthrottle::delivery {

namespace {

// Alertmanager alerts per POST, at most (its API takes an array).
constexpr std::size_t kAlertmanagerBatch = 64;
// How often a failing destination says so on stderr, at most.
constexpr int64_t kReportEveryMs = 60'000;

// What came back, for a message: without the destination's secrets (a
// receiver may echo the token it refuses; libcurl may name the URL).
std::string outcome_text(const HttpResponse& r, const std::vector<std::string>& secrets) {
  if (r.status == 0) return redact(r.error.empty() ? std::string("no response") : r.error, secrets);
  // Redacted whole, then cut: a cut first could leave the head of a secret.
  std::string body = redact(r.body.substr(0, r.body.find('\n')), secrets).substr(0, 120);
  return body.empty() ? fmt::format("HTTP {}", r.status) : fmt::format("HTTP {}: {}", r.status, body);
}

std::string seconds(int64_t ms) { return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000.0); }

// Does d take the records of `rule`: every rule's, or those of
// the rules that name it (a rule's own URL; a named destination's `rules`)?
bool takes_rule(const Destination& d, const config::Rule& rule) {
  if (d.every_rule) return true;
  if (!d.name.empty()) return std::find(d.rules.begin(), d.rules.end(), rule.name) != d.rules.end();
  const auto& own = d.preset == Preset::Alertmanager ? rule.alertmanagers : rule.webhooks;
  return std::find(own.begin(), own.end(), d.url) != own.end();
}

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

  uint32_t number = 0;               // dest.number()
  std::vector<std::string> secrets;  // dest.secrets(): never in a message

  Worker(Destination d, uint32_t i, const DeliveryOptions& o)
      : dest(std::move(d)), index(i), circuit(o.circuit_failures, o.circuit_open_ms) {
    number = dest.number();
    secrets = dest.secrets();
    stats.label = dest.label;
    stats.preset = to_string(dest.preset);
    stats.number = number;
    if (dest.preset == Preset::Alertmanager) firing = std::make_unique<FiringAlerts>(o.alertmanager);
  }
};

DeliveryPool::DeliveryPool(DeliveryOptions options, Outbox* outbox, Report report, const Clock& clock)
    : options_(std::move(options)), clock_(clock), outbox_(outbox), report_(std::move(report)) {
  context_.labels = options_.alertmanager.labels;
  context_.host = options_.host;
  if (options_.seed == 0) options_.seed = (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  options_.batch = std::max<std::size_t>(1, options_.batch);
  options_.queue_capacity = std::max<std::size_t>(1, options_.queue_capacity);
  unique_labels(options_.destinations);
  for (Destination& d : options_.destinations) {
    const auto i = static_cast<uint32_t>(workers_.size());
    workers_.push_back(std::make_unique<Worker>(std::move(d), i, options_));
  }
  if (outbox_) queue_recovered();
  for (auto& w : workers_) {
    Worker* raw = w.get();
    raw->thread = std::thread([this, raw] { run(*raw); });
  }
}

DeliveryPool::~DeliveryPool() { stop(); }

// A previous run's deliveries go first, to the destination of their number.
// Those for a destination this run does not have stay in the outbox: it
// keeps no URL (a secret, often), so only a run that has it can send them.
void DeliveryPool::queue_recovered() {
  std::map<std::string, std::size_t> elsewhere;  // by label
  std::size_t queued = 0;
  for (Delivery& d : outbox_->recovered()) {
    auto it = std::find_if(workers_.begin(), workers_.end(), [&](const auto& w) { return w->number == d.destination; });
    if (it == workers_.end()) {
      ++elsewhere[d.label.empty() ? std::string(to_string(d.kind)) : d.label];
      continue;
    }
    Worker& w = **it;
    d.in_outbox = true;
    d.label = w.dest.label;
    ++w.stats.queued;
    w.queue.push_back(std::move(d));
    ++queued;
  }
  if (queued > 0)
    report_(fmt::format("delivery: {} record{} the last run did not deliver {} sent first", queued,
                        queued == 1 ? "" : "s", queued == 1 ? "is" : "are"));
  for (const auto& [label, n] : elsewhere)
    report_(
        fmt::format("delivery: {} record{} in the outbox for {}, which this run does not deliver to, stay there "
                    "for a run that does",
                    n, n == 1 ? "" : "s", label));
}

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
  for (const auto& w : workers_)
    if (takes_rule(w->dest, *r.rule)) out.push_back(w->index);
  routes_.emplace(r.rule, out);
  return out;
}

std::optional<Delivery> DeliveryPool::encode(Worker& w, const engine::Record& r, const std::string& id, int64_t t) {
  Delivery d;
  d.id = id;
  d.destination = w.number;
  d.kind = w.dest.preset;
  d.label = w.dest.label;
  d.created_ms = t;
  if (w.dest.preset != Preset::Alertmanager) {
    std::optional<Encoded> e = delivery::encode(w.dest, r, id, context_);
    if (!e) return std::nullopt;
    d.body = std::move(e->body);
    d.path = std::move(e->path);
    return d;
  }
  AmAlert alert;
  const std::vector<std::string> fields = record_fields(r, id, context_.host);
  {
    std::lock_guard lock(w.mu);
    if (!w.firing->on_record(r, fields, t, alert)) return std::nullopt;
  }
  d.body = alertmanager_alert_body(alert);
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
      if (!takes(workers_[i]->dest.preset, r.type)) continue;
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
  if (w.stop) {  // shutting down: the outbox keeps it, if it took it
    if (!d.in_outbox) lost_at_stop_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
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
  req.headers = w.dest.headers;
  req.headers.push_back("Content-Type: application/json");
  req.body = alertmanager_body(due);
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
    const std::size_t most = w.dest.preset == Preset::Alertmanager ? kAlertmanagerBatch : options_.batch;
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
    report_(fmt::format("delivery: {}: delivering again", w.dest.label));
    w.failing = false;
  }
  finish(w, n, true, "");
}

// Another 4xx: it answered, so the receiver is up; the request is what it
// refuses, and a retry would not change that.
void DeliveryPool::refused(Worker& w, std::size_t n, const HttpResponse& resp) {
  ++w.stats.failed_attempts;
  w.circuit.success();
  const std::string what = outcome_text(resp, w.secrets);
  report_(fmt::format("delivery: {}: {}; not retried (a {} will not change): {} record{} dead-lettered", w.dest.label,
                      what, resp.status, n, n == 1 ? "" : "s"));
  finish(w, n, false, what);
}

// No answer, 5xx, 408, 429: the batch is tried again after the returned
// delay (0: nothing to wait for, those of the batch that have been retried
// for retry_for were dead-lettered, the others form the next batch).
int64_t DeliveryPool::failed(Worker& w, std::size_t n, const HttpResponse& resp, uint64_t random) {
  ++w.stats.failed_attempts;
  const int64_t after = now();
  w.circuit.failure(after);
  const std::string what = outcome_text(resp, w.secrets);
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
    report_(fmt::format("delivery: {}: {}; retrying in {} ({} failed attempt{} so far){}", w.dest.label, what,
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
  report_(fmt::format("delivery: {}: {}; gave up after {} attempts over {}: {} record{} dead-lettered", w.dest.label,
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
  for (auto& w : workers_) {
    std::unique_lock lock(w->mu);
    clock_.wait_until(w->changed, lock, deadline, [&] { return w->queue.empty() || w->stop; });
  }
  return pending();
}

DeliveryPool::Pending DeliveryPool::pending() const {
  Pending left;
  left.lost = lost_at_stop_.load(std::memory_order_relaxed);
  for (const auto& w : workers_) {
    std::lock_guard lock(w->mu);
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
