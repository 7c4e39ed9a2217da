// DeliveryPool: records on their way to webhooks and Alertmanagers (man
// page: DELIVERY). One worker thread per destination, each with its own
// queue, HTTP client, retry schedule and circuit, so that a dead receiver
// holds up nobody else.
//
// Contract:
// - submit() routes each alert, resolved and summary record to the
//   destinations that take it (every_rule ones, those the record's rule
//   names by URL, named ones whose `rules` name it; of the record's type:
//   takes()), encoded for each (encoder.h; Alertmanager: FiringAlerts).
//   With an outbox, the deliveries are in it, fsync'd, before submit()
//   returns.
// - Messages name a destination by its label (its name, or its URL's
//   origin), and whatever a receiver or libcurl says is shown without the
//   destination's secrets (redact.h).
// - Each delivery ends once: delivered (2xx), or dead-lettered (another
//   4xx, or still failing after retry_for) with one stderr line per
//   destination and minute. Connection errors, 5xx, 408 and 429 are retried
//   with backoff and jitter, honouring Retry-After.
// - Bounded: at most queue_capacity deliveries wait per destination;
//   submit() blocks while a destination's queue is full (the input is
//   slowed, nothing dropped). With an outbox, its own bound applies too.
// - Order: per destination, deliveries go in submit order; a retried one
//   holds up those behind it (a webhook that reorders alerts and their
//   resolves would mislead).
// - Alertmanager: firing alerts are posted again every `repost`
//   (alertmanager_alert.h), outside the outbox: a lost repost is replaced by
//   the next.
//
// Thread-safety: submit() from any thread (deciders, the timer); stats() and
// drain() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "delivery/alertmanager_alert.h"
#include "delivery/circuit.h"
#include "delivery/delivery.h"
#include "delivery/delivery_stats.h"
#include "delivery/destination.h"
#include "delivery/encoder.h"
#include "delivery/http_client.h"
#include "delivery/outbox.h"
#include "delivery/retry_policy.h"
#include "engine/record.h"
#include "util/clock.h"

namespace swthrottle::delivery {

struct DeliveryOptions {
  std::vector<Destination> destinations;
  RetryPolicy retry;
  std::chrono::milliseconds timeout{10'000};  // one request
  std::size_t batch = 1;                      // webhook records per POST (> 1: a JSON array)
  std::size_t queue_capacity = 10'000;        // per destination
  uint32_t circuit_failures = 5;              // failed attempts in a row that open a circuit
  int64_t circuit_open_ms = 10'000;
  AlertmanagerOptions alertmanager;  // its labels are every preset's [delivery] labels
  std::string host;                  // {host}, PagerDuty's source, Opsgenie's
  uint64_t seed = 0;                 // the jitter's; 0: from std::random_device
};

class DeliveryPool {
 public:
  using Report = std::function<void(const std::string&)>;  // one stderr line, without "swthrottle: "

  // `outbox` (null: none) and `clock` outlive the pool. Deliveries the
  // outbox recovered from a previous run are queued first, in their order.
  // Every time the pool reads (a record's age, retry_for, the report
  // interval, the circuit) and every wait (backoff, Retry-After, the
  // circuit's reopening, Alertmanager reposts, drain) is the clock's, so a
  // test's FakeClock drives them.
  DeliveryPool(DeliveryOptions options, Outbox* outbox, Report report, const Clock& clock = system_clock());
  ~DeliveryPool();  // stops the workers; what is undelivered stays in the outbox
  DeliveryPool(const DeliveryPool&) = delete;
  DeliveryPool& operator=(const DeliveryPool&) = delete;

  void submit(std::span<const engine::Record> records);

  // The run is stopping (SIGINT/SIGTERM): submit() no longer waits for room
  // (in a queue or in the outbox), so that a receiver that is down cannot
  // hold the stop up. Deliveries already submitted keep going until drain().
  void unblock();

  // The deliveries still pending: those the outbox holds are kept for the
  // next run; the others (no outbox, or one that did not take them: a full
  // disk) are lost, and so are those submit() could not queue any more
  // because the pool had stopped. After stop(), for good.
  struct Pending {
    std::size_t kept = 0;
    std::size_t lost = 0;
    std::size_t total() const { return kept + lost; }
  };
  Pending pending() const;
  // End of the run: waits until every queue is empty, or `within` passes
  // (on the clock); returns pending() then. A request in flight may still
  // end either way: stop() first for the final count.
  Pending drain(std::chrono::milliseconds within);
  // Stops the workers and waits for them (a request in flight ends within
  // its timeout). What is undelivered stays in the outbox. Idempotent; the
  // destructor calls it.
  void stop();

  std::vector<DestinationStats> stats() const;
  uint64_t dead_letters() const;

 private:
  struct Worker;
  void queue_recovered();
  // Encoding: the delivery of record r to w's destination (nullopt: it
  // takes no such record).
  std::optional<Delivery> encode(Worker& w, const engine::Record& r, const std::string& id, int64_t t);
  void journal(std::vector<Delivery>& batch);
  void enqueue(Worker& w, Delivery&& d);
  // The worker's loop and its steps (the service): reposts, batching, the
  // outcome of a request.
  void run(Worker& w);
  bool repost(Worker& w, HttpClient& http, std::unique_lock<std::mutex>& lock, int64_t t);
  void drop_gone(Worker& w);
  std::size_t take_batch(Worker& w) const;
  void finish(Worker& w, std::size_t n, bool delivered, const std::string& why);
  void delivered(Worker& w, std::size_t n);
  void refused(Worker& w, std::size_t n, const HttpResponse& resp);
  int64_t failed(Worker& w, std::size_t n, const HttpResponse& resp, uint64_t random);
  void give_up_expired(Worker& w, std::size_t n, const std::string& what, uint32_t attempts, int64_t after);
  // The destinations a record goes to (indices), from its rule.
  std::vector<uint32_t> route(const engine::Record& r);
  int64_t now() const { return clock_.wall_ms(); }

  DeliveryOptions options_;
  EncodeContext context_;
  const Clock& clock_;
  Outbox* outbox_;
  Report report_;
  std::vector<std::unique_ptr<Worker>> workers_;
  // One submit() at a time: an alert and its resolve from two deciders
  // reach a destination's firing list and queue in one order.
  std::mutex submit_mu_;
  std::mutex route_mu_;
  std::map<const config::Rule*, std::vector<uint32_t>> routes_;  // guarded by route_mu_
  std::atomic<uint64_t> dead_letters_{0};
  // The outbox refused records (a full or read-only disk): said once, at the
  // first refusal of an episode, and again when it takes records again.
  std::atomic<bool> outbox_refusing_{false};
  std::atomic<bool> unblocked_{false};
  // Deliveries submit() made while the pool stopped, which no queue took
  // and no outbox holds.
  std::atomic<uint64_t> lost_at_stop_{0};
};

}  // namespace swthrottle::delivery
