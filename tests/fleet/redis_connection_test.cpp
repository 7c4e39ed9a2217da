#include "fleet/redis_connection.h"

#include <doctest/doctest.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fleet_helpers.h"

using namespace swthrottle::test::fleet;
using swthrottle::fleet::Address;
using swthrottle::fleet::RedisConnection;
using swthrottle::fleet::ReplyPtr;
using swthrottle::fleet::Scripts;
using swthrottle::test::RedisServer;
using swthrottle::test::RedisServerOptions;
using Clock = std::chrono::steady_clock;

namespace {

std::string ping(RedisConnection& conn) {
  const std::string_view argv[] = {"PING"};
  ReplyPtr r = conn.command(argv);
  if (!r) return "(failed: " + conn.error() + ")";
  return std::string(r->str, r->len);
}

// A port on 127.0.0.1 nothing listens on (bound, then released).
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

RedisServerOptions tcp_options(bool tcp) {
  RedisServerOptions o;
  o.tcp = tcp;
  return o;
}

RedisServerOptions password_options(std::string password) {
  RedisServerOptions o;
  o.password = std::move(password);
  return o;
}

RedisServerOptions args_options(std::vector<std::string> args) {
  RedisServerOptions o;
  o.extra_args = std::move(args);
  return o;
}

// SIGCONT at scope exit: a failed CHECK never leaves the server stopped.
struct Resume {
  RedisServer& server;
  ~Resume() { server.resume(); }
};

}  // namespace

TEST_CASE("fleet redis connection: unix socket and TCP") {
  for (const bool tcp : {false, true}) {
    CAPTURE(tcp);
    RedisServer server(tcp_options(tcp));
    RedisConnection conn;
    REQUIRE_MESSAGE(conn.connect(address_of(server), 0, kTimeout, {}), conn.error());
    CHECK(conn.connected());
    CHECK(ping(conn) == "PONG");
    const std::string_view set[] = {"SET", "a key with spaces\r\n", std::string_view("v\0x", 3)};
    ReplyPtr r = conn.command(set);
    REQUIRE(r);
    CHECK(server.cli({"STRLEN", "a key with spaces\r\n"}) == "3");
    conn.close();
    CHECK_FALSE(conn.connected());
  }
}

TEST_CASE("fleet redis connection: SELECT of the endpoint's database") {
  RedisServer server;
  auto e = swthrottle::fleet::parse_endpoint(server.url() + "?db=3");
  REQUIRE(e);
  RedisConnection conn;
  REQUIRE_MESSAGE(conn.connect(e->servers[0], e->db, kTimeout, {}), conn.error());
  const std::string_view set[] = {"SET", "in3", "x"};
  REQUIRE(conn.command(set));
  CHECK(server.cli({"EXISTS", "in3"}) == "0");
  CHECK(server.cli({"DBSIZE"}) == "0");
  auto e99 = swthrottle::fleet::parse_endpoint(server.url() + "?db=99");
  REQUIRE(e99);
  CHECK_FALSE(conn.connect(e99->servers[0], e99->db, kTimeout, {}));
  CHECK(conn.error().find("SELECT 99") != std::string::npos);
  CHECK_FALSE(conn.connected());
}

TEST_CASE("fleet redis connection: a refused connection fails at once, with the endpoint in the message") {
  const int port = closed_port();
  Address e;
  e.host = "127.0.0.1";
  e.port = static_cast<uint16_t>(port);
  RedisConnection conn;
  const auto start = Clock::now();
  CHECK_FALSE(conn.connect(e, 0, kTimeout, {}));
  const auto took = Clock::now() - start;
  CHECK(conn.error() == "redis 127.0.0.1:" + std::to_string(port) + ": Connection refused");
  CHECK(took < kTimeout);
  CHECK_FALSE(conn.connected());
  // Commands on a closed connection fail without touching anything.
  CHECK(ping(conn).starts_with("(failed"));

  Address u;
  u.unix_path = "/nonexistent/r.sock";
  CHECK_FALSE(conn.connect(u, 0, kTimeout, {}));
  CHECK(conn.error().starts_with("redis unix:/nonexistent/r.sock: "));
  MESSAGE("unix error: " << conn.error());
}

TEST_CASE("fleet redis connection: AUTH with the right password, and a wrong one") {
  RedisServer server(password_options("s3cret pass"));
  RedisConnection conn;
  REQUIRE_MESSAGE(conn.connect(address_of(server), 0, kTimeout, password("s3cret pass")), conn.error());
  CHECK(ping(conn) == "PONG");

  CHECK_FALSE(conn.connect(address_of(server), 0, kTimeout, password("wrong")));
  CHECK(conn.error().find(": AUTH: ") != std::string::npos);
  CHECK_FALSE(conn.connected());
  MESSAGE("wrong password: " << conn.error());

  // Without a password the connection stands, and commands answer NOAUTH.
  REQUIRE(conn.connect(address_of(server), 0, kTimeout, {}));
  CHECK(ping(conn).starts_with("NOAUTH"));
}

TEST_CASE("fleet redis connection: a stopped server fails a command after about the timeout") {
  RedisServer server;
  const auto timeout = std::chrono::milliseconds(200);
  RedisConnection conn;
  REQUIRE(conn.connect(address_of(server), 0, timeout, {}));
  REQUIRE(ping(conn) == "PONG");
  {
    Resume resume{server};
    server.pause();
    const auto start = Clock::now();
    const std::string answer = ping(conn);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    MESSAGE("a command to a SIGSTOPped server failed after " << took.count() << " ms: " << answer);
    CHECK(answer.starts_with("(failed"));
    CHECK(took >= timeout);
    CHECK(took < 10 * timeout);
    CHECK_FALSE(conn.connected());
    CHECK_FALSE(conn.error().empty());
    // The next command fails at once, without blocking.
    CHECK(ping(conn).starts_with("(failed"));
  }
  REQUIRE_MESSAGE(conn.connect(address_of(server), 0, timeout, {}), conn.error());
  CHECK(ping(conn) == "PONG");

  // Scripts::run on a stopped server: false after about the timeout, every
  // reply !ok with the connection's error.
  Scripts scripts;
  REQUIRE(scripts.load(conn));
  std::vector<Request> batch(5, throttle("swt:{t:stopped}", 10, 1, 1, 100));
  std::vector<Reply> replies;
  {
    Resume resume{server};
    server.pause();
    const auto start = Clock::now();
    CHECK_FALSE(scripts.run(conn, batch, replies));
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    CHECK(took >= timeout);
    CHECK(took < 10 * timeout);
    REQUIRE(replies.size() == 5);
    for (const Reply& r : replies) {
      CHECK_FALSE(r.ok);
      CHECK(r.error == conn.error());
    }
    CHECK_FALSE(conn.connected());
  }
  REQUIRE(conn.connect(address_of(server), 0, timeout, {}));
  CHECK(scripts.run(conn, batch, replies));
  CHECK(replies.back().ok);
  CHECK(scripts.reloads() == 0);
}

TEST_CASE("fleet redis connection: kill -9 and restart: the old connection fails, a new one works, scripts reload") {
  for (const bool tcp : {false, true}) {
    CAPTURE(tcp);
    RedisServer server(tcp_options(tcp));
    Host host(server);
    const std::string key = "swt:{t:restart}";
    CHECK(host.run(throttle(key, 10, 5, 5, 100)).passed);
    CHECK(host.scripts.reloads() == 0);

    server.kill9();
    // The write may still succeed (or raise EPIPE, never a SIGPIPE that ends
    // the test); the read fails either way.
    CHECK(ping(host.conn).starts_with("(failed"));
    CHECK_FALSE(host.conn.connected());
    std::vector<Reply> replies;
    const Request r = throttle(key, 10, 5, 5, 100);
    CHECK_FALSE(host.scripts.run(host.conn, std::span(&r, 1), replies));
    REQUIRE(replies.size() == 1);
    CHECK_FALSE(replies[0].ok);
    CHECK_FALSE(replies[0].error.empty());

    server.restart();
    REQUIRE_MESSAGE(host.conn.connect(address_of(server), 0, kTimeout, {}), host.conn.error());
    const Reply after = host.run(throttle(key, 10, 5, 5, 100));
    CHECK(after.ok);
    CHECK(after.passed);
    CHECK(after.sum == 1);  // no AOF: the window is gone with the server
    CHECK(host.scripts.reloads() == 1);
  }
}

TEST_CASE("fleet redis connection: SCRIPT FLUSH between runs: NOSCRIPT, one reload, every request answered once") {
  RedisServer server;
  Host host(server);
  const std::string key = "swt:{t:flush}";
  std::vector<Request> batch;
  for (int i = 0; i < 10; ++i) batch.push_back(throttle(key, 10, 5, 5, 1000));
  auto replies = host.run(batch);
  CHECK(replies.back().sum == 10);
  CHECK(server.cli({"SCRIPT", "FLUSH"}) == "OK");
  replies = host.run(batch);
  CHECK(host.scripts.reloads() == 1);
  for (std::size_t i = 0; i < replies.size(); ++i) {
    CHECK(replies[i].ok);
    CHECK(replies[i].sum == 11 + i);  // each sent again exactly once, in order
  }
  CHECK(hgetall(server, key)["s:0"] == "20");
}

TEST_CASE("fleet redis connection: a pipeline of 1000 requests answers all, in order") {
  RedisServer server;
  Host host(server);
  const std::string key = "swt:{t:pipeline}";
  std::vector<Request> batch;
  for (int i = 0; i < 1000; ++i) batch.push_back(throttle(key, 10, 7, 7, 1'000'000));
  host.run(std::vector<Request>{read(key, 10, 1, 7)});  // scripts loaded before the clock starts
  const auto start = Clock::now();
  const auto replies = host.run(batch);
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
  REQUIRE(replies.size() == 1000);
  for (std::size_t i = 0; i < replies.size(); ++i) {
    CHECK(replies[i].ok);
    CHECK(replies[i].passed);
    CHECK(replies[i].sum == i + 1);
  }
  MESSAGE("1000 pipelined Throttle EVALSHA: " << us << " us, " << (us > 0 ? 1000 * 1'000'000 / us : 0)
                                              << " requests/s");
}

TEST_CASE("fleet redis connection: server_info: run_id (new after a restart), maxmemory_policy, TIME") {
  RedisServer server(args_options({"--maxmemory-policy", "allkeys-lru"}));
  RedisConnection conn;
  REQUIRE(conn.connect(address_of(server), 0, kTimeout, {}));
  const auto info = conn.server_info();
  REQUIRE(info);
  CHECK(info->run_id.size() == 40);
  CHECK(info->maxmemory_policy == "allkeys-lru");
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  CHECK(info->time_ms > now_ms - 60'000);
  CHECK(info->time_ms < now_ms + 60'000);

  server.restart();
  REQUIRE(conn.connect(address_of(server), 0, kTimeout, {}));
  const auto again = conn.server_info();
  REQUIRE(again);
  CHECK(again->run_id.size() == 40);
  CHECK(again->run_id != info->run_id);

  RedisServer plain;
  REQUIRE(conn.connect(address_of(plain), 0, kTimeout, {}));
  const auto defaults = conn.server_info();
  REQUIRE(defaults);
  CHECK(defaults->maxmemory_policy == "noeviction");

  plain.kill9();
  CHECK_FALSE(conn.server_info());
  CHECK_FALSE(conn.connected());
}

TEST_CASE("fleet redis server: restart keeps the port and, with appendonly, the data") {
  RedisServerOptions options;
  options.tcp = true;
  options.appendonly = true;
  RedisServer server(options);
  const int port = server.port();
  CHECK(port > 0);
  CHECK(server.url() == "redis://127.0.0.1:" + std::to_string(port));
  CHECK(server.cli({"HSET", "h", "a", "1"}) == "1");
  CHECK(server.cli({"HGET", "h", "missing"}) == "(nil)");
  CHECK(server.cli({"NOSUCHCOMMAND"}).starts_with("ERR: "));
  const pid_t before = server.pid();
  server.restart();
  CHECK(server.pid() != before);
  CHECK(server.port() == port);
  CHECK(server.cli({"HGETALL", "h"}) == "a\n1");

  RedisServer plain;
  CHECK(plain.url() == "unix:" + plain.socket_path());
  CHECK(plain.cli({"SET", "x", "1"}) == "OK");
  plain.restart();
  CHECK(plain.cli({"EXISTS", "x"}) == "0");  // no AOF, no RDB: gone
}

TEST_CASE("fleet redis connection: SCRIPT FLUSH racing long pipelines: every request applied once, in order") {
  RedisServer server;
  Host host(server);
  const std::string key = "swt:{t:flush-race}";
  const std::vector<Request> batch(500, throttle(key, 10, 3, 3, 1'000'000));
  // The flusher flushes once each time it is asked, racing the batch sent
  // right after (it may land before, inside or after that pipeline).
  std::mutex m;
  std::condition_variable cv;
  int asked = 0, flushed = 0;
  bool done = false;
  std::string flusher_error;
  std::thread flusher([&] {
    std::unique_lock lock(m);
    for (;;) {
      cv.wait(lock, [&] { return done || asked > flushed; });
      if (asked == flushed) return;
      lock.unlock();
      std::string answer;
      try {
        answer = server.cli({"SCRIPT", "FLUSH"});
      } catch (const std::exception& e) {
        answer = e.what();
      }
      lock.lock();
      if (answer != "OK") flusher_error = answer;
      ++flushed;
      cv.notify_all();
    }
  });
  auto wait_flushed = [&] {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return flushed == asked; });
  };
  uint64_t expected = 0;
  bool in_order = true;
  for (int k = 0; k <= 40; ++k) {
    if (k % 10 == 5) {  // a flush racing batch k
      std::lock_guard lock(m);
      ++asked;
      cv.notify_all();
    }
    // Done before batch k+1: so each flush is seen (as NOSCRIPT) by exactly
    // one run, and two flushes never meet in one.
    if (k % 10 == 6) wait_flushed();
    for (const Reply& r : host.run(batch)) {
      if (!r.ok || r.sum != ++expected) in_order = false;
    }
  }
  {
    std::lock_guard lock(m);
    done = true;
    cv.notify_all();
  }
  flusher.join();
  CHECK(flusher_error.empty());
  CHECK(in_order);
  CHECK(expected == 41 * 500);
  CHECK(hgetall(server, key)["s:0"] == std::to_string(41 * 500));
  CHECK(host.scripts.reloads() == 4);
}

TEST_CASE("fleet redis connection: an ACL user (AUTH user password), a wrong password, and a key it may not touch") {
  RedisServerOptions o;
  o.extra_args = {"--user", "swt", "on", ">hunter2", "~swt:*", "+@all"};
  RedisServer server(o);
  RedisConnection conn;
  const swthrottle::fleet::Credentials user{"swt", "hunter2", "SWTHROTTLE_REDIS"};
  REQUIRE_MESSAGE(conn.connect(address_of(server), 0, kTimeout, user), conn.error());
  const std::string_view whoami[] = {"ACL", "WHOAMI"};
  ReplyPtr r = conn.command(whoami);
  REQUIRE(r);
  CHECK(std::string(r->str, r->len) == "swt");
  // Its ACL allows swt:* keys only: what Redis says, and where to look.
  const std::string_view other[] = {"SET", "other", "1"};
  r = conn.command(other);
  REQUIRE(r);
  REQUIRE(r->type == REDIS_REPLY_ERROR);
  const std::string refusal = conn.explain({r->str, r->len});
  CHECK(refusal.starts_with("NOPERM"));
  CHECK(refusal.ends_with(" (the ACL of the user SWTHROTTLE_REDIS_USER names)"));

  const swthrottle::fleet::Credentials wrong{"swt", "hunter3", "SWTHROTTLE_REDIS"};
  CHECK_FALSE(conn.connect(address_of(server), 0, kTimeout, wrong));
  CHECK(conn.error() == "redis " + address_of(server).label() +
                            ": AUTH: WRONGPASS: the server refused the user name or password (SWTHROTTLE_REDIS_USER, "
                            "SWTHROTTLE_REDIS_PASSWORD)");
  CHECK(conn.error().find("hunter") == std::string::npos);
}
