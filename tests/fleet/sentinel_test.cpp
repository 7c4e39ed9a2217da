// Fleet windows on a Sentinel-managed Redis (DESIGN.md §8.9; man page:
// FLEET): redis-sentinel watching a primary and two replicas, all started by
// the test on loopback ports of their own (support/redis_sentinel.h). The
// client asks the sentinels for the primary, asks again when it fails or is
// made a replica, and connects to a new one the moment Sentinel announces
// it; a failover is one on_unreachable episode, and what it may have lost is
// counted.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fleet_helpers.h"
#include "fleet_hosts.h"

#include "fleet/fleet_client.h"
#include "fleet/sentinel_server.h"
#include "support/fake_clock.h"
#include "support/process.h"
#include "support/redis_sentinel.h"
#include "support/temp_dir.h"
#include "support/test_daemon.h"

namespace {

using swthrottle::fleet::FleetClient;
using swthrottle::fleet::FleetClientOptions;
using swthrottle::fleet::Op;
using swthrottle::fleet::Reply;
using swthrottle::fleet::Request;
using swthrottle::fleet::SentinelServer;
using swthrottle::test::FakeClock;
using swthrottle::test::free_port;
using swthrottle::test::poll_until;
using swthrottle::test::Process;
using swthrottle::test::RedisSentinelGroup;
using swthrottle::test::RunResult;
using swthrottle::test::SentinelGroupOptions;
using swthrottle::test::TempDir;
using namespace swthrottle::test::fleet;

// How many ROLE commands the first primary has run (INFO commandstats).
long role_calls(RedisSentinelGroup& g) {
  const std::string stats = g.server(0).cli({"INFO", "commandstats"});
  const auto at = stats.find("cmdstat_role:calls=");
  return at == std::string::npos ? 0 : std::stol(stats.substr(at + 19));
}

const char* const kBudget = R"toml(
[[rule]]
name = "budget"
kind = "throttle"
threshold = "1000 per 1h"
fleet = "exact"
[[rule.event]]
name = "error"
match = 'ERROR'
)toml";

// The window of kBudget on server `i` ("" when it has none).
std::string budget_count(RedisSentinelGroup& g, std::size_t i) {
  const std::string key = g.server(i).cli({"KEYS", "swt:{test:budget:*"});
  return key.empty() || key.find('\n') != std::string::npos ? "" : g.server(i).cli({"HGET", key, "s:0"});
}

// Eight hosts with an exact throttle of Y = 1000 per hour (one window) and
// on_unreachable = "closed": 200 lines each fill the window; then lines keep
// coming while `fail` fails the primary over, until the sentinels name
// another; then, once every host has found it, 200 lines more each.
std::vector<RunResult> failover_under_load(RedisSentinelGroup& g, const std::function<void()>& fail) {
  TempDir dir;
  const std::string rules = rules_file(dir, g.url(), kBudget, "on_unreachable = \"closed\"\ntimeout = \"500ms\"\n");
  std::vector<Process> hosts = spawn_hosts(8, rules);
  int next = 0;
  auto feed = [&](int n) {
    for (auto& h : hosts) REQUIRE(h.write_stdin(host_log(n, "ERROR disk full", 0, next)));
    next += n;
  };
  feed(200);
  REQUIRE(poll_until([&] { return budget_count(g, 0) == "1000"; }));
  fail();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (g.primary() == 0 && std::chrono::steady_clock::now() < until) feed(20);
  const int now = g.wait_failover(0);
  CAPTURE(now);
  for (auto& h : hosts)
    CHECK(h.read_stderr_until([](const std::string& e) { return e.find("failover from") != std::string::npos; }));
  feed(200);
  std::vector<RunResult> results = finish_hosts(hosts);
  CHECK(!budget_count(g, static_cast<std::size_t>(now)).empty());  // the new primary holds the window
  return results;
}

// The bounds of a failover, over every host's output and --stats.
void check_failover_bounds(const std::vector<RunResult>& results) {
  int passed = 0;
  uint64_t unconfirmed = 0;
  for (const RunResult& r : results) {
    passed += count_lines(r.out, "ERROR disk full");
    unconfirmed += stat(r.err, "stats: fleet:", "unconfirmed");
    CHECK(stat(r.err, "stats: fleet:", "failovers") == 1);
    CHECK(stat(r.err, "stats: fleet:", "degraded") <= 1);  // one episode at most
    CHECK(count_lines(r.err, "unreachable (") <= 1);
    CHECK(stat(r.err, "stats: fleet:", "errors") == 0);
  }
  MESSAGE("passed " << passed << ", counts a failover may have lost " << unconfirmed);
  CHECK(passed >= 1000);
  CHECK(passed <= 1000 + static_cast<int>(unconfirmed));  // the stated bound
}

}  // namespace

TEST_CASE("fleet sentinel: the primary the sentinels name, asked in turn past one that is down") {
  RedisSentinelGroup g;
  FleetClientOptions o = client_options(g.url({"127.0.0.1:" + std::to_string(free_port())}));
  SentinelServer server(o, swthrottle::system_clock());
  REQUIRE_MESSAGE(server.connect(), server.error());
  REQUIRE(server.primary());
  CHECK(server.primary()->port == g.server(0).port());
  std::vector<Reply> replies;
  const std::vector<Request> requests = {throttle_of("a"), throttle_of("b")};
  REQUIRE(server.run(requests, replies));
  CHECK(replies[0].ok);
  CHECK(replies[0].passed);
  CHECK(g.server(0).cli({"HGET", "swt:{test:a}", "s:0"}) == "1");
}

TEST_CASE("fleet sentinel: no sentinel knows the name, or none answers: said, and decided locally") {
  SentinelGroupOptions so;
  so.replicas = 0;
  RedisSentinelGroup g(so);
  std::string url = g.url();
  url.replace(url.rfind('/'), std::string::npos, "/othername");
  FakeClock clock;
  ReportedLines lines;
  FleetClient client(clock, client_options(url), lines.sink());
  CHECK(client.stats().degraded_now.load());
  CHECK(lines.any("unreachable (no sentinel names the primary othername (sentinel 127.0.0.1:" +
                  std::to_string(g.sentinel_port(0)) + " knows no primary named othername))"));
}

TEST_CASE("fleet sentinel: +switch-master ends the backoff: the new primary at once, the clock unmoved") {
  RedisSentinelGroup g;
  FakeClock clock;
  ReportedLines lines;
  FleetClient client(clock, client_options(g.url()), lines.sink());
  REQUIRE_FALSE(client.stats().degraded_now.load());
  Reply reply;
  REQUIRE(client.ask(throttle_of("switch"), reply));
  g.server(0).kill9();
  // The next request finds the primary gone: degraded, and the fake clock's
  // backoff never runs out by itself.
  CHECK_FALSE(client.ask(throttle_of("switch"), reply));
  REQUIRE(poll_until([&] { return client.stats().degraded_now.load(); }));
  const int64_t frozen = clock.steady_ms();
  const int now = g.wait_failover(0);
  CHECK(poll_until([&] { return !client.stats().degraded_now.load(); }, std::chrono::seconds(20)));
  CHECK(clock.steady_ms() == frozen);
  CHECK(lines.any("failover from 127.0.0.1:" + std::to_string(g.server(0).port()) +
                  " to 127.0.0.1:" + std::to_string(g.server(static_cast<std::size_t>(now)).port())));
  CHECK(client.stats().failovers.load() == 1);
  CHECK(client.stats().degraded.load() == 1);
  REQUIRE(client.ask(throttle_of("switch"), reply));
  CHECK(g.server(static_cast<std::size_t>(now)).cli({"EXISTS", "swt:{test:switch}"}) == "1");
}

TEST_CASE("fleet sentinel: SENTINEL FAILOVER under load: at most Y plus what the failover may have lost") {
  RedisSentinelGroup g;
  const auto results = failover_under_load(g, [&] {
    CHECK(g.sentinel_cli({"SENTINEL", "FAILOVER", RedisSentinelGroup::kName}) == "OK");
  });
  check_failover_bounds(results);
}

TEST_CASE("fleet sentinel: kill -9 of the primary under load: one episode, then the replica Sentinel promotes") {
  RedisSentinelGroup g;
  const auto results = failover_under_load(g, [&] { g.server(0).kill9(); });
  check_failover_bounds(results);
  for (const RunResult& r : results) CHECK(stat(r.err, "stats: fleet:", "degraded") == 1);
}

TEST_CASE("fleet sentinel: the sentinels' password from SWTHROTTLE_SENTINEL_PASSWORD, the servers' ACL user") {
  SentinelGroupOptions so;
  so.sentinel_password = "sentinel-secret";
  so.user = "swt";
  so.password = "server-secret";
  so.server_args = {"--user", "swt", "on", ">server-secret", "~*", "&*", "+@all"};
  RedisSentinelGroup g(so);
  FakeClock clock;
  {
    ReportedLines lines;
    FleetClientOptions o = client_options(g.url());
    FleetClient client(clock, o, lines.sink());
    CHECK(client.stats().degraded_now.load());
    CHECK(lines.any("NOAUTH: the server wants a password (SWTHROTTLE_SENTINEL_PASSWORD)"));
  }
  ReportedLines lines;
  FleetClientOptions o = client_options(g.url());
  o.sentinel_credentials = swthrottle::fleet::Credentials{"", "sentinel-secret", "SWTHROTTLE_SENTINEL"};
  o.credentials = swthrottle::fleet::Credentials{"swt", "server-secret", "SWTHROTTLE_REDIS"};
  FleetClient client(clock, o, lines.sink());
  REQUIRE_FALSE(client.stats().degraded_now.load());
  Reply reply;
  REQUIRE(client.ask(throttle_of("acl"), reply));
  CHECK(g.server(0).cli({"HGET", "swt:{test:acl}", "s:0"}) == "1");
  for (const auto& l : lines.all) CHECK(l.find("secret") == std::string::npos);
}

TEST_CASE("fleet sentinel: a failover counts what no replica had acknowledged, and only that") {
  RedisSentinelGroup g;
  FakeClock clock;
  ReportedLines lines;
  FleetClient client(clock, client_options(g.url()), lines.sink());
  REQUIRE_FALSE(client.stats().degraded_now.load());
  Reply reply;
  for (int i = 0; i < 7; ++i) REQUIRE(client.ask(throttle_of("acked"), reply));
  // A look at ROLE (a second of the client's clock): the 7 are marked at the
  // primary's offset then. Once both replicas have acknowledged past it
  // (WAIT after a write of the test's own, later), the next look confirms
  // them. The looks are seen in the primary's count of ROLE calls.
  const long connected = role_calls(g);
  settle(clock);
  clock.advance(1'000);
  REQUIRE(poll_until([&] { return role_calls(g) == connected + 1; }));
  REQUIRE(g.server(0).cli_all({{"SET", "fence", "1"}, {"WAIT", "2", "5000"}}) == std::vector<std::string>{"OK", "2"});
  settle(clock);
  clock.advance(1'000);
  REQUIRE(poll_until([&] { return role_calls(g) == connected + 2; }));
  // Three passes after the last look: unconfirmed, whatever replication did.
  for (int i = 0; i < 3; ++i) REQUIRE(client.ask(throttle_of("late"), reply));
  g.server(0).kill9();
  CHECK_FALSE(client.ask(throttle_of("late"), reply));
  g.wait_failover(0);
  // The failover's line is reported after both counts are raised: waited
  // for first, it orders them (the lines' mutex) before the checks.
  REQUIRE(poll_until([&] { return lines.any("failover from "); }, std::chrono::seconds(20)));
  CHECK(client.stats().failovers.load() == 1);
  CHECK(client.stats().unconfirmed.load() == 3);
  CHECK(lines.any(": 3 counts this host wrote had not reached a replica, and may be lost"));
}
