// The fleet window scripts against one real redis-server for the file
// (DESIGN.md §8.12): each row is a request, the reply it gets and the hash it
// leaves (HGETALL), with the TTL checked in milliseconds.
#include "fleet/scripts.h"

#include <doctest/doctest.h>
#include <hiredis/hiredis.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "fleet_helpers.h"

using namespace swthrottle::test::fleet;
using swthrottle::fleet::ReplyPtr;
using swthrottle::fleet::Scripts;
using swthrottle::test::RedisServer;

namespace {

// One server for the file, started on first use (a failed start fails every
// test that needs it) and killed at exit.
RedisServer& server() {
  static RedisServer s;
  return s;
}

// Each test case its own keys.
std::string key_for(const std::string& name) { return "swt:{test:" + name + "}"; }

void check_pttl(const std::string& key) {
  const long long pttl = std::stoll(server().cli({"PTTL", key}));
  CAPTURE(key);
  CHECK(pttl > 55'000);
  CHECK(pttl <= kTtl);
}

}  // namespace

TEST_CASE("fleet scripts: advance by 1, B-1, B and 2B or more (Alert, B = 5, E = 2)") {
  Host host(server());
  const std::string key = key_for("advance");
  Request first = alert(key, 5, 2, 100, 100, 0b11);
  first.original_key = "web-01 /api/{id}";
  Reply r = host.run(first);
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.newest_bucket == 100);
  CHECK_FALSE(r.late);
  CHECK_FALSE(r.claimed);
  CHECK(counts(r) == std::vector<uint64_t>{1, 1});
  CHECK(hgetall(server(), key) ==
        Fields{{"nb", "100"}, {"100:0", "1"}, {"100:1", "1"}, {"s:0", "1"}, {"s:1", "1"}, {"k", "web-01 /api/{id}"}});
  check_pttl(key);

  // By 1: window 97..101, nothing leaves.
  r = host.run(alert(key, 5, 2, 101, 101, 0b01));
  CHECK(r.newest_bucket == 101);
  CHECK(counts(r) == std::vector<uint64_t>{2, 1});
  CHECK(hgetall(server(), key) == Fields{{"nb", "101"},
                                         {"100:0", "1"},
                                         {"100:1", "1"},
                                         {"101:0", "1"},
                                         {"s:0", "2"},
                                         {"s:1", "1"},
                                         {"k", "web-01 /api/{id}"}});

  // By B-1 = 4: window 101..105, bucket 100 leaves.
  r = host.run(alert(key, 5, 2, 105, 105, 0b10));
  CHECK(r.newest_bucket == 105);
  CHECK(counts(r) == std::vector<uint64_t>{1, 1});
  CHECK(hgetall(server(), key) ==
        Fields{{"nb", "105"}, {"101:0", "1"}, {"105:1", "1"}, {"s:0", "1"}, {"s:1", "1"}, {"k", "web-01 /api/{id}"}});

  // By B = 5: window 106..110, everything leaves; the host's now leads.
  r = host.run(alert(key, 5, 2, 108, 110, 0b01));
  CHECK(r.newest_bucket == 110);
  CHECK_FALSE(r.late);
  CHECK(counts(r) == std::vector<uint64_t>{1, 0});
  CHECK(hgetall(server(), key) == Fields{{"nb", "110"}, {"108:0", "1"}, {"s:0", "1"}, {"k", "web-01 /api/{id}"}});

  // By 2B or more, through Read: cleared, then nothing else.
  r = host.run(read(key, 5, 2, 130));
  REQUIRE(r.ok);
  CHECK(r.newest_bucket == 130);
  CHECK(counts(r) == std::vector<uint64_t>{0, 0});
  CHECK(hgetall(server(), key) == Fields{{"nb", "130"}, {"k", "web-01 /api/{id}"}});
  check_pttl(key);

  // A Read of an older now changes nothing.
  r = host.run(read(key, 5, 2, 120));
  CHECK(r.newest_bucket == 130);
  CHECK(hgetall(server(), key) == Fields{{"nb", "130"}, {"k", "web-01 /api/{id}"}});
}

TEST_CASE("fleet scripts: a partial advance takes exactly the leaving buckets off the sums") {
  Host host(server());
  const std::string key = key_for("partial");
  // B = 4, one line in each of 10..13, two events.
  for (int b = 10; b <= 13; ++b) REQUIRE(host.run(alert(key, 4, 2, b, b, b % 2 == 0 ? 0b01 : 0b11)).ok);
  CHECK(counts(host.run(read(key, 4, 2, 13))) == std::vector<uint64_t>{4, 2});
  // To 15: 10 and 11 leave (11 had both events).
  const Reply r = host.run(read(key, 4, 2, 15));
  CHECK(counts(r) == std::vector<uint64_t>{2, 1});
  CHECK(hgetall(server(), key) ==
        Fields{{"nb", "15"}, {"12:0", "1"}, {"13:0", "1"}, {"13:1", "1"}, {"s:0", "2"}, {"s:1", "1"}});
}

TEST_CASE("fleet scripts: Read of a window nobody wrote creates nothing") {
  Host host(server());
  const std::string key = key_for("read-missing");
  const Reply r = host.run(read(key, 10, 3, 500));
  REQUIRE(r.ok);
  CHECK(r.newest_bucket == 0);
  CHECK(counts(r) == std::vector<uint64_t>{0, 0, 0});
  CHECK(server().cli({"EXISTS", key}) == "0");
}

TEST_CASE("fleet scripts: late, and late fleet-wide (Throttle decides and counts at nb)") {
  Host host(server());
  const std::string key = key_for("late");
  Reply r = host.run(throttle(key, 10, 50, 50, 100));
  CHECK(r.passed);
  CHECK(r.sum == 1);
  // Older than nb but inside the window (41..50): counted in its bucket.
  r = host.run(throttle(key, 10, 45, 50, 100));
  CHECK_FALSE(r.late);
  CHECK(r.passed);
  // Older than the window: late, counted at nb.
  r = host.run(throttle(key, 10, 40, 50, 100));
  CHECK(r.late);
  CHECK(r.passed);
  CHECK(r.sum == 3);
  CHECK(r.newest_bucket == 50);
  CHECK(hgetall(server(), key) == Fields{{"nb", "50"}, {"45:0", "1"}, {"50:0", "2"}, {"s:0", "3"}});

  // Another host moved the fleet on to 60 (window 51..60).
  r = host.run(throttle(key, 10, 60, 60, 100));
  CHECK(r.sum == 1);
  CHECK(hgetall(server(), key) == Fields{{"nb", "60"}, {"60:0", "1"}, {"s:0", "1"}});
  // This host's own clock says 48: in its own window, late fleet-wide.
  r = host.run(throttle(key, 10, 48, 48, 100));
  CHECK(r.late);
  CHECK(r.passed);
  CHECK(r.newest_bucket == 60);
  CHECK(hgetall(server(), key) == Fields{{"nb", "60"}, {"60:0", "2"}, {"s:0", "2"}});
  check_pttl(key);

  // Alert: a late event adds nothing, the sums still come back.
  const std::string akey = key_for("late-alert");
  REQUIRE(host.run(alert(akey, 10, 2, 60, 60, 0b11)).ok);
  r = host.run(alert(akey, 10, 2, 48, 48, 0b11));
  REQUIRE(r.ok);
  CHECK(r.late);
  CHECK(r.newest_bucket == 60);
  CHECK(counts(r) == std::vector<uint64_t>{1, 1});
  CHECK(hgetall(server(), akey) == Fields{{"nb", "60"}, {"60:0", "1"}, {"60:1", "1"}, {"s:0", "1"}, {"s:1", "1"}});
}

TEST_CASE("fleet scripts: Throttle passes exactly min(Y, offered), and a late line is decided at nb") {
  Host host(server());
  int n = 0;
  for (const uint64_t y : {0U, 1U, 5U, 9U}) {
    for (const int offered : {0, 3, 5, 9, 20}) {
      CAPTURE(y);
      CAPTURE(offered);
      const std::string key = key_for("minY-" + std::to_string(n++));
      std::vector<Request> batch(static_cast<std::size_t>(offered), throttle(key, 10, 1000, 1000, y));
      uint64_t passed = 0;
      if (offered > 0)
        for (const Reply& r : host.run(batch)) {
          CHECK(r.ok);
          passed += r.passed ? 1 : 0;
        }
      CHECK(passed == std::min<uint64_t>(y, static_cast<uint64_t>(offered)));
    }
  }
  // Y = 2 full at nb 100; a late line (bucket 80) meets the full window.
  const std::string key = key_for("late-decided");
  host.run(std::vector<Request>(2, throttle(key, 10, 100, 100, 2)));
  Reply r = host.run(throttle(key, 10, 80, 80, 2));
  CHECK(r.late);
  CHECK_FALSE(r.passed);
  CHECK(r.sum == 2);
  CHECK(hgetall(server(), key) == Fields{{"nb", "100"}, {"100:0", "2"}, {"s:0", "2"}});
  // Once bucket 100 left the window, the late line passes and counts at nb.
  REQUIRE(host.run(read(key, 10, 1, 110)).ok);
  r = host.run(throttle(key, 10, 80, 80, 2));
  CHECK(r.late);
  CHECK(r.passed);
  CHECK(hgetall(server(), key) == Fields{{"nb", "110"}, {"110:0", "1"}, {"s:0", "1"}});
}

TEST_CASE("fleet scripts: bucket numbers near 10^13 and up to 10^14-1 stay exact field names") {
  Host host(server());
  const std::string key = key_for("big");
  const int64_t b0 = 9'999'999'999'990;  // 10^13 - 10
  Reply r = host.run(throttle(key, 600, b0, b0, 1000));
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.newest_bucket == b0);
  r = host.run(throttle(key, 600, b0 + 20, b0 + 20, 1000));  // across 10^13
  CHECK(r.newest_bucket == b0 + 20);
  CHECK(r.sum == 2);
  CHECK(hgetall(server(), key) ==
        Fields{{"nb", "10000000000010"}, {"9999999999990:0", "1"}, {"10000000000010:0", "1"}, {"s:0", "2"}});
  // B-1 later: both still in; B later than b0: b0 leaves.
  r = host.run(throttle(key, 600, b0 + 599, b0 + 599, 1000));
  CHECK(r.sum == 3);
  r = host.run(throttle(key, 600, b0 + 600, b0 + 600, 1000));
  CHECK(r.sum == 3);
  CHECK(hgetall(server(), key).count("9999999999990:0") == 0);

  const std::string top = key_for("top");
  const int64_t max = 99'999'999'999'999;
  r = host.run(throttle(top, 600, max - 1, max - 1, 10));
  REQUIRE_MESSAGE(r.ok, r.error);
  r = host.run(throttle(top, 600, max, max, 10));
  REQUIRE(r.ok);
  CHECK(r.newest_bucket == max);
  CHECK(hgetall(server(), top) ==
        Fields{{"nb", "99999999999999"}, {"99999999999998:0", "1"}, {"99999999999999:0", "1"}, {"s:0", "2"}});
  r = host.run(throttle(top, 600, max + 1, max + 1, 10));
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("bucket") != std::string::npos);
}

TEST_CASE("fleet scripts: another defhash is another hash key: windows independent") {
  Host host(server());
  const std::string a = "swt:{ns:r1:0a1b:web}";
  const std::string b = "swt:{ns:r1:9f8e:web}";
  for (int i = 0; i < 3; ++i) CHECK(host.run(throttle(a, 10, 7, 7, 3)).passed);
  CHECK_FALSE(host.run(throttle(a, 10, 7, 7, 3)).passed);
  // The other definition (B = 20, Y = 5) starts fresh and has its own fields.
  for (int i = 0; i < 5; ++i) CHECK(host.run(throttle(b, 20, 7, 7, 5)).passed);
  CHECK(hgetall(server(), a) == Fields{{"nb", "7"}, {"7:0", "3"}, {"s:0", "3"}});
  CHECK(hgetall(server(), b) == Fields{{"nb", "7"}, {"7:0", "5"}, {"s:0", "5"}});
}

TEST_CASE("fleet scripts: Claim compare-and-set, once per cooldown, with the fleet's suppressed tally") {
  Host host(server());
  // Arrival time (epoch ms) and log time (a replay far in the past): the same CAS.
  for (const int64_t t0 : {int64_t{1'764'000'000'000}, int64_t{86'400'000}}) {
    CAPTURE(t0);
    const std::string key = key_for("claim-" + std::to_string(t0));
    Reply r = host.run(claim(key, t0, 1000, "h1:1"));
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(r.claimed);
    CHECK(r.suppressed == 0);
    CHECK(hgetall(server(), key) == Fields{{"last", std::to_string(t0)}, {"ep", "h1:1"}});
    check_pttl(key);

    r = host.run(claim(key, t0 + 500, 1000, "h2:1"));
    CHECK_FALSE(r.claimed);
    r = host.run(claim(key, t0 + 999, 1000, "h3:1"));
    CHECK_FALSE(r.claimed);
    r = host.run(claim(key, t0 - 5000, 1000, "h3:2"));  // out of order: before last
    CHECK_FALSE(r.claimed);
    CHECK(hgetall(server(), key) == Fields{{"last", std::to_string(t0)}, {"ep", "h1:1"}, {"sup", "3"}});

    // Exactly the cooldown later: claims, and hands over the tally.
    r = host.run(claim(key, t0 + 1000, 1000, "h2:2"));
    CHECK(r.claimed);
    CHECK(r.suppressed == 3);
    CHECK(hgetall(server(), key) == Fields{{"last", std::to_string(t0 + 1000)}, {"ep", "h2:2"}});

    r = host.run(claim(key, t0 + 1500, 1000, "h1:2"));
    CHECK_FALSE(r.claimed);
    r = host.run(claim(key, t0 + 5000, 1000, "h1:3"));
    CHECK(r.claimed);
    CHECK(r.suppressed == 1);
    CHECK(hgetall(server(), key) == Fields{{"last", std::to_string(t0 + 5000)}, {"ep", "h1:3"}});
  }
}

TEST_CASE("fleet scripts: Alert with a limit claims in the same script") {
  Host host(server());
  const std::string key = key_for("alert-claim");
  auto a = [&](int64_t bucket, uint64_t events, int64_t t, const std::string& ep) {
    Request r = alert(key, 10, 2, bucket, bucket, events);
    r.limit = 3;
    r.t_ms = t;
    r.cooldown_ms = 10'000;
    r.episode = ep;
    return host.run(r);
  };
  Reply r = a(1, 0b01, 1000, "h1:1");
  CHECK_FALSE(r.claimed);
  CHECK(hgetall(server(), key).count("sup") == 0);  // below the limit: no claim, no tally
  r = a(1, 0b11, 1100, "h2:1");                     // sum of all events 3 >= 3
  CHECK(r.claimed);
  CHECK(r.suppressed == 0);
  CHECK(counts(r) == std::vector<uint64_t>{2, 1});
  r = a(2, 0b01, 1200, "h1:2");  // within the cooldown
  CHECK_FALSE(r.claimed);
  r = a(3, 0b10, 1300, "h3:1");
  CHECK_FALSE(r.claimed);
  CHECK(hgetall(server(), key) == Fields{{"nb", "3"},
                                         {"1:0", "2"},
                                         {"1:1", "1"},
                                         {"2:0", "1"},
                                         {"3:1", "1"},
                                         {"s:0", "3"},
                                         {"s:1", "2"},
                                         {"last", "1100"},
                                         {"ep", "h2:1"},
                                         {"sup", "2"}});
  r = a(4, 0b01, 11'100, "h3:2");
  CHECK(r.claimed);
  CHECK(r.suppressed == 2);
  check_pttl(key);
}

TEST_CASE("fleet scripts: a late Alert never claims, even when the window's sums reach the limit") {
  Host host(server());
  const std::string key = key_for("alert-late-claim");
  auto a = [&](int64_t bucket, int64_t now, const std::string& ep) {
    Request r = alert(key, 5, 1, bucket, now, 0b1);
    r.limit = 2;
    r.t_ms = bucket * 1000;
    r.cooldown_ms = 1000;
    r.episode = ep;
    return host.run(r);
  };
  CHECK_FALSE(a(10, 10, "h1:1").claimed);  // sum 1
  const Reply late = a(2, 10, "h2:1");     // older than the window (buckets 6..10): not added
  CHECK(late.late);
  CHECK_FALSE(late.claimed);
  CHECK(counts(late) == std::vector<uint64_t>{1});
  CHECK(hgetall(server(), key).count("ep") == 0);
  const Reply on_time = a(10, 10, "h2:2");  // sum 2: claims
  CHECK(on_time.claimed);
}

TEST_CASE("fleet scripts: Resolve ends only its own episode, once") {
  Host host(server());
  const std::string key = key_for("resolve");
  REQUIRE(host.run(claim(key, 5000, 1000, "h1:6")).claimed);
  REQUIRE(host.run(claim(key, 7000, 1000, "h1:7")).claimed);
  REQUIRE_FALSE(host.run(claim(key, 7001, 1000, "h2:1")).claimed);
  Reply r = host.run(resolve(key, "h1:6"));  // stale
  REQUIRE(r.ok);
  CHECK_FALSE(r.resolved);
  CHECK(hgetall(server(), key) == Fields{{"last", "7000"}, {"ep", "h1:7"}, {"sup", "1"}});
  r = host.run(resolve(key, "h1:7"));
  CHECK(r.resolved);
  CHECK(r.suppressed == 1);
  CHECK(hgetall(server(), key) == Fields{{"last", "7000"}, {"sup", "1"}});
  check_pttl(key);
  r = host.run(resolve(key, "h1:7"));  // already resolved
  REQUIRE(r.ok);
  CHECK_FALSE(r.resolved);
  CHECK(host.run(resolve(key_for("resolve-nothing"), "h1:1")).ok);
  CHECK(server().cli({"EXISTS", key_for("resolve-nothing")}) == "0");
}

TEST_CASE("fleet scripts: bad arguments are refused as data, at once, and change nothing") {
  Host host(server());
  const std::string key = key_for("argv");
  REQUIRE(host.run(throttle(key, 10, 50, 50, 5)).passed);
  REQUIRE(host.run(claim(key, 1000, 100, "h1:1")).claimed);
  const Fields before = hgetall(server(), key);
  const std::string pttl_before = server().cli({"PTTL", key});

  auto refused = [&](Request r, const std::string& what) {
    CAPTURE(what);
    const Reply reply = host.run(r);
    CHECK_FALSE(reply.ok);
    CHECK(reply.error.find(what) != std::string::npos);
    CHECK(hgetall(server(), key) == before);
    return reply.error;
  };
  Request t = throttle(key, 0, 50, 50, 5);
  MESSAGE("B = 0: " << refused(t, "B (ARGV[1])"));
  t.shape.buckets = 601;
  refused(t, "B (ARGV[1]) = 601 is outside 1..600");
  t = throttle(key, 10, 50, 50, 5);
  t.shape.events = 0;
  refused(t, "E (ARGV[2])");
  t.shape.events = 65;
  refused(t, "E (ARGV[2])");
  t.shape.events = 2;
  refused(t, "E = 1");
  t = throttle(key, 10, -1, 50, 5);
  refused(t, "bucket (ARGV[5]) is not a whole number");
  t = throttle(key, 10, 50, 100'000'000'000'000, 5);
  refused(t, "now_bucket");
  t = throttle(key, 10, 50, 50, UINT64_MAX);
  refused(t, "limit");
  t = throttle(key, 10, 9'000'000'000'000, 9'000'000'000'000, 5);
  t.shape.ttl_ms = 0;
  refused(t, "ttl_ms");
  t.shape.ttl_ms = -60000;
  refused(t, "ttl_ms");

  Request a = alert(key, 10, 2, 50, 50, 0b100);  // event 2 with E = 2
  refused(a, "at or past E = 2");
  a = alert(key, 10, 2, 50, 50, 0b1);
  a.limit = 3;
  refused(a, "episode");
  a.episode = std::string(300, 'e');
  refused(a, "episode");
  refused(claim(key, 2000, 100, ""), "episode");
  refused(claim(key, 2000, -1, "h1:2"), "cooldown_ms");
  refused(resolve(key, ""), "episode");
  Request rd = read(key, 10, 1, -5);
  refused(rd, "now_bucket");

  // Wrong ARGV counts and non-numbers, sent by hand.
  const std::string sha = server().cli({"SCRIPT", "LOAD", Scripts::source(Op::Throttle)});
  REQUIRE(sha.size() == 40);
  auto raw = [&](std::vector<std::string> args) {
    std::vector<std::string_view> argv = {"EVALSHA", sha, "1", key};
    argv.insert(argv.end(), args.begin(), args.end());
    ReplyPtr r = host.conn.command(argv);
    REQUIRE(r);
    REQUIRE(r->type == REDIS_REPLY_ARRAY);  // {0, why}
    REQUIRE(r->elements == 2);
    CHECK(r->element[0]->integer == 0);
    CHECK(hgetall(server(), key) == before);
    return std::string(r->element[1]->str, r->element[1]->len);
  };
  CHECK(raw({}) == "expected 7 arguments, got 0");
  {
    const std::string_view no_key[] = {"EVALSHA", sha, "0", "10", "1", "60000", "", "50", "50", "5"};
    ReplyPtr r = host.conn.command(no_key);
    REQUIRE(r);
    REQUIRE(r->type == REDIS_REPLY_ARRAY);
    REQUIRE(r->elements == 2);
    CHECK(std::string(r->element[1]->str, r->element[1]->len) == "expected 1 key, got 0");
  }
  CHECK(raw({"10", "1", "60000", "", "50", "50"}) == "expected 7 arguments, got 6");
  CHECK(raw({"10", "1", "60000", "", "50", "50", "5", "extra"}) == "expected 7 arguments, got 8");
  CHECK(raw({"10", "1", "60000", "", "5e1", "50", "5"}).starts_with("bucket (ARGV[5]) is not a whole number"));
  CHECK(raw({"10", "1", "60000", "", " 50", "50", "5"}).starts_with("bucket (ARGV[5])"));
  CHECK(raw({"10", "1", "60000", "", "50", "50", "0x10"}).starts_with("limit (ARGV[7])"));
  CHECK(raw({"10", "1", "60000", "", "50", "50", "1.5"}).starts_with("limit (ARGV[7])"));
  CHECK(raw({"10000000000000", "1", "60000", "", "50", "50", "5"}) == "B (ARGV[1]) = 10000000000000 is outside 1..600");
  CHECK(std::stoll(server().cli({"PTTL", key})) <= std::stoll(pttl_before));
}

TEST_CASE("fleet scripts: TTL in milliseconds on every write") {
  Host host(server());
  const std::string key = key_for("ttl");
  for (const Request& r : {throttle(key, 10, 5, 5, 0), alert(key_for("ttl-a"), 10, 1, 5, 5, 1),
                           claim(key_for("ttl-c"), 5, 5, "h:1"), read(key, 10, 1, 30)}) {
    REQUIRE(host.run(r).ok);
    check_pttl(r.hash_key);
  }
  // A longer TTL (a long cooldown) is not cut to seconds or capped.
  Request c = claim(key_for("ttl-long"), 5, 5, "h:1");
  c.shape.ttl_ms = 86'410'000;
  REQUIRE(host.run(c).ok);
  const long long pttl = std::stoll(server().cli({"PTTL", c.hash_key}));
  CHECK(pttl > 86'400'000);
  CHECK(pttl <= 86'410'000);
}

TEST_CASE("fleet scripts: concurrent hosts on one window pass exactly Y in total") {
  struct Case {
    int threads;
    int per_thread;
    uint64_t y;
  };
  for (const Case c : {Case{8, 5000, 1000}, Case{16, 2000, 777}}) {
    CAPTURE(c.threads);
    const std::string key = key_for("concurrent-" + std::to_string(c.threads));
    const auto address = address_of(server());  // on this thread: REQUIRE throws
    std::atomic<uint64_t> passed{0};
    std::atomic<uint64_t> errors{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < c.threads; ++t) {
      threads.emplace_back([&] {
        swthrottle::fleet::RedisConnection conn;
        Scripts scripts;
        if (!conn.connect(address, 0, kTimeout, {})) {
          errors += static_cast<uint64_t>(c.per_thread);
          return;
        }
        const std::vector<Request> batch(100, throttle(key, 10, 4242, 4242, c.y));
        std::vector<Reply> replies;
        for (int sent = 0; sent < c.per_thread; sent += 100) {
          if (!scripts.run(conn, batch, replies)) {
            errors += 100;
            continue;
          }
          for (const Reply& r : replies) {
            if (!r.ok) ++errors;
            if (r.passed) ++passed;
          }
        }
      });
    }
    for (auto& t : threads) t.join();
    CHECK(errors.load() == 0);
    CHECK(passed.load() == c.y);
    CHECK(hgetall(server(), key) ==
          Fields{{"nb", "4242"}, {"4242:0", std::to_string(c.y)}, {"s:0", std::to_string(c.y)}});
  }
}

TEST_CASE("fleet scripts: the largest advances (B = 600) stay bounded scripts (E = 1 and 64)") {
  Host host(server());
  using Clock = std::chrono::steady_clock;
  const uint32_t B = 600;
  std::string figures;
  for (const uint32_t E : {1U, 64U}) {
    // A window whose every bucket holds every event (600 * E fields), newest `top`.
    const uint64_t all = E == 64 ? ~uint64_t{0} : (uint64_t{1} << E) - 1;
    auto fill = [&](const std::string& key, int64_t top) {
      std::vector<Request> batch;
      for (int64_t b = top - B + 1; b <= top; ++b) batch.push_back(alert(key, B, E, b, b, all));
      for (const Reply& r : host.run(batch)) REQUIRE(r.ok);
      REQUIRE(server().cli({"HLEN", key}) == std::to_string(B * E + E + 1));
    };
    struct Step {
      int64_t gap;
      uint64_t left;  // lines of each event still in the window
    };
    figures += " E = " + std::to_string(E) + ":";
    for (const Step step :
         {Step{B / 2, B / 2}, Step{400, 200}, Step{401, 199}, Step{B - 1, 1}, Step{B, 0}, Step{3 * B, 0}}) {
      CAPTURE(step.gap);
      const std::string key = key_for("worst-" + std::to_string(E) + "-" + std::to_string(step.gap));
      fill(key, 10'000);
      REQUIRE(host.run(claim(key, 5, 5, "h:1")).claimed);  // alert state survives a rebuild
      const auto start = Clock::now();
      const Reply r = host.run(read(key, B, E, 10'000 + step.gap));
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
      REQUIRE(r.ok);
      CHECK(r.newest_bucket == 10'000 + step.gap);
      CHECK(r.ncounts == E);
      CHECK(r.counts[0] == step.left);
      CHECK(r.counts[E - 1] == step.left);
      const std::size_t per_event = step.left > 0 ? 1 : 0;
      CHECK(server().cli({"HLEN", key}) == std::to_string(step.left * E + per_event * E + 1 + 2));
      const Fields after = hgetall(server(), key);
      CHECK(after.at("ep") == "h:1");
      CHECK(after.at("last") == "5");
      check_pttl(key);
      figures += " gap " + std::to_string(step.gap) + ": " + std::to_string(us) + " us;";
    }
  }
  MESSAGE("B = 600, a full window advanced by (Read round trip):" << figures);
}

namespace {

Request flush(const std::string& key, uint32_t B, uint32_t E, int64_t now, const std::string& host, uint64_t seq,
              std::vector<swthrottle::fleet::Delta> deltas) {
  Request r;
  r.op = swthrottle::fleet::Op::Flush;
  r.hash_key = key;
  r.shape = {B, 1000, E, kTtl};
  r.now_bucket = now;
  r.host = host;
  r.seq = seq;
  r.deltas = std::move(deltas);
  return r;
}

Request lease(const std::string& key, int64_t bucket, uint64_t want, uint64_t limit, int64_t rb = 0, uint64_t rn = 0,
              const std::string& host = "h1") {
  Request r;
  r.op = swthrottle::fleet::Op::Lease;
  r.hash_key = key;
  r.host = host;
  r.shape = {5, 1000, 1, kTtl};
  r.bucket = bucket;
  r.want = want;
  r.limit = limit;
  r.return_bucket = rb;
  r.return_n = rn;
  return r;
}

}  // namespace

TEST_CASE("fleet scripts: Flush adds a host's deltas once per seq, a retry adds nothing") {
  Host host(server());
  const std::string key = key_for("flush");
  Reply r = host.run(flush(key, 5, 2, 10, "h1", 1, {{9, 0, 3}, {10, 1, 2}}));
  REQUIRE(r.ok);
  CHECK_FALSE(r.duplicate);
  CHECK(counts(r) == std::vector<uint64_t>{3, 2});
  r = host.run(flush(key, 5, 2, 10, "h1", 1, {{9, 0, 3}, {10, 1, 2}}));  // the same flush again: lost reply
  CHECK(r.duplicate);
  CHECK(counts(r) == std::vector<uint64_t>{3, 2});
  r = host.run(flush(key, 5, 2, 10, "h2", 1, {{10, 0, 1}}));  // another host's seq 1 is its own
  CHECK_FALSE(r.duplicate);
  CHECK(counts(r) == std::vector<uint64_t>{4, 2});
  // A flush whose deltas are older than the window: counted as late, not added.
  r = host.run(flush(key, 5, 2, 12, "h1", 2, {{5, 0, 7}, {12, 0, 1}}));
  CHECK(r.late_count == 7);
  CHECK(r.newest_bucket == 12);
  CHECK(counts(r) == std::vector<uint64_t>{5, 2});  // buckets 8..12: 3 + 1 + 1 of event 0
  CHECK(hgetall(server(), key).at("q:h1") == "2");
  // A rebuild (a jump of B or more) keeps the hosts' sequences.
  r = host.run(flush(key, 5, 2, 40, "h2", 2, {}));
  CHECK(counts(r) == std::vector<uint64_t>{0, 0});
  CHECK(hgetall(server(), key) == Fields{{"nb", "40"}, {"q:h1", "2"}, {"q:h2", "2"}});
  check_pttl(key);
}

TEST_CASE("fleet scripts: Flush claims at the limit, its retry answers claimed again") {
  Host host(server());
  const std::string key = key_for("flush-claim");
  Request f = flush(key, 10, 1, 3, "h1", 1, {{3, 0, 5}});
  f.limit = 5;
  f.t_ms = 3500;
  f.cooldown_ms = 60'000;
  f.episode = "h1:1";
  Reply r = host.run(f);
  CHECK(r.claimed);
  r = host.run(f);  // the reply was lost: the retry must not lose the alert
  CHECK(r.duplicate);
  CHECK(r.claimed);
  Request g = flush(key, 10, 1, 3, "h2", 1, {{3, 0, 1}});
  g.limit = 5;
  g.t_ms = 3600;
  g.cooldown_ms = 60'000;
  g.episode = "h2:1";
  r = host.run(g);
  CHECK_FALSE(r.claimed);
  CHECK(hgetall(server(), key).at("sup") == "1");
  // A flush of 3 events inside the cooldown holds back 3 lines, not 1.
  Request h = flush(key, 10, 1, 3, "h3", 1, {{3, 0, 3}});
  h.limit = 5;
  h.t_ms = 3700;
  h.cooldown_ms = 60'000;
  h.episode = "h3:1";
  r = host.run(h);
  CHECK_FALSE(r.claimed);
  CHECK(hgetall(server(), key).at("sup") == "4");
}

TEST_CASE("fleet scripts: Lease grants at most Y - sum, takes back unused permits, counts late at nb") {
  Host host(server());
  const std::string key = key_for("lease");
  // One host: at most (Y - sum) / 2 at a time (H_active = 1).
  Reply r = host.run(lease(key, 10, 4, 20));
  CHECK(r.granted == 4);
  CHECK(r.active_hosts == 1);
  r = host.run(lease(key, 10, 9, 20));
  CHECK(r.granted == 8);  // (20 - 4) / 2
  r = host.run(lease(key, 10, 9, 20));
  CHECK(r.granted == 4);  // (20 - 12) / 2
  r = host.run(lease(key, 10, 9, 20));
  CHECK(r.granted == 2);
  r = host.run(lease(key, 10, 9, 20));
  CHECK(r.granted == 1);
  r = host.run(lease(key, 10, 9, 20));
  CHECK(r.granted == 1);  // the last permit: at least 1 while there is room
  r = host.run(lease(key, 10, 4, 20));
  CHECK(r.granted == 0);
  CHECK(r.sum == 20);
  CHECK(r.room_bucket == 15);  // all 20 are in bucket 10: room once it leaves (window 11..15)
  // Next bucket: 3 permits of bucket 10 were not used: given back, then granted again.
  r = host.run(lease(key, 11, 4, 20, 10, 3));
  CHECK(r.granted == 1);  // 3 left: (20 - 17) / 2
  CHECK(hgetall(server(), key).at("10:0") == "17");
  CHECK(hgetall(server(), key).at("11:0") == "1");
  // Late (older than the window at nb = 11): counted at nb.
  r = host.run(lease(key, 2, 1, 100));
  CHECK(r.late);
  CHECK(hgetall(server(), key).at("11:0") == "2");
  // Giving back more than the bucket holds never goes below zero.
  r = host.run(lease(key, 11, 1, 0, 11, 99));
  CHECK(r.granted == 0);
  CHECK(hgetall(server(), key).count("11:0") == 0);
  CHECK(hgetall(server(), key).at("s:0") == "17");
  check_pttl(key);
}

TEST_CASE("fleet scripts: Lease grants at most (Y - sum) / (2 H_active), H_active the hosts of the window") {
  Host host(server());
  const std::string key = key_for("lease-hosts");
  const uint64_t Y = 1000;
  // Table: (bucket, host) -> (granted, H_active); every host wants 1000.
  struct Row {
    int64_t bucket;
    const char* host;
    uint64_t granted;
    uint64_t active;
  };
  const Row rows[] = {
      {10, "a", 500, 1},  // alone: half of 1000
      {10, "b", 125, 2},  // 500 left, two hosts: 500 / 4
      {10, "c", 62, 3},   // 375 left: 375 / 6
      {10, "a", 52, 3},   // 313 left: 313 / 6; a is counted once
      {14, "d", 32, 4},   // 261 left: 261 / 8 (window 10..14: a, b, c still in it)
      {15, "d", 484, 1},  // bucket 10 left the window, its 739 and its hosts: 968 / 2
  };
  uint64_t total = 0;
  for (const Row& row : rows) {
    CAPTURE(row.bucket);
    CAPTURE(row.host);
    const Reply r = host.run(lease(key, row.bucket, 1000, Y, 0, 0, row.host));
    REQUIRE(r.ok);
    CHECK(r.active_hosts == row.active);
    CHECK(r.granted == row.granted);
    total += r.granted;
  }
  CHECK(hgetall(server(), key).at("ha") == "15:d");
  CHECK(total == 500 + 125 + 62 + 52 + 32 + 484);
}

TEST_CASE("fleet scripts: Flush and Lease refuse bad arguments") {
  Host host(server());
  const std::string key = key_for("batched-bad");
  Reply r = host.run(flush(key, 5, 2, 10, "h1", 0, {{10, 0, 1}}));  // seq 0
  CHECK_FALSE(r.ok);
  r = host.run(flush(key, 5, 2, 10, "h1", 1, {{10, 2, 1}}));  // event past E
  CHECK_FALSE(r.ok);
  r = host.run(flush(key, 5, 2, 10, "", 1, {}));  // no host
  CHECK_FALSE(r.ok);
  r = host.run(lease(key, 10, 0, 10));  // want 0
  CHECK_FALSE(r.ok);
  r = host.run(lease(key, 10, 1, 10, 0, 0, ""));  // no host
  CHECK_FALSE(r.ok);
  r = host.run(lease(key, 10, 1, 10, 0, 0, "a\nb"));  // a newline would split ha's lines
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("host (ARGV[10]) holds a newline") != std::string::npos);
  CHECK(server().cli({"EXISTS", key}) == "0");
}
