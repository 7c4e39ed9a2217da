#include "fleet/endpoint.h"

#include <doctest/doctest.h>

using swthrottle::fleet::Address;
using swthrottle::fleet::parse_endpoint;
using swthrottle::fleet::Topology;

TEST_CASE("fleet endpoint: TCP URLs, with and without port and database") {
  auto e = parse_endpoint("redis://127.0.0.1");
  REQUIRE(e);
  CHECK(e->topology == Topology::Single);
  REQUIRE(e->servers.size() == 1);
  CHECK(e->servers[0].host == "127.0.0.1");
  CHECK(e->servers[0].port == 6379);
  CHECK(e->db == 0);
  CHECK(e->servers[0].unix_path.empty());
  CHECK(e->servers[0].label() == "127.0.0.1:6379");

  e = parse_endpoint("redis://cache.internal:6380/3");
  REQUIRE(e);
  CHECK(e->servers[0].host == "cache.internal");
  CHECK(e->servers[0].port == 6380);
  CHECK(e->db == 3);

  e = parse_endpoint("redis://[::1]:7000/");
  REQUIRE(e);
  CHECK(e->servers[0].host == "::1");
  CHECK(e->servers[0].port == 7000);
  CHECK(e->db == 0);
  CHECK(e->servers[0].label() == "[::1]:7000");
}

TEST_CASE("fleet endpoint: unix sockets") {
  auto e = parse_endpoint("unix:/run/redis/redis.sock");
  REQUIRE(e);
  CHECK(e->servers[0].unix_path == "/run/redis/redis.sock");
  CHECK(e->servers[0].host.empty());
  CHECK(e->servers[0].label() == "unix:/run/redis/redis.sock");
  e = parse_endpoint("unix:/tmp/r.sock?db=2");
  REQUIRE(e);
  CHECK(e->servers[0].unix_path == "/tmp/r.sock");
  CHECK(e->db == 2);
}

TEST_CASE("fleet endpoint: Sentinel: the sentinels (port 26379 by default), the primary's name, a database") {
  auto e = parse_endpoint("redis+sentinel://10.0.0.1,10.0.0.2:26380,[::1]/mymaster");
  REQUIRE(e);
  CHECK(e->topology == Topology::Sentinel);
  CHECK(e->master == "mymaster");
  CHECK(e->db == 0);
  REQUIRE(e->servers.size() == 3);
  CHECK(e->servers[0] == Address{"10.0.0.1", 26379, ""});
  CHECK(e->servers[1] == Address{"10.0.0.2", 26380, ""});
  CHECK(e->servers[2] == Address{"::1", 26379, ""});
  e = parse_endpoint("redis+sentinel://s1:5000/cache-2.eu/4");
  REQUIRE(e);
  CHECK(e->master == "cache-2.eu");
  CHECK(e->db == 4);
}

TEST_CASE("fleet endpoint: Cluster: the nodes to ask for the slot map (port 6379 by default)") {
  auto e = parse_endpoint("redis+cluster://10.0.0.1:7000,10.0.0.2");
  REQUIRE(e);
  CHECK(e->topology == Topology::Cluster);
  REQUIRE(e->servers.size() == 2);
  CHECK(e->servers[0] == Address{"10.0.0.1", 7000, ""});
  CHECK(e->servers[1] == Address{"10.0.0.2", 6379, ""});
  CHECK(parse_endpoint("redis+cluster://10.0.0.1:7000/"));
}

TEST_CASE("fleet endpoint: what is refused, and why") {
  auto why = [](const char* url) {
    auto e = parse_endpoint(url);
    REQUIRE_FALSE(e);
    return e.error().what;
  };
  CHECK(why("redis://h:99999") == "redis: port \"99999\" out of range (1-65535)");
  CHECK(why("redis://h:") == "redis: port \"\" out of range (1-65535)");
  CHECK(why("redis://:6379") == "redis: no host in \"redis://:6379\"");
  CHECK(why("redis://u:secret@h") ==
        "redis: no password in the URL (it would show in ps); set SWTHROTTLE_REDIS_PASSWORD");
  CHECK(why("redis+sentinel://u:secret@h/m") ==
        "redis: no password in the URL (it would show in ps); set SWTHROTTLE_REDIS_PASSWORD");
  CHECK(why("rediss://h") ==
        "redis: TLS (rediss://) is not supported: use a unix socket, or a TLS tunnel to a local port");
  CHECK(why("http://h") ==
        "redis: \"http://h\" is neither redis://HOST[:PORT][/DB], unix:PATH, redis+sentinel://HOST:PORT,.../NAME "
        "nor redis+cluster://HOST:PORT,...");
  CHECK(why("unix:") == "redis: \"unix:\" needs a socket path (unix:/run/redis/redis.sock)");
  CHECK(why("redis://h/x") == "redis: database \"x\" is not a number from 0 to 65535");
  CHECK(why("redis://a,b") == "redis: redis:// names one server; several are redis+sentinel:// or redis+cluster://");
  CHECK(why("redis+sentinel://s1,s2") ==
        "redis: \"redis+sentinel://s1,s2\" names no primary: redis+sentinel://HOST:PORT,HOST:PORT/NAME");
  CHECK(why("redis+sentinel://s1/") == "redis: primary name \"\" must be 1 to 128 letters, digits, '.', '_' or '-'");
  CHECK(why("redis+sentinel://s1/my master") ==
        "redis: primary name \"my master\" must be 1 to 128 letters, digits, '.', '_' or '-'");
  CHECK(why("redis+sentinel://s1,:1/m") == "redis: no host in \"redis+sentinel://s1,:1/m\"");
  CHECK(why("redis+cluster://n1/2") == "redis: a cluster has database 0 only: no /DB in \"redis+cluster://n1/2\"");
  CHECK(why("redis+cluster://n1,n2:0") == "redis: port \"0\" out of range (1-65535)");
}
