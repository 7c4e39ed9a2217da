// FleetClient's schedule under a FakeClock (DESIGN.md §8.2, §8.9): the sync
// flushes, the reconnect backoff, the server check every 10 s and an
// asker's timeout all wait on the injected clock, so these tests move time
// with advance() instead of sleeping. Redis is real (a server each test
// starts); only the hiredis socket timeouts are real time, and each test
// sets them long enough never to be what ends a wait.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fleet/fleet_client.h"
#include "fleet/request.h"
#include "fleet_helpers.h"

#include "support/fake_clock.h"
#include "support/process.h"
#include "support/redis_server.h"

namespace {

using swthrottle::fleet::BatchSource;
using swthrottle::fleet::FleetClient;
using swthrottle::fleet::FleetClientOptions;
using swthrottle::fleet::Op;
using swthrottle::fleet::Reply;
using swthrottle::fleet::Request;
using swthrottle::test::FakeClock;
using swthrottle::test::poll_until;
using swthrottle::test::RedisServer;
using swthrottle::test::RedisServerOptions;
using namespace swthrottle::test::fleet;

// A batch source that asks one Read per flush and counts its flushes.
class CountingSource final : public BatchSource {
 public:
  void collect(std::vector<Request>& out) override {
    Request r;
    r.op = Op::Read;
    r.hash_key = "swt:{client-test}";
    r.shape = {10, 1000, 1, 60'000};
    r.now_bucket = 1;
    out.push_back(r);
    collected.fetch_add(1);
  }
  void done(std::span<const Request>, std::span<const Reply> replies, bool answered) override {
    if (answered && !replies.empty() && replies[0].ok) answered_flushes.fetch_add(1);
  }
  bool has_followups() override { return false; }

  std::atomic<int> collected{0};
  std::atomic<int> answered_flushes{0};
};

FleetClientOptions options_for(const RedisServer& redis) {
  // hiredis's socket timeouts: never what ends a wait here.
  FleetClientOptions o = client_options(redis.url(), std::chrono::milliseconds(60'000));
  o.sync = std::chrono::milliseconds(250);
  return o;
}

std::string address_label(const RedisServer& redis) {
  return swthrottle::fleet::parse_endpoint(redis.url())->servers[0].label();
}

// INFO stats' evicted_keys.
long long evicted_keys(RedisServer& redis) {
  const std::string info = redis.cli({"INFO", "stats"});
  const auto at = info.find("evicted_keys:");
  REQUIRE(at != std::string::npos);
  return std::stoll(info.substr(at + 13));
}

}  // namespace

TEST_CASE("fleet client: batch sources are flushed every `sync` of the clock, not of the wall") {
  RedisServer redis;
  FakeClock clock;
  ReportedLines lines;
  FleetClient client(clock, options_for(redis), lines.sink());
  CountingSource source;
  client.add_batch_source(&source);
  settle(clock);
  const int before = source.collected.load();
  clock.advance(249);
  settle(clock);
  CHECK(source.collected.load() == before);  // short of `sync`: no flush
  clock.advance(1);
  CHECK(poll_until([&] { return source.collected.load() == before + 1; }));
  CHECK(poll_until([&] { return source.answered_flushes.load() >= 1; }));
  clock.advance(250);
  CHECK(poll_until([&] { return source.collected.load() == before + 2; }));
  client.remove_batch_source(&source);
}

TEST_CASE("fleet client: reconnects after a backoff of the clock that doubles, from 100 ms") {
  RedisServer redis;
  redis.kill9();  // down when the client starts: degraded from the first connect
  FakeClock clock;
  ReportedLines lines;
  FleetClient client(clock, options_for(redis), lines.sink());
  CHECK(client.stats().degraded_now.load());
  CHECK(lines.any("unreachable ("));
  // Attempts at 100-150 ms, then 200-300 ms and 400-600 ms after it: all fail.
  for (const int64_t step : {150, 300, 600}) {
    settle(clock);
    clock.advance(step);
  }
  settle(clock);
  redis.restart();
  // The next attempt is 800-1200 ms of the clock after the last one: not
  // reconnected however long the wall waits, until the clock gets there.
  settle(clock);
  CHECK(client.stats().degraded_now.load());
  clock.advance(799);
  settle(clock);
  CHECK(client.stats().degraded_now.load());
  clock.advance(401);
  CHECK(poll_until([&] { return !client.stats().degraded_now.load(); }));
  CHECK(client.stats().reconnects.load() == 1);
  CHECK(poll_until([&] { return lines.any("reachable again after "); }));
}

TEST_CASE("fleet client: stop() ends the fleet thread, its stats stay, and asks after it are unanswered") {
  // The App is never destroyed, so a degraded client that was not stopped
  // would still be reconnecting while the process exits (a use after free
  // of the scripts' text under ThreadSanitizer).
  RedisServer redis;
  redis.kill9();
  FakeClock clock;
  ReportedLines lines;
  FleetClient client(clock, options_for(redis), lines.sink());
  REQUIRE(client.stats().degraded_now.load());
  settle(clock);  // the fleet thread waits out its backoff on the clock
  client.stop();
  client.stop();                // idempotent
  CHECK(clock.waiting() == 0);  // no fleet thread waits any more
  redis.restart();
  clock.advance(60'000);  // many backoffs: a running fleet thread would reconnect now
  CHECK(client.stats().degraded_now.load());
  CHECK(client.stats().reconnects.load() == 0);
  Request r;
  r.op = Op::Read;
  r.hash_key = "swt:{client-test}";
  r.shape = {10, 1000, 1, 60'000};
  Reply reply;
  CHECK_FALSE(client.ask(r, reply));
  CHECK(client.stats().unanswered.load() == 1);
}

TEST_CASE("fleet client: an asker waits `timeout` of the clock for a stopped Redis, then decides alone") {
  RedisServer redis;
  FakeClock clock;
  ReportedLines lines;
  FleetClientOptions o = options_for(redis);
  o.timeout = std::chrono::milliseconds(30'000);
  FleetClient client(clock, o, lines.sink());
  redis.pause();
  std::atomic<int> result{-1};
  std::thread asker([&] {
    Request r;
    r.op = Op::Read;
    r.hash_key = "swt:{client-test}";
    r.shape = {10, 1000, 1, 60'000};
    Reply reply;
    result = client.ask(r, reply) ? 1 : 0;
  });
  // The asker counts its request, then takes its deadline from the clock and
  // waits on it; the fleet thread is blocked reading from the stopped server.
  REQUIRE(poll_until([&] { return client.stats().asked.load() == 1; }));
  settle(clock);
  clock.advance(29'999);
  settle(clock);
  CHECK(result.load() == -1);  // 30 s of the clock: not yet
  clock.advance(1);
  asker.join();
  CHECK(result.load() == 0);
  CHECK(client.stats().timeouts.load() == 1);
  CHECK(client.stats().unanswered.load() == 1);
  redis.resume();  // the fleet thread's read gets its answer and goes on
}

TEST_CASE("fleet client: the server is looked at again every 10 s of the clock (evictions)") {
  RedisServerOptions ro;
  ro.extra_args = {"--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"};
  RedisServer redis(ro);
  FakeClock clock;
  ReportedLines lines;
  FleetClientOptions o = options_for(redis);
  o.allow_eviction = true;
  FleetClient client(clock, o, lines.sink());
  CHECK_FALSE(client.stats().degraded_now.load());
  // Fill Redis past maxmemory: it evicts.
  const std::string big(64 * 1024, 'x');
  for (int i = 0; i < 200; ++i) redis.cli({"SET", "junk:" + std::to_string(i), big});
  REQUIRE(evicted_keys(redis) > 0);
  settle(clock);
  clock.advance(9'999);
  settle(clock);
  CHECK(client.stats().evicted.load() == 0);
  CHECK_FALSE(lines.any("evicted "));
  clock.advance(1);
  // The count is raised before its line is reported: the line is waited for.
  CHECK(poll_until([&] { return client.stats().evicted.load() > 0; }));
  CHECK(poll_until([&] { return lines.any("keys: fleet windows among them start over"); }));
}

TEST_CASE(
    "fleet client: a Redis that can evict windows is refused by default, as unreachable, and allow_eviction uses it") {
  for (const std::string policy : {"allkeys-lru", "volatile-ttl"}) {
    CAPTURE(policy);
    RedisServerOptions ro;
    ro.extra_args = {"--maxmemory", "64mb", "--maxmemory-policy", policy};
    RedisServer redis(ro);
    FakeClock clock;
    {
      ReportedLines lines;
      FleetClient client(clock, options_for(redis), lines.sink());
      CHECK(client.stats().degraded_now.load());
      CHECK(lines.any("fleet: redis " + redis.url() + " unreachable (" + address_label(redis) +
                      " has maxmemory-policy " + policy +
                      ", which can evict fleet windows (they would start over, and pass or alert again); refused: "
                      "set it to noeviction, or [fleet] allow_eviction = true to accept it); deciding by "
                      "on_unreachable = local"));
      // Set right, it is taken at the next attempt.
      CHECK(redis.cli({"CONFIG", "SET", "maxmemory-policy", "noeviction"}) == "OK");
      settle(clock);
      clock.advance(150);
      CHECK(poll_until([&] { return !client.stats().degraded_now.load(); }));
      CHECK(redis.cli({"CONFIG", "SET", "maxmemory-policy", policy}) == "OK");
    }
    ReportedLines lines;
    FleetClientOptions o = options_for(redis);
    o.allow_eviction = true;
    FleetClient client(clock, o, lines.sink());
    CHECK_FALSE(client.stats().degraded_now.load());
    CHECK(lines.any("has maxmemory-policy " + policy +
                    ": under memory pressure it can evict fleet windows, which then start over (allowed by [fleet] "
                    "allow_eviction)"));
  }
}

TEST_CASE("fleet client: evictions are read after an error answer, not only every 10 s") {
  // volatile-lru: Redis evicts only keys with a TTL, such as fleet windows;
  // filled with keys without one, it evicts the windows, then answers OOM.
  RedisServerOptions ro;
  ro.extra_args = {"--maxmemory", "2mb", "--maxmemory-policy", "volatile-lru"};
  RedisServer redis(ro);
  FakeClock clock;
  ReportedLines lines;
  FleetClientOptions o = options_for(redis);
  o.allow_eviction = true;
  FleetClient client(clock, o, lines.sink());
  REQUIRE_FALSE(client.stats().degraded_now.load());
  Reply reply;
  for (int k = 0; k < 50; ++k) REQUIRE(client.ask(throttle_of("k" + std::to_string(k)), reply));
  // Keys without a TTL up to near maxmemory, then a maxmemory below what
  // is used: Redis evicts every window, and is still out of memory.
  const std::string big(100 * 1000, 'x');
  for (int i = 0; i < 20 && redis.cli({"SET", "junk:" + std::to_string(i), big}) == "OK"; ++i) {
  }
  REQUIRE(redis.cli({"CONFIG", "SET", "maxmemory", "1mb"}) == "OK");
  REQUIRE(evicted_keys(redis) == 50);
  CHECK_FALSE(client.ask(throttle_of("one more"), reply));  // OOM: decided locally
  CHECK(client.stats().errors.load() == 1);
  // The clock has not moved: the error answer itself has the count read,
  // by the fleet thread once the asker has its answer, so it is waited for
  // (in real time: no 10 s check can come while the clock stands).
  const auto evicted = static_cast<uint64_t>(evicted_keys(redis));
  CHECK(poll_until([&] { return client.stats().evicted.load() == evicted; }));
  CHECK(poll_until([&] { return lines.any("keys: fleet windows among them start over"); }));
}

TEST_CASE("fleet client: a server that wants a password says so, and which variable gives it") {
  RedisServerOptions ro;
  ro.password = "s3cret";
  RedisServer redis(ro);
  FakeClock clock;
  ReportedLines lines;
  FleetClient client(clock, options_for(redis), lines.sink());
  CHECK(client.stats().degraded_now.load());
  CHECK(
      lines.any("unreachable (NOAUTH: the server wants a password (SWTHROTTLE_REDIS_PASSWORD)); deciding by "
                "on_unreachable = local"));
  CHECK_FALSE(lines.any("s3cret"));
}
