// examples/fleet: the guide's fleet section (docs/GUIDE.md), run as it shows it: two hosts
// one after the other against one real Redis, then one host without Redis.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/redis_server.h"

namespace {

using swthrottle::test::RedisServer;
using swthrottle::test::run_swthrottle;

const std::string kDir = std::string(SWTHROTTLE_SOURCE_DIR) + "/examples/fleet/";

}  // namespace

TEST_CASE("examples/fleet: a paging budget and an OOM alert shared by two hosts") {
  RedisServer redis;
  auto host = [&](const std::string& name) {
    return run_swthrottle(
        {"-r", kDir + "rules.toml", "--fleet-redis", redis.url(), "--fleet-host", name, kDir + name + ".log"});
  };
  const auto web1 = host("web-1");
  CHECK(web1.exit_status == 0);
  CHECK(web1.err.empty());
  CHECK(web1.out ==
        "2026-11-21T10:00:03Z web-1 app: write /var/lib/app/q.db: No space left on device\n"
        "2026-11-21T10:00:14Z web-1 app: write /var/lib/app/q.db: No space left on device\n"
        "2026-11-21T10:00:33Z web-1 app: write /var/lib/app/q.db: No space left on device\n");
  const auto web2 = host("web-2");
  CHECK(web2.exit_status == 0);
  CHECK(web2.err.empty());
  CHECK(web2.out ==
        "swthrottle: alert oom-fleet count=6 threshold=6 window=1m suppressed=0 time=2026-11-21T10:00:24.000Z: 6 OOM "
        "kills across the fleet within 1m\n"
        "swthrottle: summary page-disk-full suppressed=3 first=2026-11-21T10:00:05.000Z "
        "last=2026-11-21T10:00:40.000Z window=10m time=2026-11-21T10:02:31.000Z\n"
        "swthrottle: resolved oom-fleet count=0 threshold=6 window=1m time=2026-11-21T10:02:31.000Z\n");
}

TEST_CASE("examples/fleet: without Redis, each host decides on its own windows") {
  const auto web2 = run_swthrottle({"-r", kDir + "rules.toml", "--fleet-redis", "unix:/nonexistent/redis.sock",
                                    "--fleet-host", "web-2", kDir + "web-2.log"});
  CHECK(web2.exit_status == 0);
  CHECK(web2.out ==
        "2026-11-21T10:00:05Z web-2 app: write /var/lib/app/q.db: No space left on device\n"
        "2026-11-21T10:00:21Z web-2 app: write /var/lib/app/q.db: No space left on device\n"
        "2026-11-21T10:00:40Z web-2 app: write /var/lib/app/q.db: No space left on device\n");
  CHECK(web2.err ==
        "swthrottle: fleet: redis unix:/nonexistent/redis.sock unreachable (No such file or directory); deciding by "
        "on_unreachable = local\n");
}

namespace {

std::string unit_value(const std::string& unit, const std::string& key) {
  std::string value;
  std::size_t at = 0;
  while ((at = unit.find("\n" + key + "=", at)) != std::string::npos) {
    at += key.size() + 2;
    value = unit.substr(at, unit.find('\n', at) - at);  // the last one wins
  }
  return value;
}

}  // namespace

TEST_CASE("examples/fleet/swthrottle-fleet.conf: the service's ExecStart with fleet options that swthrottle takes") {
  const std::string dropin = swthrottle::test::read_file(kDir + "swthrottle-fleet.conf");
  const std::string service =
      swthrottle::test::read_file(std::string(SWTHROTTLE_SOURCE_DIR) + "/examples/swthrottle.service");
  std::string base = unit_value(service, "ExecStart");
  const std::string binary = "/usr/local/bin/swthrottle ";
  REQUIRE(base.find(binary) != std::string::npos);
  base.insert(base.find(binary) + binary.size(), "$SWTHROTTLE_FLEET_ARGS ");
  CHECK(unit_value(dropin, "ExecStart") == base);             // the same command, fleet options added
  CHECK(dropin.find("\nExecStart=\n") != std::string::npos);  // the base unit's ExecStart is reset first
  CHECK(dropin.find("\nEnvironmentFile=-/etc/swthrottle/redis.env\n") != std::string::npos);
  std::string env = unit_value(dropin, "Environment");
  const std::string prefix = "SWTHROTTLE_FLEET_ARGS=\"";
  REQUIRE(env.rfind(prefix, 0) == 0);
  env = env.substr(prefix.size(), env.size() - prefix.size() - 1);
  // The options as swthrottle reads them (%H, the host name, made a name here).
  std::vector<std::string> args;
  for (std::size_t at = 0; at < env.size();) {
    const std::size_t end = std::min(env.find(' ', at), env.size());
    args.push_back(env.substr(at, end - at) == "%H" ? "web-7" : env.substr(at, end - at));
    at = end + 1;
  }
  args.insert(args.end(), {"--rule", std::string(SWTHROTTLE_SOURCE_DIR) + "/examples/rules-ssh.toml", "--check"});
  const auto r = run_swthrottle(args);
  CHECK(r.exit_status == 0);
  CHECK(r.err.empty());
}

TEST_CASE("examples/fleet: --check shows [fleet] and each rule's mode") {
  const auto r = run_swthrottle({"--check", "-r", kDir + "rules.toml", "--fleet-host", "web-1"});
  CHECK(r.exit_status == 0);
  CHECK(r.out.find("\nfleet: redis unix:/run/redis/redis-server.sock, namespace example, host web-1, timeout 200ms, "
                   "sync 250ms, on_unreachable local\n") != std::string::npos);
  CHECK(r.out.find("throttle 3 per 10m, 10 buckets of 1m, efficient mode, fleet exact\n") != std::string::npos);
}
