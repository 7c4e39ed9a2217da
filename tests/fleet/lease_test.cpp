// Batched throttles' leases (DESIGN.md §8.6, §8.12), with the real RuleFleet and
// FleetClient of several "hosts" in one process against one real Redis: the
// fleet never passes more than Y per window, and no host is refused while
// fewer than Y - (H-1)k lines have passed (k: the most permits a host holds).
#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "config/rules.h"
#include "fleet/fleet_client.h"
#include "fleet/rule_fleet.h"
#include "support/process.h"
#include "support/redis_server.h"
#include "support/seed.h"

namespace {

using swthrottle::fleet::FleetClient;
using swthrottle::fleet::RuleFleet;
using swthrottle::test::RedisServer;

struct FleetHost {
  std::unique_ptr<FleetClient> client;
  std::unique_ptr<RuleFleet> fleet;
};

}  // namespace

TEST_CASE("fleet leases: at most Y per window, and no refusal before Y - (H-1)k passes") {
  RedisServer redis;
  const uint64_t Y = 200;
  auto rules = swthrottle::config::parse_rules(R"toml(
[fleet]
redis = "unix:/unused"
namespace = "lease"
[[rule]]
name = "page"
kind = "throttle"
threshold = "200 per 1m"
fleet = "batched"
[[rule.event]]
name = "e"
match = 'x'
)toml",
                                               "rules.toml");
  REQUIRE(rules.ok());
  const int H = 6;
  const uint64_t k = Y / 8;  // the most permits a host asks for at a time
  std::vector<FleetHost> hosts(H);
  for (int h = 0; h < H; ++h) {
    swthrottle::fleet::FleetClientOptions o;
    o.endpoint = *swthrottle::fleet::parse_endpoint(redis.url());
    o.timeout = std::chrono::milliseconds(2000);
    hosts[h].client = std::make_unique<FleetClient>(swthrottle::system_clock(), o, [](const std::string&) {});
    hosts[h].fleet = std::make_unique<RuleFleet>(*hosts[h].client, *rules, "h" + std::to_string(h), 1);
  }
  const uint64_t seed = swthrottle::test::base_seed(20261126);
  CAPTURE(seed);
  std::mt19937 rng(static_cast<std::mt19937::result_type>(seed));
  // Rounds of lines in one bucket: each host takes a random share; the fleet's
  // passes are counted as they happen, and the first refusal is noted.
  uint64_t passed = 0;
  int64_t first_refusal_at = -1;
  for (int line = 0; line < 2000; ++line) {
    const int h = static_cast<int>(rng() % H);
    swthrottle::engine::FleetAnswer a;
    REQUIRE(hosts[h].fleet->lease(0, "", 30'000, a));
    if (a.passed) {
      ++passed;
    } else if (first_refusal_at < 0) {
      first_refusal_at = static_cast<int64_t>(passed);
    }
  }
  CAPTURE(first_refusal_at);
  CHECK(passed <= Y);
  REQUIRE(first_refusal_at >= 0);
  CHECK(static_cast<uint64_t>(first_refusal_at) >= Y - (H - 1) * k);
  // What Redis counted: every permit granted, used or not, never over Y.
  const std::string keys = redis.cli({"KEYS", "swt:{lease:*"});
  CHECK(std::stoull(redis.cli({"HGET", keys, "s:0"})) <= Y);
}

TEST_CASE("fleet leases: after a refusal, the next lease is asked in the background, lines pass once it comes") {
  RedisServer redis;
  auto rules = swthrottle::config::parse_rules(R"toml(
[fleet]
redis = "unix:/unused"
namespace = "lease-bg"
[[rule]]
name = "page"
kind = "throttle"
threshold = "16 per 1m"
fleet = "batched"
[[rule.event]]
name = "e"
match = 'x'
)toml",
                                               "rules.toml");
  REQUIRE(rules.ok());
  swthrottle::fleet::FleetClientOptions o;
  o.endpoint = *swthrottle::fleet::parse_endpoint(redis.url());
  o.timeout = std::chrono::milliseconds(2000);
  o.sync = std::chrono::milliseconds(20);
  FleetClient client(swthrottle::system_clock(), o, [](const std::string&) {});
  RuleFleet fleet(client, *rules, "h", 1);
  swthrottle::engine::FleetAnswer a;
  int passed = 0;
  for (int i = 0; i < 40; ++i) {
    a = {};
    REQUIRE(fleet.lease(0, "", 1000, a));
    passed += a.passed ? 1 : 0;
  }
  CHECK(passed == 16);
  const uint64_t asked = client.stats().asked.load();
  // A minute on, the window is empty again: the first line does not wait for
  // Redis (suppressed while the lease is asked), and lines pass once it came.
  a = {};
  REQUIRE(fleet.lease(0, "", 61'000, a));
  CHECK_FALSE(a.passed);
  CHECK(client.stats().asked.load() == asked);  // not asked on the line's behalf
  CHECK(swthrottle::test::poll_until([&] {
    swthrottle::engine::FleetAnswer b;
    return fleet.lease(0, "", 61'000, b) && b.passed;
  }));
}
