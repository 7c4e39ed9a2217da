// Fleet rules end to end (man page: FLEET): several swthrottle processes, the
// "hosts", share windows through one real redis-server that each test starts
// on its own socket or port, and stops by pid.
//
// Replays use time = "log", so what each host decides depends only on the
// fleet's counts, not on how the processes are scheduled: the totals across
// hosts are exact whatever the interleaving.
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "fleet_hosts.h"

#include "support/fault_proxy.h"
#include "support/process.h"
#include "support/redis_server.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::FaultProxy;
using swthrottle::test::Process;
using swthrottle::test::RedisServer;
using swthrottle::test::RedisServerOptions;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;
using namespace swthrottle::test::fleet;

const char* const kPage = R"toml(
[[rule]]
name = "page"
kind = "throttle"
threshold = "100 per 1m"
fleet = "exact"
[[rule.event]]
name = "error"
match = 'ERROR'
)toml";

const char* const kOom = R"toml(
[[rule]]
name = "oom"
kind = "alert"
threshold = "100 per 1m"
key = "{svc}"
fleet = "exact"
[[rule.event]]
name = "oom"
match = 'OOM svc=(?P<svc>\w+)'
)toml";

}  // namespace

TEST_CASE("fleet exact throttle: 8 hosts flooding one window pass exactly Y between them") {
  RedisServer redis;
  TempDir dir;
  std::string page = kPage;
  page.replace(page.find("100 per 1m"), 10, "1000 per 1h");
  const std::string rules = rules_file(dir, redis.url(), page);
  // 8 x 5,000 offers within 50 s (one window), Y = 1,000 (DESIGN.md §8.12).
  const std::vector<std::string> logs(8, host_log(5000, "ERROR disk full"));
  const auto results = run_hosts(rules, logs);
  int passed = 0;
  uint64_t suppressed = 0;
  for (const auto& r : results) {
    passed += count_lines(r.out, "ERROR disk full");
    suppressed += stat(r.err, "stats: rule page:", "suppressed");
    CHECK(stat(r.err, "stats: fleet:", "unanswered") == 0);
  }
  CHECK(passed == 1000);
  CHECK(suppressed == 8 * 5000 - 1000);
}

TEST_CASE("fleet exact alert: one alert for the whole fleet, and the fleet's counts in Redis") {
  RedisServer redis;
  TempDir dir;
  const std::string rules = rules_file(dir, redis.url(), kOom);
  std::vector<std::string> logs;
  for (int h = 0; h < 4; ++h) logs.push_back(host_log(60, "OOM svc=api") + host_log(5, "OOM svc=db", 1));
  const auto results = run_hosts(rules, logs);
  int alerts = 0;
  uint64_t held_back = 0;
  for (const auto& r : results) {
    alerts += count_lines(r.out, "alert ");
    held_back += stat(r.err, "stats: rule oom:", "suppressed");
  }
  // 240 events of api: the 100th raises it, the 140 after are held back in
  // the cooldown; 20 of db never reach Y.
  CHECK(alerts == 1);
  CHECK(held_back == 140);
  const std::string keys = redis.cli({"KEYS", "swt:{test:oom:*"});
  CHECK(count_lines(keys, "swt:{test:oom:") == 2);
  std::string api_key;
  for (const std::string& k : {keys.substr(0, keys.find('\n')), keys.substr(keys.find('\n') + 1)})
    if (k.find(":api}") != std::string::npos) api_key = k;
  REQUIRE_FALSE(api_key.empty());
  CHECK(redis.cli({"HGET", api_key, "s:0"}) == "240");
  const long ttl = std::stol(redis.cli({"PTTL", api_key}));
  CHECK(ttl > 60'000);  // max(2 X, cooldown) + 10 s, in ms
  CHECK(ttl <= 130'000);
}

TEST_CASE("fleet: a host that cannot reach Redis at start decides alone, and says so") {
  TempDir dir;
  const std::string rules = rules_file(dir, "unix:" + dir.file("none.sock"), kPage);
  const auto results = run_hosts(rules, {host_log(150, "ERROR disk full")});
  const RunResult& r = results[0];
  CHECK(count_lines(r.out, "ERROR disk full") == 100);  // on_unreachable = local: its own window, Y = 100
  CHECK(r.err.find("swthrottle: fleet: redis unix:" + dir.file("none.sock") + " unreachable (") != std::string::npos);
  CHECK(r.err.find("deciding by on_unreachable = local") != std::string::npos);
  CHECK(stat(r.err, "stats: fleet:", "unanswered") == 150);
  CHECK(stat(r.err, "stats: rule page:", "fleet_local") == 150);
  CHECK(r.err.find(" state degraded ") != std::string::npos);
}

TEST_CASE("fleet: on_unreachable = closed suppresses, open passes") {
  TempDir dir;
  for (const std::string& mode : {std::string("closed"), std::string("open")}) {
    const std::string rules =
        rules_file(dir, "unix:" + dir.file("none.sock"), kPage, "on_unreachable = \"" + mode + "\"\n");
    const auto results = run_hosts(rules, {host_log(150, "ERROR disk full")});
    CHECK(count_lines(results[0].out, "ERROR disk full") == (mode == "open" ? 150 : 0));
  }
}

namespace {

// One live host reading stdin under arrival time, for the fault tests: a
// throttle that passes everything, so each line written shows on stdout.
struct LiveHost {
  TempDir dir;
  Process p;
  int sent = 0;

  LiveHost(const std::string& url, const std::string& timeout = "200ms")
      : p(Process::spawn(
            {SWTHROTTLE_BINARY, "-r",
             dir.write("rules.toml", "[fleet]\nredis = \"" + url + "\"\ntimeout = \"" + timeout + "\"\n" + R"toml(
[[rule]]
name = "all"
kind = "throttle"
threshold = "1000000 per 1m"
fleet = "exact"
[[rule.event]]
name = "e"
match = 'line'
)toml"),
             "--stats"})) {}

  // Writes one line and waits for it on stdout.
  bool line(std::chrono::milliseconds within = std::chrono::milliseconds(10'000)) {
    const std::string text = "line " + std::to_string(++sent);
    if (!p.write_stdin(text + "\n")) return false;
    return p.read_stdout_until([&](const std::string& out) { return out.find(text + "\n") != std::string::npos; },
                               within);
  }
  bool stderr_says(const std::string& what) {
    return p.read_stderr_until([&](const std::string& err) { return err.find(what) != std::string::npos; });
  }
};

std::string only_key(RedisServer& redis) {
  const std::string keys = redis.cli({"KEYS", "swt:*"});
  REQUIRE_MESSAGE(keys.find('\n') == std::string::npos, keys);
  return keys;
}

}  // namespace

TEST_CASE("fleet fault: Redis killed (-9) and restarted, without and with AOF") {
  for (const bool aof : {false, true}) {
    CAPTURE(aof);
    RedisServerOptions ro;
    ro.appendonly = aof;
    ro.extra_args = {"--appendfsync", "always"};
    RedisServer redis(ro);
    LiveHost host(redis.url());
    REQUIRE(host.line());
    REQUIRE(host.line());
    const std::string key = only_key(redis);
    CHECK(redis.cli({"HGET", key, "s:0"}) == "2");
    redis.kill9();
    // Lines go on, decided by this host alone, each within the timeout.
    REQUIRE(host.line(std::chrono::milliseconds(5'000)));
    CHECK(host.stderr_says("unreachable ("));
    REQUIRE(host.line(std::chrono::milliseconds(5'000)));
    redis.restart();
    CHECK(host.stderr_says("reachable again after "));
    CHECK(host.stderr_says("restarted (its run_id changed)"));
    REQUIRE(host.line());
    // With AOF the window survived the crash; without, it started over.
    CHECK(redis.cli({"HGET", key, "s:0"}) == (aof ? "3" : "1"));
    const RunResult r = host.p.wait();
    CHECK(r.exit_status == 0);
    CHECK(stat(r.err, "stats: fleet:", "degraded") == 1);
    CHECK(stat(r.err, "stats: fleet:", "reconnects") == 1);
    CHECK(stat(r.err, "stats: fleet:", "resets") == 1);
    CHECK(stat(r.err, "stats: rule all:", "fleet_local") == 2);
  }
}

TEST_CASE("fleet fault: Redis stopped (SIGSTOP): a line waits at most the timeout, then resumes with Redis") {
  RedisServer redis;
  LiveHost host(redis.url(), "300ms");
  REQUIRE(host.line());
  redis.pause();
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(host.line(std::chrono::milliseconds(5'000)));
  const auto waited = std::chrono::steady_clock::now() - t0;
  CHECK(waited >= std::chrono::milliseconds(250));
  CHECK(host.stderr_says("unreachable ("));
  // Degraded: the next lines do not wait at all.
  for (int i = 0; i < 20; ++i) REQUIRE(host.line(std::chrono::milliseconds(5'000)));
  redis.resume();
  CHECK(host.stderr_says("reachable again after "));
  const RunResult r = host.p.wait();
  CHECK(stat(r.err, "stats: fleet:", "timeouts") == 1);
  CHECK(stat(r.err, "stats: fleet:", "unanswered") == 21);
}

TEST_CASE("fleet fault: the script cache flushed mid-run: reloaded once, nothing lost") {
  RedisServer redis;
  LiveHost host(redis.url());
  REQUIRE(host.line());
  CHECK(redis.cli({"SCRIPT", "FLUSH"}) == "OK");
  REQUIRE(host.line());
  REQUIRE(host.line());
  CHECK(host.stderr_says("had lost its scripts"));
  CHECK(redis.cli({"HGET", only_key(redis), "s:0"}) == "3");
  const RunResult r = host.p.wait();
  CHECK(stat(r.err, "stats: fleet:", "reloads") == 1);
  CHECK(stat(r.err, "stats: fleet:", "unanswered") == 0);
}

TEST_CASE("fleet fault: a reply lost after Redis applied the command is not counted twice") {
  RedisServerOptions ro;
  ro.tcp = true;
  RedisServer redis(ro);
  FaultProxy proxy = FaultProxy::to_tcp("127.0.0.1", redis.port());
  LiveHost host(proxy.url());
  REQUIRE(host.line());
  proxy.drop_reply(1);
  REQUIRE(host.line(std::chrono::milliseconds(5'000)));  // no reply: decided here
  CHECK(host.stderr_says("unreachable ("));
  CHECK(host.stderr_says("reachable again after "));
  REQUIRE(host.line());
  // Three lines, three counts: the one whose reply was lost counted once.
  CHECK(redis.cli({"HGET", only_key(redis), "s:0"}) == "3");
}

TEST_CASE("fleet fault: a slow link is waited for, a blackholed one costs one timeout") {
  RedisServerOptions ro;
  ro.tcp = true;
  RedisServer redis(ro);
  FaultProxy proxy = FaultProxy::to_tcp("127.0.0.1", redis.port());
  LiveHost host(proxy.url(), "500ms");
  REQUIRE(host.line());
  proxy.delay(50, 20);  // a round trip of about 100 ms: within the timeout
  for (int i = 0; i < 3; ++i) REQUIRE(host.line());
  proxy.blackhole();
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(host.line(std::chrono::milliseconds(5'000)));
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(450));
  CHECK(host.stderr_says("unreachable ("));
  proxy.pass();
  CHECK(host.stderr_says("reachable again after "));
  REQUIRE(host.line());
  const RunResult r = host.p.wait();
  CHECK(stat(r.err, "stats: fleet:", "answered") == 5);
  CHECK(stat(r.err, "stats: fleet:", "timeouts") == 1);
}

TEST_CASE("fleet fault: a host whose clock is skewed is told so") {
  RedisServer redis;
  TempDir dir;
  // libfaketime (Debian faketime) moves this host's clocks 5 s ahead of
  // Redis's; the narrowest fleet bucket is 6 s, so more than 1.5 s is reported.
  const std::string lib = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";
  REQUIRE_MESSAGE(::access(lib.c_str(), R_OK) == 0, "faketime is not installed (.ci/setup installs it)");
  const std::string rules = dir.write("rules.toml", "[fleet]\nredis = \"" + redis.url() + "\"\n" + kPage);
  Process p = Process::spawn({SWTHROTTLE_BINARY, "-r", rules},
                             {{"LD_PRELOAD", lib},
                              {"FAKETIME", "+5s"},
                              {"FAKETIME_DONT_RESET", "1"},
                              // Under AddressSanitizer: libfaketime is loaded ahead of its runtime.
                              {"ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=1:abort_on_error=1"}});
  CHECK(p.read_stderr_until([](const std::string& err) { return err.find("ms ahead of redis") != std::string::npos; }));
  const std::string err = p.err();
  std::smatch m;
  REQUIRE(std::regex_search(err, m, std::regex("this host's clock is (\\d+) ms ahead of redis")));
  CHECK(std::stol(m[1]) >= 4000);
  CHECK(std::stol(m[1]) <= 6000);
  CHECK(err.find("more than 1500 ms, a quarter of the narrowest fleet bucket") != std::string::npos);
  p.close_stdin();
  CHECK(p.wait().exit_status == 0);
}

TEST_CASE("fleet: a host whose logs trail the fleet by more than half a window is told, and its events are late") {
  RedisServer redis;
  TempDir dir;
  const std::string rules = rules_file(dir, redis.url(), kOom);
  // h0 is at 10:05; h1 replays 10:00, five windows behind.
  const auto ahead = run_hosts(rules, {host_log(3, "OOM svc=api", 300)});
  const auto behind = run_hosts(rules, {host_log(3, "OOM svc=api")});
  CHECK(ahead[0].err.find("behind the fleet") == std::string::npos);
  CHECK(behind[0].err.find("swthrottle: fleet: rule oom: this host's time is 300000 ms behind the fleet's newest") !=
        std::string::npos);
  CHECK(stat(behind[0].err, "stats: rule oom:", "fleet_late") == 3);
}

namespace {

std::string batched(std::string rules) {
  for (std::size_t at = rules.find("fleet = \"exact\""); at != std::string::npos;
       at = rules.find("fleet = \"exact\"", at))
    rules.replace(at, 15, "fleet = \"batched\"");
  return rules;
}

}  // namespace

TEST_CASE("fleet batched alert: one alert for the fleet, and every count in Redis once all hosts have exited") {
  RedisServer redis;
  TempDir dir;
  const std::string rules = rules_file(dir, redis.url(), batched(kOom), "sync = \"50ms\"\n");
  std::vector<std::string> logs;
  for (int h = 0; h < 4; ++h) logs.push_back(host_log(60, "OOM svc=api") + host_log(5, "OOM svc=db", 1));
  const auto results = run_hosts(rules, logs);
  int alerts = 0;
  for (const auto& r : results) {
    alerts += count_lines(r.out, "alert oom key=api");
    CHECK(count_lines(r.out, "key=db") == 0);
    CHECK(stat(r.err, "stats: fleet:", "dropped") == 0);
    CHECK(stat(r.err, "stats: fleet:", "flushes") >= 1);
  }
  CHECK(alerts == 1);
  const std::string keys = redis.cli({"KEYS", "swt:{test:oom:*"});
  for (const std::string& k : {keys.substr(0, keys.find('\n')), keys.substr(keys.find('\n') + 1)})
    CHECK(redis.cli({"HGET", k, "s:0"}) == (k.find(":api}") != std::string::npos ? "240" : "20"));
}

TEST_CASE("fleet batched throttle: leases never pass more than Y across the fleet") {
  RedisServer redis;
  TempDir dir;
  const std::string rules = rules_file(dir, redis.url(), batched(kPage));
  const std::vector<std::string> logs(8, host_log(500, "ERROR disk full"));
  const auto results = run_hosts(rules, logs);
  int passed = 0;
  uint64_t asked = 0;
  for (const auto& r : results) {
    passed += count_lines(r.out, "ERROR disk full");
    asked += stat(r.err, "stats: fleet:", "asked");
  }
  // At most Y; at least Y less the permits hosts still held at their end
  // (k at most Y/8 = 12 each).
  CHECK(passed <= 100);
  CHECK(passed >= 100 - 8 * 12);
  // A lease per k lines, and none once refused in the bucket: far fewer
  // round trips than lines.
  CHECK(asked < 8 * 500 / 4);
  const std::string key = only_key(redis);
  CHECK(redis.cli({"HGET", key, "s:0"}) == "100");  // every permit granted counts, used or not
}

TEST_CASE(
    "fleet batched fault: a flush whose reply was lost is sent again and counted once, an outage's counts "
    "are flushed when Redis is back") {
  RedisServerOptions ro;
  ro.tcp = true;
  RedisServer redis(ro);
  FaultProxy proxy = FaultProxy::to_tcp("127.0.0.1", redis.port());
  TempDir dir;
  const std::string rules =
      dir.write("rules.toml", "[fleet]\nredis = \"" + proxy.url() + "\"\nsync = \"50ms\"\n" + R"toml(
[[rule]]
name = "oom"
kind = "alert"
threshold = "1000 per 1h"
buckets = 60
fleet = "batched"
[[rule.event]]
name = "oom"
match = 'OOM'
)toml");
  Process p = Process::spawn({SWTHROTTLE_BINARY, "-r", rules, "--stats"});
  auto sum_is = [&](const std::string& want) {
    return swthrottle::test::poll_until([&] {
      const std::string keys = redis.cli({"KEYS", "swt:*"});
      return !keys.empty() && redis.cli({"HGET", keys, "s:0"}) == want;
    });
  };
  REQUIRE(p.write_stdin("OOM 1\nOOM 2\n"));
  REQUIRE(sum_is("2"));
  proxy.drop_reply(1);
  REQUIRE(p.write_stdin("OOM 3\n"));
  REQUIRE(p.read_stderr_until([](const std::string& e) { return e.find("reachable again") != std::string::npos; }));
  REQUIRE(sum_is("3"));
  REQUIRE(p.write_stdin("OOM 4\n"));
  REQUIRE(sum_is("4"));
  redis.kill9();  // an outage: counted here meanwhile, flushed when Redis is back (its window starts over)
  REQUIRE(p.write_stdin("OOM 5\nOOM 6\n"));
  REQUIRE(p.read_stderr_until([](const std::string& e) { return e.find("unreachable (") != std::string::npos; }));
  redis.restart();
  REQUIRE(sum_is("2"));
  const RunResult r = p.wait();
  CHECK(r.exit_status == 0);
  CHECK(stat(r.err, "stats: fleet:", "dropped") == 0);
  CHECK(stat(r.err, "stats: rule oom:", "events") == 6);
}

TEST_CASE("fleet fault: an alert raised locally during an outage is claimed on reconnect, no other host repeats it") {
  RedisServerOptions ro;
  ro.tcp = true;
  RedisServer redis(ro);
  FaultProxy proxy = FaultProxy::to_tcp("127.0.0.1", redis.port());
  proxy.reset();  // host A starts cut off from Redis
  TempDir dir;
  const std::string rule = R"toml(
[[rule]]
name = "oom"
kind = "alert"
threshold = "2 per 1m"
fleet = "exact"
[[rule.event]]
name = "oom"
match = 'OOM'
)toml";
  const std::string via_proxy = dir.write("a.toml", "[fleet]\nredis = \"" + proxy.url() + "\"\n" + rule);
  const std::string direct = dir.write("b.toml", "[fleet]\nredis = \"" + redis.url() + "\"\n" + rule);
  Process a = Process::spawn({SWTHROTTLE_BINARY, "-r", via_proxy, "--stats", "--fleet-host", "a"});
  REQUIRE(a.write_stdin("OOM 1\nOOM 2\n"));
  REQUIRE(a.read_stdout_until([](const std::string& out) { return out.find("alert oom") != std::string::npos; }));
  CHECK(a.err().find("unreachable (") != std::string::npos);
  proxy.pass();
  REQUIRE(a.read_stderr_until([](const std::string& e) { return e.find("reachable again") != std::string::npos; }));
  REQUIRE(swthrottle::test::poll_until([&] {
    const std::string keys = redis.cli({"KEYS", "swt:*"});
    return !keys.empty() && redis.cli({"HGET", keys, "ep"}).starts_with("a:");
  }));
  const auto b = swthrottle::test::run_swthrottle({"-r", direct, "--stats", "--fleet-host", "b"}, "OOM 3\nOOM 4\n");
  CHECK(b.exit_status == 0);
  CHECK(b.out.find("alert") == std::string::npos);  // within the cooldown of a's alert, fleet-wide
  CHECK(stat(b.err, "stats: rule oom:", "suppressed") == 1);
  const RunResult ra = a.wait();
  CHECK(stat(ra.err, "stats: fleet:", "local_alerts") == 1);
  CHECK(stat(ra.err, "stats: fleet:", "duplicates") == 0);
}

TEST_CASE("fleet batched: counts a run could not send are kept in --state and sent by the next run, once") {
  TempDir dir;
  RedisServer redis;
  const std::string down = "unix:" + dir.file("none.sock");
  const std::string state = dir.file("state.json");
  const std::string rules =
      dir.write("rules.toml", std::string("[settings]\ntime = \"log\"\n[fleet]\nnamespace = \"t\"\n") + batched(kOom));
  auto run = [&](const std::string& url, const std::string& log) {
    return swthrottle::test::run_swthrottle(
        {"-r", rules, "--fleet-redis", url, "--state", state, "--fleet-host", "h1", "--stats"}, log);
  };
  const auto first = run(down, host_log(5, "OOM svc=api"));  // Redis down: nothing sent
  REQUIRE(first.exit_status == 0);
  CHECK(swthrottle::test::read_file(state).find("\"fleet_unsent\":") != std::string::npos);
  const auto second = run(redis.url(), "");  // Redis back: the next run sends them
  REQUIRE(second.exit_status == 0);
  const std::string key = only_key(redis);
  CHECK(redis.cli({"HGET", key, "s:0"}) == "5");
  CHECK(swthrottle::test::read_file(state).find("\"fleet_unsent\":") == std::string::npos);
  const auto third = run(redis.url(), "");
  REQUIRE(third.exit_status == 0);
  CHECK(redis.cli({"HGET", key, "s:0"}) == "5");  // once
}

namespace {

// The eviction scenario of the hardening probe: 60,000 lines over 20,000
// keys within 50 s (one window of `2 per 1m`), each key drawn by a fixed
// LCG (or the first `lines` of them); and the exact answer, the sum over
// keys of min(2, lines of the key).
struct EvictionFlood {
  std::string log;
  int exact = 0;
  explicit EvictionFlood(int lines = 60'000) {
    std::vector<int> per_key(20'000, 0);
    uint32_t x = 12345;
    char line[96];
    for (int i = 0; i < lines; ++i) {
      x = x * 1664525u + 1013904223u;
      const int key = static_cast<int>((x >> 8) % 20'000);
      ++per_key[key];
      const int ms = static_cast<int>(int64_t{i} * 50'000 / lines);
      std::snprintf(line, sizeof line, "2026-11-25T10:00:%02d.%03dZ ERROR key=%d\n", ms / 1000, ms % 1000, key);
      log += line;
    }
    for (const int n : per_key) exact += std::min(n, 2);
  }
};

const char* const kPerKey = R"toml(
[[rule]]
name = "per-key"
kind = "throttle"
threshold = "2 per 1m"
key = "{k}"
fleet = "exact"
[[rule.event]]
name = "error"
match = 'ERROR key=(?P<k>\d+)'
)toml";

// Lines of the log passed: they start with its stamp (records with "swthrottle:").
int passed_lines(const std::string& out) {
  int n = 0;
  for (std::size_t at = 0; at < out.size(); at = out.find('\n', at) + 1) {
    if (out.compare(at, 5, "2026-") == 0) ++n;
    if (out.find('\n', at) == std::string::npos) break;
  }
  return n;
}

}  // namespace

TEST_CASE("fleet fault: a Redis that can evict windows is refused: 60,000 lines over 20,000 keys pass exactly") {
  RedisServerOptions ro;
  ro.extra_args = {"--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"};
  RedisServer redis(ro);
  TempDir dir;
  const EvictionFlood flood;
  // Refused (the default): every line decided on the host's own windows,
  // which are exact for one host.
  const auto refused = run_hosts(rules_file(dir, redis.url(), kPerKey), {flood.log});
  CHECK(passed_lines(refused[0].out) == flood.exact);
  CHECK(refused[0].err.find("has maxmemory-policy allkeys-lru, which can evict fleet windows") != std::string::npos);
  CHECK(refused[0].err.find("allow_eviction = true to accept it); deciding by on_unreachable = local") !=
        std::string::npos);
  CHECK(stat(refused[0].err, "stats: rule per-key:", "fleet_local") == 60'000);
  CHECK(redis.cli({"DBSIZE"}) == "0");
}

TEST_CASE("fleet fault: windows a Redis allowed to evict does evict are counted by the end of a short run") {
  RedisServerOptions ro;
  ro.extra_args = {"--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"};
  RedisServer redis(ro);
  TempDir dir;
  // 20,000 lines (some 16,000 keys: 10 MB of windows in a 2 MB Redis), so
  // that the run is shorter than the 10 s between two looks at the server.
  const EvictionFlood flood(20'000);
  // Accepted knowingly: windows Redis evicts start over, so keys pass again,
  // and what was evicted is read at exit, however short the run.
  const auto allowed = run_hosts(rules_file(dir, redis.url(), kPerKey, "allow_eviction = true\n"), {flood.log});
  const uint64_t evicted = stat(allowed[0].err, "stats: fleet:", "evicted");
  CHECK(evicted > 0);
  // Said on stderr as they were found (at the end at the latest), in all as many.
  uint64_t said = 0;
  const std::regex told("evicted (\\d+) keys: fleet windows among them start over");
  for (auto m = std::sregex_iterator(allowed[0].err.begin(), allowed[0].err.end(), told); m != std::sregex_iterator();
       ++m)
    said += std::stoull((*m)[1]);
  CHECK(said == evicted);
  CHECK(passed_lines(allowed[0].out) > flood.exact);  // the overshoot eviction costs
  CHECK(stat(allowed[0].err, "stats: fleet:", "unanswered") == 0);
}

TEST_CASE("fleet batched alert with `when`: claimed after the flush that makes it true, with that flush's counts") {
  RedisServer redis;
  TempDir dir;
  const std::string rules = rules_file(dir, redis.url(), batched(R"toml(
[[rule]]
name = "ratio"
kind = "alert"
when = "err >= 30 and ok >= 10"
window = "1m"
fleet = "exact"
[[rule.event]]
name = "err"
match = 'ERR'
[[rule.event]]
name = "ok"
match = 'OK '
)toml"),
                                       "sync = \"50ms\"\n");
  const auto results = run_hosts(rules, {host_log(20, "ERR x") + host_log(10, "OK y", 1), host_log(20, "ERR z")});
  int alerts = 0;
  for (const auto& r : results) {
    alerts += count_lines(r.out, "alert ratio");
    if (r.out.find("alert ratio") != std::string::npos) {
      std::smatch m;
      REQUIRE(std::regex_search(r.out, m, std::regex("alert ratio count=(\\d+)")));
      CHECK(std::stoi(m[1]) >= 40);  // the fleet's counts that made `when` true, not zeros
    }
  }
  CHECK(alerts == 1);
}

TEST_CASE("fleet: an ACL user from SWTHROTTLE_REDIS_USER and SWTHROTTLE_REDIS_PASSWORD, never printed") {
  RedisServerOptions ro;
  ro.extra_args = {"--user", "swt", "on", ">hunter2", "~swt:*", "+@all"};
  RedisServer redis(ro);
  TempDir dir;
  const std::string rules = rules_file(dir, redis.url(), kPage);
  const auto run = [&](const std::string& password) {
    return swthrottle::test::run_process({SWTHROTTLE_BINARY, "-r", rules, "--stats"}, host_log(5, "ERROR disk full"),
                                         swthrottle::test::kDefaultTimeout,
                                         {{"SWTHROTTLE_REDIS_USER", "swt"}, {"SWTHROTTLE_REDIS_PASSWORD", password}});
  };
  const RunResult good = run("hunter2");
  CHECK(good.exit_status == 0);
  CHECK(stat(good.err, "stats: fleet:", "answered") == 5);
  CHECK(redis.cli({"KEYS", "swt:{test:page:*"}).starts_with("swt:{test:page:"));
  const RunResult bad = run("hunter3");
  CHECK(bad.exit_status == 0);
  CHECK(bad.err.find("unreachable (AUTH: WRONGPASS: the server refused the user name or password "
                     "(SWTHROTTLE_REDIS_USER, SWTHROTTLE_REDIS_PASSWORD))") != std::string::npos);
  CHECK(bad.err.find("hunter") == std::string::npos);
  CHECK(stat(bad.err, "stats: fleet:", "unanswered") == 5);
}
