// Fleet windows on a Redis Cluster (DESIGN.md §8.3, §8.9; man page: FLEET):
// cluster-enabled redis-servers joined by `redis-cli --cluster create`, all
// started by the test on loopback ports of their own
// (support/redis_cluster.h). Each window goes to its slot's primary, one
// pipeline per primary; MOVED corrects the map, ASK is followed once; a
// primary lost to a failover is one on_unreachable episode, after which
// its promoted replica serves the slots.
#include <doctest/doctest.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "fleet_helpers.h"
#include "fleet_hosts.h"

#include "fleet/cluster_server.h"
#include "fleet/key_slot.h"
#include "support/process.h"
#include "support/redis_cluster.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::fleet::ClusterServer;
using swthrottle::fleet::FleetClientOptions;
using swthrottle::fleet::key_slot;
using swthrottle::fleet::Op;
using swthrottle::fleet::Reply;
using swthrottle::fleet::Request;
using swthrottle::test::ClusterOptions;
using swthrottle::test::poll_until;
using swthrottle::test::Process;
using swthrottle::test::RedisCluster;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;
using namespace swthrottle::test::fleet;

Request alert_request(const std::string& key) {
  Request r;
  r.op = Op::Alert;
  r.hash_key = "swt:{cluster-test:" + key + "}";
  r.shape = {10, 1000, 1, 600'000};
  r.bucket = r.now_bucket = 5;
  r.events = 1;
  return r;
}

// The node that holds `hash_key` (-1: none).
int holder(RedisCluster& c, const std::string& hash_key) {
  int at = -1;
  for (std::size_t i = 0; i < c.size(); ++i)
    if (c.node(i).pid() > 0 && c.node(i).cli({"EXISTS", hash_key}) == "1") at = static_cast<int>(i);
  return at;
}

const char* const kPerPart = R"toml(
[[rule]]
name = "budget"
kind = "throttle"
threshold = "1000 per 1h"
key = "{part}"
fleet = "exact"
[[rule.event]]
name = "error"
match = 'ERROR part=(?P<part>\w+)'
)toml";

}  // namespace

TEST_CASE("fleet cluster: each window on its slot's primary, every primary in one run") {
  RedisCluster c;
  ClusterServer server(client_options(c.url()));
  REQUIRE_MESSAGE(server.connect(), server.error());
  CHECK(server.slot_map().uncovered() == 0);
  CHECK(server.slot_map().primaries().size() == 3);
  std::vector<Request> requests;
  for (int k = 0; k < 30; ++k) requests.push_back(alert_request("k" + std::to_string(k)));
  std::vector<Reply> replies;
  REQUIRE(server.run(requests, replies));
  std::set<int> holders;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    CAPTURE(requests[i].hash_key);
    CHECK(replies[i].ok);
    CHECK(replies[i].counts[0] == 1);
    const int at = holder(c, requests[i].hash_key);
    CHECK(at == c.owner_of(key_slot(requests[i].hash_key)));
    holders.insert(at);
  }
  CHECK(holders.size() == 3);
  CHECK(server.redirects() == 0);
}

TEST_CASE("fleet cluster: a slot moved by hand: ASK followed once, then MOVED corrects the map") {
  RedisCluster c;
  ClusterServer server(client_options(c.url()));
  REQUIRE_MESSAGE(server.connect(), server.error());
  const Request r = alert_request("moving");
  const uint16_t slot = key_slot(r.hash_key);
  const int from = c.owner_of(slot);
  REQUIRE(from >= 0);
  const std::size_t to = static_cast<std::size_t>((from + 1) % 3);
  std::vector<Reply> replies;
  REQUIRE(server.run({&r, 1}, replies));
  CHECK(replies[0].counts[0] == 1);
  // Migrating: the key has gone to `to`, the slot still belongs to `from`.
  const std::string s = std::to_string(slot);
  REQUIRE(c.node(to).cli({"CLUSTER", "SETSLOT", s, "IMPORTING", c.node_id(static_cast<std::size_t>(from))}) == "OK");
  REQUIRE(c.node(static_cast<std::size_t>(from)).cli({"CLUSTER", "SETSLOT", s, "MIGRATING", c.node_id(to)}) == "OK");
  REQUIRE(c.node(static_cast<std::size_t>(from))
              .cli({"MIGRATE", "127.0.0.1", std::to_string(c.node(to).port()), r.hash_key, "0", "5000"}) == "OK");
  REQUIRE(server.run({&r, 1}, replies));
  CHECK(replies[0].ok);
  CHECK(replies[0].counts[0] == 2);  // counted once, where the key is
  CHECK(server.redirects() == 1);
  // ASK moves one request, not the slot.
  CHECK(server.slot_map().primaries()[static_cast<std::size_t>(server.slot_map().primary_of(slot))].port ==
        c.node(static_cast<std::size_t>(from)).port());
  for (std::size_t i = 0; i < c.size(); ++i) c.node(i).cli({"CLUSTER", "SETSLOT", s, "NODE", c.node_id(to)});
  REQUIRE(server.run({&r, 1}, replies));
  CHECK(replies[0].counts[0] == 3);
  CHECK(server.redirects() == 2);
  CHECK(server.slot_map().primaries()[static_cast<std::size_t>(server.slot_map().primary_of(slot))].port ==
        c.node(to).port());
  REQUIRE(server.run({&r, 1}, replies));  // straight there now
  CHECK(replies[0].counts[0] == 4);
  CHECK(server.redirects() == 2);
  CHECK(c.node(to).cli({"HGET", r.hash_key, "s:0"}) == "4");
}

TEST_CASE("fleet cluster: 8 hosts x 5,000 offers, an exact throttle of Y = 1,000 per key: exactly 1,000 each") {
  RedisCluster c;
  TempDir dir;
  const std::string rules = rules_file(dir, c.url(), kPerPart);
  const std::vector<std::string> parts = {"api", "db", "web", "queue", "auth", "cache"};
  std::vector<std::string> logs;
  for (int h = 0; h < 8; ++h) {
    std::string log;
    for (int i = 0; i < 5000; ++i) log += host_log(1, "ERROR part=" + parts[(i + h) % parts.size()], 0, i);
    logs.push_back(std::move(log));
  }
  const auto results = run_hosts(rules, logs);
  std::vector<int> passed(parts.size(), 0);
  for (const RunResult& r : results) {
    for (std::size_t p = 0; p < parts.size(); ++p) passed[p] += count_lines(r.out, "ERROR part=" + parts[p] + " ");
    CHECK(stat(r.err, "stats: fleet:", "unanswered") == 0);
  }
  for (std::size_t p = 0; p < parts.size(); ++p) {
    CAPTURE(parts[p]);
    CHECK(passed[p] == 1000);
  }
  // The six windows live on more than one primary.
  std::set<int> holders;
  for (std::size_t i = 0; i < c.size(); ++i)
    if (!c.node(i).cli({"KEYS", "swt:{test:budget:*"}).empty()) holders.insert(static_cast<int>(i));
  CHECK(holders.size() >= 2);
}

TEST_CASE("fleet cluster: a slot resharded while hosts write: every count once, nothing decided alone") {
  RedisCluster c;
  TempDir dir;
  // Y far above what is offered: every line passes and counts, so the
  // windows' counts must equal the lines, whatever moved meanwhile.
  std::string rule = kPerPart;
  rule.replace(rule.find("1000 per 1h"), 11, "1000000 per 1h");
  const std::string rules = rules_file(dir, c.url(), rule);
  std::vector<Process> hosts = spawn_hosts(4, rules);
  int next = 0;
  auto feed = [&] {
    for (std::size_t h = 0; h < hosts.size(); ++h)
      REQUIRE(hosts[h].write_stdin(host_log(25, "ERROR part=api", 0, next) + host_log(25, "ERROR part=db", 0, next)));
    next += 25;
  };
  feed();
  std::string api_key;
  REQUIRE(poll_until([&] {
    api_key = c.get_anywhere({"KEYS", "swt:{test:budget:*:api}"});
    return api_key != "(nil)";
  }));
  const uint16_t slot = key_slot(api_key);
  const int from = c.owner_of(slot);
  REQUIRE(from >= 0);
  const std::size_t to = static_cast<std::size_t>((from + 1) % 3);
  c.move_slot(slot, to, feed);  // lines flow before, during and after the keys move
  feed();
  const auto results = finish_hosts(hosts);
  for (const RunResult& r : results) {
    CAPTURE(r.err);
    CHECK(stat(r.err, "stats: fleet:", "unanswered") == 0);
    CHECK(stat(r.err, "stats: fleet:", "errors") == 0);
  }
  CHECK(c.owner_of(slot) == static_cast<int>(to));
  CHECK(c.node(to).cli({"HGET", api_key, "s:0"}) == std::to_string(hosts.size() * static_cast<std::size_t>(next)));
  const std::string db_key = c.get_anywhere({"KEYS", "swt:{test:budget:*:db}"});
  CHECK(c.get_anywhere({"HGET", db_key, "s:0"}) == std::to_string(hosts.size() * static_cast<std::size_t>(next)));
}

TEST_CASE("fleet cluster: kill -9 of a primary under load: one episode, the replica serves, at most Y plus the bound") {
  ClusterOptions co;
  co.replicas = 1;
  RedisCluster c(co);
  TempDir dir;
  const std::string rules = rules_file(dir, c.url(), kPerPart, "on_unreachable = \"closed\"\ntimeout = \"500ms\"\n");
  std::vector<Process> hosts = spawn_hosts(8, rules);
  int next = 0;
  auto feed = [&](int n) {
    for (auto& h : hosts) REQUIRE(h.write_stdin(host_log(n, "ERROR part=api", 0, next)));
    next += n;
  };
  feed(200);  // 1,600 offers: the window is full
  std::string key;
  REQUIRE(poll_until([&] {
    key = c.get_anywhere({"KEYS", "swt:{test:budget:*:api}"});
    return key != "(nil)" && c.get_anywhere({"HGET", key, "s:0"}) == "1000";
  }));
  const uint16_t slot = key_slot(key);
  const int old = c.owner_of(slot);
  REQUIRE(old >= 0);
  c.node(static_cast<std::size_t>(old)).kill9();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int now = -1;
  while (now < 0 && std::chrono::steady_clock::now() < until) {
    feed(20);  // lines keep coming while the cluster fails the primary over
    now = c.settled(slot, old);
  }
  REQUIRE(now >= 0);
  for (auto& h : hosts)
    CHECK(h.read_stderr_until([](const std::string& e) { return e.find("reachable again") != std::string::npos; }));
  feed(200);
  const auto results = finish_hosts(hosts);
  int passed = 0;
  uint64_t unconfirmed = 0;
  for (const RunResult& r : results) {
    passed += count_lines(r.out, "ERROR part=api");
    unconfirmed += stat(r.err, "stats: fleet:", "unconfirmed");
    CHECK(stat(r.err, "stats: fleet:", "degraded") == 1);
    CHECK(stat(r.err, "stats: fleet:", "failovers") == 1);
    CHECK(r.err.find("failover from 127.0.0.1:" + std::to_string(c.node(static_cast<std::size_t>(old)).port()) +
                     " to 127.0.0.1:" + std::to_string(c.node(static_cast<std::size_t>(now)).port())) !=
          std::string::npos);
  }
  MESSAGE("passed " << passed << ", counts the failover may have lost " << unconfirmed);
  CHECK(passed >= 1000);
  CHECK(passed <= 1000 + static_cast<int>(unconfirmed));
  CHECK(!c.node(static_cast<std::size_t>(now)).cli({"HGET", key, "s:0"}).empty());
}
