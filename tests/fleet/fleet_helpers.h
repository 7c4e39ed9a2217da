// Helpers the fleet tests share: requests built in one line, a connection
// to a test redis-server, HGETALL as a map, a FleetClient's options and the
// lines it reports, and a FakeClock's waiting fleet thread.
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fleet/credentials.h"
#include "fleet/endpoint.h"
#include "fleet/fleet_client.h"
#include "fleet/redis_connection.h"
#include "fleet/request.h"
#include "fleet/scripts.h"
#include "support/fake_clock.h"
#include "support/process.h"
#include "support/redis_server.h"

namespace swthrottle::test::fleet {

using swthrottle::fleet::Op;
using swthrottle::fleet::Reply;
using swthrottle::fleet::Request;

// A test's reply timeout: only a broken server reaches it, so it is generous
// (the largest scripts, 600 buckets of 64 events, under a sanitizer on two
// busy cores, once took over 2 s).
inline constexpr std::chrono::milliseconds kTimeout{10000};
inline constexpr int64_t kTtl = 60'000;

inline swthrottle::fleet::Address address_of(const RedisServer& server) {
  auto e = swthrottle::fleet::parse_endpoint(server.url());
  REQUIRE(e);
  REQUIRE(e->servers.size() == 1);
  return e->servers[0];
}

// The default user's password ("": none).
inline swthrottle::fleet::Credentials password(std::string p) {
  swthrottle::fleet::Credentials c;
  c.password = std::move(p);
  return c;
}

// One "host": a connection and its Scripts.
struct Host {
  swthrottle::fleet::RedisConnection conn;
  swthrottle::fleet::Scripts scripts;

  explicit Host(const RedisServer& server, const std::string& pw = "") {
    REQUIRE_MESSAGE(conn.connect(address_of(server), 0, kTimeout, password(pw)), conn.error());
  }
  Reply run(const Request& r) {
    std::vector<Reply> replies;
    const bool ok = scripts.run(conn, std::span(&r, 1), replies);
    REQUIRE_MESSAGE(ok, conn.error());
    REQUIRE(replies.size() == 1);
    return replies[0];
  }
  std::vector<Reply> run(const std::vector<Request>& rs) {
    std::vector<Reply> replies;
    REQUIRE_MESSAGE(scripts.run(conn, rs, replies), conn.error());
    return replies;
  }
};

inline Request throttle(const std::string& key, uint32_t B, int64_t bucket, int64_t now, uint64_t limit) {
  Request r;
  r.op = Op::Throttle;
  r.hash_key = key;
  r.shape = {B, 1000, 1, kTtl};
  r.bucket = bucket;
  r.now_bucket = now;
  r.limit = limit;
  return r;
}

inline Request alert(const std::string& key, uint32_t B, uint32_t E, int64_t bucket, int64_t now, uint64_t events) {
  Request r;
  r.op = Op::Alert;
  r.hash_key = key;
  r.shape = {B, 1000, E, kTtl};
  r.bucket = bucket;
  r.now_bucket = now;
  r.events = events;
  return r;
}

inline Request claim(const std::string& key, int64_t t_ms, int64_t cooldown_ms, const std::string& episode) {
  Request r;
  r.op = Op::Claim;
  r.hash_key = key;
  r.shape = {10, 1000, 1, kTtl};
  r.t_ms = t_ms;
  r.cooldown_ms = cooldown_ms;
  r.episode = episode;
  return r;
}

inline Request resolve(const std::string& key, const std::string& episode) {
  Request r;
  r.op = Op::Resolve;
  r.hash_key = key;
  r.shape = {10, 1000, 1, kTtl};
  r.episode = episode;
  return r;
}

inline Request read(const std::string& key, uint32_t B, uint32_t E, int64_t now) {
  Request r;
  r.op = Op::Read;
  r.hash_key = key;
  r.shape = {B, 1000, E, kTtl};
  r.now_bucket = now;
  return r;
}

using Fields = std::map<std::string, std::string>;

// HGETALL key as a map (field names and values never hold a newline here).
inline Fields hgetall(RedisServer& server, const std::string& key) {
  const std::string text = server.cli({"HGETALL", key});
  Fields out;
  std::stringstream ss(text);
  for (std::string field, value; std::getline(ss, field) && std::getline(ss, value);) out[field] = value;
  return out;
}

inline std::vector<uint64_t> counts(const Reply& r) {
  return std::vector<uint64_t>(r.counts.begin(), r.counts.begin() + r.ncounts);
}

// A FleetClient's options for `url`, with a request timeout (also hiredis's
// socket timeout) of `timeout`.
inline swthrottle::fleet::FleetClientOptions client_options(const std::string& url,
                                                            std::chrono::milliseconds timeout = kTimeout) {
  swthrottle::fleet::FleetClientOptions o;
  auto e = swthrottle::fleet::parse_endpoint(url);
  REQUIRE(e);
  o.endpoint = *e;
  o.timeout = timeout;
  return o;
}

// A Throttle of window swt:{test:<key>} (B = 10, 1 s buckets), Y = `limit`.
inline Request throttle_of(const std::string& key, uint64_t limit = 1000) {
  Request r = throttle("swt:{test:" + key + "}", 10, 5, 5, limit);
  r.shape.ttl_ms = 600'000;
  return r;
}

// The lines a FleetClient reports, kept for the test's thread to look at.
struct ReportedLines {
  std::mutex mu;
  std::vector<std::string> all;
  swthrottle::fleet::FleetClient::Report sink() {
    return [this](const std::string& line) {
      std::lock_guard lock(mu);
      all.push_back(line);
    };
  }
  bool any(const std::string& part) {
    std::lock_guard lock(mu);
    for (const auto& l : all)
      if (l.find(part) != std::string::npos) return true;
    return false;
  }
};

// Lets the fleet thread run until it waits on the clock again, so that a
// step the test then takes is the one it means (FakeClock::waiting()); the
// short real pause is for a look at "nothing happened", a negative.
inline void settle(const FakeClock& clock) {
  REQUIRE(poll_until([&] { return clock.waiting() > 0; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace swthrottle::test::fleet
