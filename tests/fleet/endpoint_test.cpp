#include "fleet/endpoint.h"

#include <doctest/doctest.h>

using swthrottle::fleet::parse_endpoint;

TEST_CASE("fleet endpoint: TCP URLs, with and without port and database") {
  auto e = parse_endpoint("redis://127.0.0.1");
  REQUIRE(e);
  CHECK(e->host == "127.0.0.1");
  CHECK(e->port == 6379);
  CHECK(e->db == 0);
  CHECK(e->unix_path.empty());

  e = parse_endpoint("redis://cache.internal:6380/3");
  REQUIRE(e);
  CHECK(e->host == "cache.internal");
  CHECK(e->port == 6380);
  CHECK(e->db == 3);

  e = parse_endpoint("redis://[::1]:7000/");
  REQUIRE(e);
  CHECK(e->host == "::1");
  CHECK(e->port == 7000);
  CHECK(e->db == 0);
}

TEST_CASE("fleet endpoint: unix sockets") {
  auto e = parse_endpoint("unix:/run/redis/redis.sock");
  REQUIRE(e);
  CHECK(e->unix_path == "/run/redis/redis.sock");
  CHECK(e->host.empty());
  e = parse_endpoint("unix:/tmp/r.sock?db=2");
  REQUIRE(e);
  CHECK(e->unix_path == "/tmp/r.sock");
  CHECK(e->db == 2);
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
  CHECK(why("rediss://h") ==
        "redis: TLS (rediss://) is not supported: use a unix socket, or a TLS tunnel to a local port");
  CHECK(why("http://h") == "redis: \"http://h\" is neither redis://HOST[:PORT][/DB] nor unix:PATH");
  CHECK(why("unix:") == "redis: \"unix:\" needs a socket path (unix:/run/redis/redis.sock)");
  CHECK(why("redis://h/x") == "redis: database \"x\" is not a number from 0 to 65535");
}
