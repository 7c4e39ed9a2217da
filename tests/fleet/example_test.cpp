// examples/fleet: the README's fleet section, run as it shows it: two hosts
// one after the other against one real Redis, then one host without Redis.
#include <doctest/doctest.h>

#include <string>

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
