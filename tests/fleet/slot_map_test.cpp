// Cluster routing, the pure part (DESIGN.md §8.3): the CRC16 of a key's hash
// tag, checked against a real cluster-enabled redis-server's CLUSTER
// KEYSLOT; the slot map; MOVED and ASK answers read.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "fleet/key_slot.h"
#include "fleet/slot_map.h"
#include "support/redis_server.h"
#include "support/seed.h"

using swthrottle::fleet::Address;
using swthrottle::fleet::crc16_xmodem;
using swthrottle::fleet::key_slot;
using swthrottle::fleet::parse_redirect;
using swthrottle::fleet::SlotMap;

TEST_CASE("fleet key slot: CRC16/XMODEM of the check string, and hash tags") {
  CHECK(crc16_xmodem("123456789") == 0x31C3);  // the catalogue's check value of CRC-16/XMODEM
  CHECK(crc16_xmodem("") == 0);
  CHECK(key_slot("foo") == 12182);  // Redis's documentation: CLUSTER KEYSLOT foo
  CHECK(key_slot("{user1000}.following") == key_slot("user1000"));
  CHECK(key_slot("{user1000}.followers") == key_slot("{user1000}.following"));
  CHECK(key_slot("foo{}{bar}") == key_slot("foo{}{bar}"));  // an empty first tag: the whole key
  CHECK(key_slot("foo{}{bar}") != key_slot("bar"));
  CHECK(key_slot("foo{{bar}}zap") == key_slot("{bar"));  // the tag is "{bar"
  CHECK(key_slot("foo{bar}{zap}") == key_slot("bar"));   // the first tag only
  CHECK(key_slot("swt:{prod:page:0123456789abcdef:}") == key_slot("prod:page:0123456789abcdef:"));
}

TEST_CASE("fleet key slot: the same slot as CLUSTER KEYSLOT of a real server, for 2000 keys") {
  swthrottle::test::RedisServerOptions o;
  o.tcp = true;
  o.cluster = true;
  swthrottle::test::RedisServer server(o);
  const uint64_t seed = swthrottle::test::base_seed(31);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const std::string alphabet = "ab{}:x\xff\x01 0";
  for (int i = 0; i < 2000; ++i) {
    std::string key;
    const std::size_t n = rng() % 24;
    for (std::size_t k = 0; k < n; ++k) key += alphabet[rng() % alphabet.size()];
    if (i % 4 == 0) key = "swt:{ns:rule:" + std::to_string(rng()) + ":" + key + "}";
    CAPTURE(key);
    CHECK(std::to_string(key_slot(key)) == server.cli({"CLUSTER", "KEYSLOT", key}));
  }
}

TEST_CASE("fleet slot map: ranges, primaries once each, slots not served") {
  SlotMap m;
  CHECK(m.uncovered() == 16384);
  CHECK(m.primary_of(0) == -1);
  const Address a{"127.0.0.1", 7000, ""}, b{"127.0.0.1", 7001, ""};
  m.assign(0, 8191, a);
  m.assign(8192, 16383, b);
  CHECK(m.uncovered() == 0);
  CHECK(m.primaries().size() == 2);
  CHECK(m.primaries()[static_cast<std::size_t>(m.primary_of(8191))] == a);
  CHECK(m.primaries()[static_cast<std::size_t>(m.primary_of(8192))] == b);
  m.assign(100, 100, b);  // MOVED
  CHECK(m.primaries()[static_cast<std::size_t>(m.primary_of(100))] == b);
  CHECK(m.primaries().size() == 2);
  CHECK(m.serves(a));
  m.assign(0, 8191, b);
  CHECK_FALSE(m.serves(a));  // still named, no longer serving
  CHECK(m.serves(b));
}

TEST_CASE("fleet slot map: MOVED and ASK read, others not") {
  const Address from{"10.0.0.1", 7000, ""};
  auto r = parse_redirect("MOVED 3999 127.0.0.1:6381", from);
  REQUIRE(r);
  CHECK_FALSE(r->ask);
  CHECK(r->slot == 3999);
  CHECK(r->to == Address{"127.0.0.1", 6381, ""});
  r = parse_redirect("ASK 16383 ::1:7002", from);
  REQUIRE(r);
  CHECK(r->ask);
  CHECK(r->slot == 16383);
  CHECK(r->to == Address{"::1", 7002, ""});
  r = parse_redirect("MOVED 5 :7003", from);  // an unknown endpoint: the host that answered
  REQUIRE(r);
  CHECK(r->to == Address{"10.0.0.1", 7003, ""});
  for (const char* bad : {"MOVED", "MOVED 16384 h:1", "MOVED x h:1", "ASK 1 h", "ASK 1 h:0", "ASK 1 h:70000",
                          "ERR MOVED 1 h:1", "NOSCRIPT No matching script", "READONLY You can't write"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_redirect(bad, from));
  }
}
