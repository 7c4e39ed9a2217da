// DeliveryPool against real receivers on 127.0.0.1 (support/http_receiver.h):
// its contract (delivery_pool.h) checked directly, not through the binary.
//
// The pool's clock is a FakeClock: its retry waits, Retry-After, the report
// interval and retry_for move only when a test advances it, so a 2 s
// Retry-After takes one advance(2000), not two seconds. Nothing sleeps for a
// fixed time to let something happen: the tests wait for a condition with a
// deadline (receiver.wait_for, poll_until). Where a test shows that something
// does NOT happen (a submit() that stays blocked, a record a destination does
// not get), it either waits for a later event that would come after it
// (order per destination), or gives it a bounded chance to happen and checks
// that it did not.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "delivery/delivery_pool.h"
#include "support/fake_clock.h"
#include "support/http_receiver.h"
#include "support/json.h"
#include "support/process.h"
#include "support/rule_fixtures.h"

using swthrottle::delivery::DeliveryOptions;
using swthrottle::delivery::DeliveryPool;
using swthrottle::delivery::Destination;
using swthrottle::delivery::DestinationStats;
using swthrottle::delivery::Preset;
using swthrottle::engine::Record;
using swthrottle::engine::RecordType;
using swthrottle::test::delivery_record;
using swthrottle::test::FakeClock;
using swthrottle::test::HttpReceiver;
using swthrottle::test::kT0;
using swthrottle::test::parse_json;
using swthrottle::test::poll_until;
using swthrottle::test::Reply;
using namespace std::chrono_literals;

namespace {

// Moves `clock` on by `step_ms` whenever a worker waits on it (a retry's
// backoff), until `done()` holds; false when it does not within the real
// time poll_until allows.
bool advance_until(FakeClock& clock, int64_t step_ms, const std::function<bool()>& done) {
  return poll_until([&] {
    if (done()) return true;
    if (clock.waiting() > 0) clock.advance(step_ms);
    return false;
  });
}

// The Report lines of a pool (said on a worker's thread).
class Reports {
 public:
  DeliveryPool::Report sink() {
    return [this](const std::string& line) {
      std::lock_guard lock(mu_);
      lines_.push_back(line);
    };
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }
  std::size_t containing(const std::string& what) const {
    std::size_t n = 0;
    for (const std::string& l : lines())
      if (l.find(what) != std::string::npos) ++n;
    return n;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

Destination webhook(const std::string& url, bool every_rule = true) {
  Destination d;
  d.preset = Preset::Webhook;
  d.url = url;
  d.every_rule = every_rule;
  return d;
}

// One webhook destination, retries quick (10 ms at most) unless a test says
// otherwise, the jitter seeded.
DeliveryOptions one_webhook(const std::string& url) {
  DeliveryOptions o;
  o.destinations = {webhook(url)};
  o.retry.first_delay_ms = 10;
  o.retry.max_delay_ms = 10;
  o.timeout = 10s;
  o.seed = 1;
  return o;
}

// Alerts of `rule`, keyed "k0", "k1", ...: the key tells them apart at the receiver.
std::vector<Record> alerts(const swthrottle::config::Rule& rule, int from, int to) {
  std::vector<Record> out;
  for (int i = from; i < to; ++i) out.push_back(delivery_record(rule, RecordType::Alert, kT0, "k" + std::to_string(i)));
  return out;
}

// The "key" of each record a request carried, in order: one for a single
// record's object, each member's for an array. {"?"} when it is not JSON.
std::vector<std::string> keys_of(const std::string& body, bool* was_array = nullptr) {
  const auto j = parse_json(body);
  if (!j) return {"?"};
  if (was_array) *was_array = j->is_array();
  std::vector<std::string> out;
  if (j->is_array()) {
    for (const auto& member : *j) out.push_back(member.value("key", std::string("?")));
  } else {
    out.push_back(j->value("key", std::string("?")));
  }
  return out;
}

DestinationStats stats_of(const DeliveryPool& pool, std::size_t i = 0) { return pool.stats().at(i); }

}  // namespace

TEST_CASE("delivery_pool: a full queue blocks submit() until unblock(), and drain() counts the queued as lost") {
  HttpReceiver receiver;
  // Every request is held (until the receiver stops): the first delivery
  // stays in flight, and the queue behind it fills.
  receiver.otherwise(Reply(200, "", "", 60s));
  FakeClock clock(kT0);
  Reports reports;
  DeliveryOptions o = one_webhook(receiver.url("/hook"));
  o.timeout = 60s;
  constexpr std::size_t kCapacity = 3;
  o.queue_capacity = kCapacity;
  DeliveryPool pool(o, nullptr, reports.sink(), clock);
  const auto rule = swthrottle::test::make_ssh();

  // The first is taken and posted: it is still in the queue while in flight.
  const std::vector<Record> first = alerts(rule, 0, 1);
  pool.submit(first);
  REQUIRE(receiver.wait_for(1));
  // kCapacity - 1 more fit behind it; the next one does not.
  const std::vector<Record> more = alerts(rule, 1, static_cast<int>(kCapacity) + 1);
  std::future<void> submitting = std::async(std::launch::async, [&] { pool.submit(more); });
  CHECK(poll_until([&] { return stats_of(pool).queued == kCapacity; }));
  // A bounded chance to get past the bound: it must not take it.
  CHECK(submitting.wait_for(300ms) == std::future_status::timeout);
  CHECK(stats_of(pool).queued == kCapacity);
  CHECK(stats_of(pool).pending == kCapacity);
  CHECK(receiver.count() == 1);  // the worker is still on the first

  pool.unblock();
  const bool released = submitting.wait_for(10s) == std::future_status::ready;
  CHECK(released);
  if (!released) pool.stop();  // lets the blocked submit() go, so that the test ends
  submitting.get();
  CHECK(stats_of(pool).queued == kCapacity + 1);
  CHECK(stats_of(pool).delivered == 0);

  // Nothing gets through while the clock stands: all of them are pending,
  // and with no outbox, lost.
  const DeliveryPool::Pending left = pool.drain(0ms);
  CHECK(left.kept == 0);
  CHECK(left.lost == kCapacity + 1);
  CHECK(left.total() == kCapacity + 1);

  // The held request ends when the receiver stops; then the worker stops.
  receiver.stop();
  pool.stop();
}

TEST_CASE("delivery_pool: one destination gets its records in submit order, one per POST with batch 1") {
  HttpReceiver receiver;
  FakeClock clock(kT0);
  Reports reports;
  DeliveryPool pool(one_webhook(receiver.url("/hook")), nullptr, reports.sink(), clock);
  const auto rule = swthrottle::test::make_ssh();

  // In several submit() calls, and several records in one.
  constexpr int kRecords = 8;
  pool.submit(alerts(rule, 0, 1));
  pool.submit(alerts(rule, 1, 5));
  pool.submit(alerts(rule, 5, 6));
  pool.submit(alerts(rule, 6, kRecords));
  REQUIRE(poll_until([&] { return stats_of(pool).delivered == kRecords; }));
  const DeliveryPool::Pending left = pool.drain(0ms);
  CHECK(left.total() == 0);
  CHECK(stats_of(pool).delivered == kRecords);

  const auto got = receiver.requests();
  REQUIRE(got.size() == kRecords);
  for (int i = 0; i < kRecords; ++i) {
    bool array = true;
    CHECK(keys_of(got[i].body, &array) == std::vector<std::string>{"k" + std::to_string(i)});
    CHECK_FALSE(array);  // batch 1: the record's object itself
    CHECK(got[i].method == "POST");
    CHECK(got[i].path == "/hook");
  }
  const DestinationStats s = stats_of(pool);
  CHECK(s.queued == kRecords);
  CHECK(s.delivered == kRecords);
  CHECK(s.attempts == kRecords);
  CHECK(s.dead_letters == 0);
  CHECK(s.pending == 0);
}

TEST_CASE("delivery_pool: with batch 3, records go as JSON arrays of up to 3, in submit order") {
  HttpReceiver receiver;
  // The first POST is refused with Retry-After: 2, so that what is submitted
  // meanwhile waits behind it and forms full batches.
  receiver.respond({Reply(503, "Retry-After: 2")});
  FakeClock clock(kT0);
  Reports reports;
  DeliveryOptions o = one_webhook(receiver.url("/hook"));
  o.batch = 3;
  DeliveryPool pool(o, nullptr, reports.sink(), clock);
  const auto rule = swthrottle::test::make_ssh();

  pool.submit(alerts(rule, 0, 1));
  REQUIRE(receiver.wait_for(1));
  constexpr int kRecords = 7;
  pool.submit(alerts(rule, 1, kRecords));
  // The worker waits out the Retry-After: 2 s of its clock, not of ours.
  REQUIRE(poll_until([&] { return clock.waiting() > 0 && stats_of(pool).failed_attempts == 1; }));
  CHECK(receiver.count() == 1);
  clock.advance(1'999);
  // A bounded chance to go early: it must not take it.
  CHECK_FALSE(receiver.wait_for(2, 50ms));
  clock.advance(1);
  REQUIRE(poll_until([&] { return stats_of(pool).delivered == kRecords; }));

  const auto got = receiver.requests();
  REQUIRE(got.size() >= 2);
  // A batch keeps its members while it is retried: the retry is [k0] again,
  // under the same Idempotency-Key.
  // A batch of one is an array too: a receiver reads one shape.
  bool first_is_array = false;
  CHECK(keys_of(got[0].body, &first_is_array) == std::vector<std::string>{"k0"});
  CHECK(first_is_array);
  CHECK(keys_of(got[1].body) == std::vector<std::string>{"k0"});
  CHECK(got[0].header("Idempotency-Key") == got[1].header("Idempotency-Key"));
  std::vector<std::string> after_k0;
  std::size_t largest = 0;
  for (std::size_t i = 2; i < got.size(); ++i) {
    bool array = false;
    const std::vector<std::string> keys = keys_of(got[i].body, &array);
    CHECK(array);  // an array however many it holds
    CHECK(keys.size() <= 3);
    largest = std::max(largest, keys.size());
    after_k0.insert(after_k0.end(), keys.begin(), keys.end());
  }
  std::vector<std::string> want;
  for (int i = 1; i < kRecords; ++i) want.push_back("k" + std::to_string(i));
  CHECK(after_k0 == want);
  CHECK(largest == 3);  // the six waiting went as full batches (two of 3)
  CHECK(stats_of(pool).attempts == got.size());
}

TEST_CASE("delivery_pool: a 400 is dead-lettered at once with one report line, and is not retried") {
  HttpReceiver receiver;
  receiver.respond({Reply(400, "", "no such hook")});
  FakeClock clock(kT0);
  Reports reports;
  DeliveryPool pool(one_webhook(receiver.url("/hook")), nullptr, reports.sink(), clock);
  const auto rule = swthrottle::test::make_ssh();

  pool.submit(alerts(rule, 0, 1));
  REQUIRE(poll_until([&] { return pool.dead_letters() == 1; }));
  // The next record is what the receiver gets next: k0 was not tried again.
  pool.submit(alerts(rule, 1, 2));
  REQUIRE(poll_until([&] { return stats_of(pool).delivered == 1; }));
  const auto got = receiver.requests();
  REQUIRE(got.size() == 2);
  CHECK(keys_of(got[0].body) == std::vector<std::string>{"k0"});
  CHECK(keys_of(got[1].body) == std::vector<std::string>{"k1"});

  const DestinationStats s = stats_of(pool);
  CHECK(s.dead_letters == 1);
  CHECK(pool.dead_letters() == 1);
  CHECK(s.attempts == 2);
  CHECK(s.failed_attempts == 1);
  CHECK(s.pending == 0);
  // One line, naming the destination and what it said.
  const std::vector<std::string> lines = reports.lines();
  REQUIRE(lines.size() == 1);
  // Named by its origin, never by its URL.
  CHECK(lines[0].starts_with("delivery: http://127.0.0.1:" + std::to_string(receiver.port()) + ": "));
  CHECK(lines[0].find("/hook") == std::string::npos);
  CHECK(lines[0].find("HTTP 400: no such hook") != std::string::npos);
  CHECK(lines[0].find("1 record dead-lettered") != std::string::npos);
}

TEST_CASE("delivery_pool: a 503 is retried until a 200, with one report line while the wall clock stands") {
  HttpReceiver receiver;
  receiver.respond({Reply(503), Reply(503), Reply(503)});  // then 200
  FakeClock clock(kT0);
  Reports reports;
  DeliveryPool pool(one_webhook(receiver.url("/hook")), nullptr, reports.sink(), clock);
  const auto rule = swthrottle::test::make_ssh();

  pool.submit(alerts(rule, 0, 1));
  // Each retry waits its backoff (10 ms at most) on the clock.
  REQUIRE(advance_until(clock, 10, [&] { return stats_of(pool).delivered == 1; }));
  const DestinationStats s = stats_of(pool);
  CHECK(s.attempts == 4);
  CHECK(s.failed_attempts == 3);
  CHECK(s.dead_letters == 0);
  CHECK(pool.dead_letters() == 0);
  const auto got = receiver.requests();
  REQUIRE(got.size() == 4);
  for (const auto& r : got) CHECK(keys_of(r.body) == std::vector<std::string>{"k0"});
  // Three failures within one minute of the wall clock: one "retrying" line,
  // then one when it delivers again.
  CHECK(reports.containing("retrying in") == 1);
  CHECK(reports.containing("HTTP 503") == 1);
  CHECK(reports.containing("delivering again") == 1);
  CHECK(reports.lines().size() == 2);
}

TEST_CASE("delivery_pool: a destination still failing says so again once a minute of the wall clock has passed") {
  HttpReceiver receiver;
  receiver.otherwise(Reply(503));
  FakeClock clock(kT0);
  Reports reports;
  DeliveryPool pool(one_webhook(receiver.url("/hook")), nullptr, reports.sink(), clock);
  const auto rule = swthrottle::test::make_ssh();

  pool.submit(alerts(rule, 0, 1));
  REQUIRE(advance_until(clock, 10, [&] { return receiver.count() >= 3; }));
  CHECK(reports.containing("retrying in") == 1);
  CHECK(reports.containing("(1 failed attempt so far)") == 1);
  clock.advance(60'000);
  REQUIRE(advance_until(clock, 10, [&] { return reports.containing("retrying in") == 2; }));
  // The second line counts the failures since the first.
  const std::vector<std::string> lines = reports.lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[1].find("failed attempts so far") != std::string::npos);
  CHECK(lines[1].find("without --state, a restart loses what waits") != std::string::npos);
  CHECK(pool.dead_letters() == 0);
  // The pool goes first, closing its keep-alive connection: the receiver
  // then stops at once instead of waiting for it to idle out.
}

TEST_CASE("delivery_pool: a delivery still failing after retry_for on the wall clock is dead-lettered") {
  HttpReceiver receiver;
  receiver.otherwise(Reply(503));
  FakeClock clock(kT0);
  Reports reports;
  DeliveryOptions o = one_webhook(receiver.url("/hook"));
  o.retry.give_up_after_ms = 60'000;
  DeliveryPool pool(o, nullptr, reports.sink(), clock);
  const auto rule = swthrottle::test::make_ssh();

  pool.submit(alerts(rule, 0, 1));
  // Retried, short of retry_for.
  REQUIRE(advance_until(clock, 10, [&] { return receiver.count() >= 3; }));
  CHECK(pool.dead_letters() == 0);
  clock.advance(60'000);
  REQUIRE(advance_until(clock, 10, [&] { return pool.dead_letters() == 1; }));
  const DestinationStats s = stats_of(pool);
  CHECK(s.dead_letters == 1);
  CHECK(s.delivered == 0);
  CHECK(s.attempts >= 3);
  CHECK(s.pending == 0);
  CHECK(reports.containing("gave up after") == 1);
  CHECK(reports.containing("1 record dead-lettered") == 1);
}

TEST_CASE("delivery_pool: a destination named by one rule gets that rule's records only") {
  HttpReceiver own_receiver;    // named by rule "ssh-bruteforce" only
  HttpReceiver every_receiver;  // every rule's
  FakeClock clock(kT0);
  Reports reports;
  auto ssh = swthrottle::test::make_ssh();
  auto ratio = swthrottle::test::make_ratio();
  ssh.webhooks = {own_receiver.url("/ssh")};

  DeliveryOptions o = one_webhook(every_receiver.url("/all"));
  o.destinations.push_back(webhook(own_receiver.url("/ssh"), /*every_rule=*/false));
  DeliveryPool pool(o, nullptr, reports.sink(), clock);

  std::vector<Record> records;
  records.push_back(delivery_record(ssh, RecordType::Alert, kT0, "ssh-alert"));
  records.push_back(delivery_record(ratio, RecordType::Alert, kT0, "ratio-alert"));
  records.push_back(delivery_record(ratio, RecordType::Resolved, kT0, "ratio-resolved"));
  records.push_back(delivery_record(ssh, RecordType::Line, kT0, "ssh-line"));  // lines are not delivered
  records.push_back(delivery_record(ssh, RecordType::Summary, kT0, "ssh-summary"));
  pool.submit(records);
  // Then one more of each rule: it comes after anything submitted before it.
  std::vector<Record> last;
  last.push_back(delivery_record(ratio, RecordType::Alert, kT0 + 1, "ratio-last"));
  last.push_back(delivery_record(ssh, RecordType::Alert, kT0 + 1, "ssh-last"));
  pool.submit(last);

  auto keys_at = [](const HttpReceiver& r) {
    std::vector<std::string> out;
    for (const auto& req : r.requests()) {
      const std::vector<std::string> k = keys_of(req.body);
      out.insert(out.end(), k.begin(), k.end());
    }
    return out;
  };
  REQUIRE(poll_until([&] { return !keys_at(own_receiver).empty() && keys_at(own_receiver).back() == "ssh-last"; }));
  REQUIRE(poll_until([&] { return !keys_at(every_receiver).empty() && keys_at(every_receiver).back() == "ssh-last"; }));
  CHECK(keys_at(own_receiver) == std::vector<std::string>{"ssh-alert", "ssh-summary", "ssh-last"});
  CHECK(keys_at(every_receiver) == std::vector<std::string>{"ssh-alert", "ratio-alert", "ratio-resolved", "ssh-summary",
                                                            "ratio-last", "ssh-last"});
  const std::vector<DestinationStats> s = pool.stats();
  REQUIRE(s.size() == 2);
  CHECK(s[0].label == "http://127.0.0.1:" + std::to_string(every_receiver.port()));
  CHECK(s[0].queued == 6);
  CHECK(s[1].label == "http://127.0.0.1:" + std::to_string(own_receiver.port()));
  CHECK(s[1].queued == 3);
}

TEST_CASE("delivery_pool: stop() is idempotent, ends a retry wait at once, and the destructor after it is fine") {
  HttpReceiver receiver;
  receiver.stop();  // connection refused: the delivery waits for its retry
  FakeClock clock(kT0);
  Reports reports;
  DeliveryOptions o = one_webhook(receiver.url("/hook"));
  o.retry.first_delay_ms = 600'000;  // a retry wait stop() must cut short
  o.retry.max_delay_ms = 600'000;
  o.queue_capacity = 1;
  // Leaked, not destroyed, if stop() hangs: the test then fails instead of hanging.
  auto* pool = new DeliveryPool(o, nullptr, reports.sink(), clock);
  const auto rule = swthrottle::test::make_ssh();
  pool->submit(alerts(rule, 0, 1));
  REQUIRE(poll_until([&] { return stats_of(*pool).failed_attempts == 1; }));

  std::promise<void> stopped;
  std::future<void> done = stopped.get_future();
  std::thread stopping([&stopped, pool] {
    pool->stop();
    pool->stop();
    stopped.set_value();
  });
  const bool in_time = done.wait_for(10s) == std::future_status::ready;
  CHECK(in_time);
  if (!in_time) {
    stopping.detach();
    return;
  }
  stopping.join();
  // Stopped: a submit() to the full queue does not wait for room.
  pool->submit(alerts(rule, 1, 3));
  CHECK(stats_of(*pool).queued == 1);
  CHECK(stats_of(*pool).pending == 1);
  // The one queued, and the two no queue took any more: without an outbox,
  // all three are lost, and said so.
  const DeliveryPool::Pending left = pool->drain(0ms);
  CHECK(left.lost == 3);
  CHECK(left.kept == 0);
  pool->stop();
  delete pool;  // stop() once more, nothing to join
}

TEST_CASE("delivery_pool: an open circuit waits on the clock for its reopening, then lets one trial through") {
  HttpReceiver receiver;
  receiver.otherwise(Reply(503));
  FakeClock clock(kT0);
  Reports reports;
  DeliveryOptions o = one_webhook(receiver.url("/hook"));
  o.circuit_failures = 2;
  o.circuit_open_ms = 10'000;
  DeliveryPool pool(o, nullptr, reports.sink(), clock);
  const auto rule = swthrottle::test::make_ssh();
  pool.submit(alerts(rule, 0, 1));
  REQUIRE(advance_until(clock, 10, [&] { return stats_of(pool).circuit_open; }));
  CHECK(receiver.count() == 2);
  clock.advance(5'000);
  CHECK_FALSE(receiver.wait_for(3, 50ms));  // still open: a bounded chance to go early
  clock.advance(5'000);
  REQUIRE(receiver.wait_for(3));  // the trial, once the circuit's 10 s have passed on the clock
}

TEST_CASE("delivery_pool: a firing alert is posted to Alertmanager again every repost interval of the clock") {
  HttpReceiver am;
  FakeClock clock(kT0);
  Reports reports;
  DeliveryOptions o;
  Destination d;
  d.preset = Preset::Alertmanager;
  d.url = am.url("");
  d.every_rule = true;
  d.headers = {"X-Scope-OrgID: team-a"};  // a named one behind a multi-tenant proxy
  o.destinations = {d};
  o.alertmanager.repost_ms = 60'000;
  o.seed = 1;
  DeliveryPool pool(o, nullptr, reports.sink(), clock);
  auto rule = swthrottle::test::make_ssh();
  rule.resolve = true;
  pool.submit(alerts(rule, 0, 1));
  REQUIRE(am.wait_for(1));
  CHECK(am.requests()[0].path == "/api/v2/alerts");
  CHECK_FALSE(am.wait_for(2, 50ms));  // nothing more while the clock stands
  clock.advance(60'000);
  REQUIRE(am.wait_for(2));
  CHECK(poll_until([&] { return stats_of(pool).reposts == 1; }));
  const auto first = parse_json(am.requests()[0].body);
  const auto again = parse_json(am.requests()[1].body);
  REQUIRE(first.has_value());
  REQUIRE(again.has_value());
  CHECK((*again)[0]["labels"] == (*first)[0]["labels"]);
  CHECK((*again)[0]["endsAt"] != (*first)[0]["endsAt"]);  // moved on by the repost
  for (const auto& r : am.requests()) CHECK(r.header("X-Scope-OrgID") == "team-a");
}
