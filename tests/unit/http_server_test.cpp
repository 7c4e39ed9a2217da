// HttpServer (metrics/http_server.h) over real sockets on 127.0.0.1, its
// deadlines on a FakeClock: a head that does not come whole in time, an idle
// kept-alive connection, too many connections, too big a head; keep-alive,
// pipelining, HEAD and methods it does not take.
#include "metrics/http_server.h"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "support/fake_clock.h"

using swthrottle::metrics::HttpResponse;
using swthrottle::metrics::HttpServer;
using swthrottle::test::FakeClock;

namespace {

// Bounds a wait for something that is surely coming (not a speed goal).
constexpr int kWaitMs = 5'000;

struct Client {
  int fd = -1;
  explicit Client(int port) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~Client() { ::close(fd); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void send(const std::string& bytes) {
    REQUIRE(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()));
  }

  // Reads until `done(text)` holds or the server closes; "" + closed on a timeout.
  std::string read_until(const std::function<bool(const std::string&)>& done, bool* closed = nullptr) {
    std::string got;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while (!done(got)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      pollfd p{fd, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[65536];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {
        if (closed != nullptr) *closed = true;
        break;
      }
      got.append(buf, static_cast<std::size_t>(n));
    }
    return got;
  }
  // The server closed the connection (EOF or reset) within the bound.
  bool closed_by_server() {
    bool closed = false;
    read_until([](const std::string&) { return false; }, &closed);
    return closed;
  }
  // Nothing to read right now, and still open.
  bool quiet() {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 50) == 0;
  }
};

// Complete answers in `text`, by their Content-Length.
int answers_in(const std::string& text) {
  int n = 0;
  std::size_t at = 0;
  while (true) {
    const std::size_t end = text.find("\r\n\r\n", at);
    if (end == std::string::npos) return n;
    const std::size_t cl = text.find("Content-Length: ", at);
    if (cl == std::string::npos || cl > end) return n;
    const std::size_t len = std::stoul(text.substr(cl + 16));
    if (text.size() < end + 4 + len) return n;
    ++n;
    at = end + 4 + len;
  }
}

struct Fixture {
  FakeClock clock;
  std::atomic<int> calls{0};
  std::unique_ptr<HttpServer> server;
  Fixture() {
    auto s = HttpServer::start(
        "127.0.0.1", 0,
        [this](std::string_view path) {
          ++calls;
          HttpResponse r;
          r.body = "path " + std::string(path) + "\n";
          return r;
        },
        clock);
    REQUIRE(s.ok());
    server = std::move(*s);
  }
  int port() const { return server->port(); }
};

const std::string kGet = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";

// A request answered on a connection made after `c` shows that `c` was
// accepted (in order, from the backlog) before now: its deadline counts
// from the fake time now, not from a later one.
void accepted(Fixture& f) {
  Client probe(f.port());
  probe.send("GET /probe HTTP/1.1\r\nConnection: close\r\n\r\n");
  REQUIRE(answers_in(probe.read_until([](const std::string& t) { return answers_in(t) == 1; })) == 1);
}

}  // namespace

TEST_CASE("http server: kept-alive requests, pipelined too, each answered in one piece") {
  Fixture f;
  Client c(f.port());
  for (int i = 0; i < 3; ++i) {
    c.send(kGet);
    const std::string a = c.read_until([](const std::string& t) { return answers_in(t) == 1; });
    CHECK(a.starts_with("HTTP/1.1 200 OK\r\n"));
    CHECK(a.find("Connection: keep-alive\r\n") != std::string::npos);
    CHECK(a.ends_with("\r\n\r\npath /metrics\n"));
  }
  // Three at once: three answers, in order.
  c.send("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\nGET /c HTTP/1.1\r\n\r\n");
  const std::string three = c.read_until([](const std::string& t) { return answers_in(t) == 3; });
  CHECK(answers_in(three) == 3);
  CHECK(three.find("path /a") < three.find("path /b"));
  CHECK(three.find("path /b") < three.find("path /c"));
  CHECK(f.calls == 6);
}

TEST_CASE("http server: HEAD has the heads of GET, other methods 405, HTTP/1.0 closes") {
  Fixture f;
  {
    Client c(f.port());
    c.send("HEAD /metrics HTTP/1.1\r\n\r\n");
    const std::string a = c.read_until([](const std::string& t) { return t.find("\r\n\r\n") != std::string::npos; });
    CHECK(a.find("Content-Length: 14\r\n") != std::string::npos);
    CHECK(a.ends_with("\r\n\r\n"));
    CHECK(c.quiet());  // no body follows
  }
  {
    Client c(f.port());
    c.send("POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
    bool closed = false;
    const std::string a = c.read_until([](const std::string&) { return false; }, &closed);
    CHECK(a.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
    CHECK(a.find("Allow: GET, HEAD\r\n") != std::string::npos);
    CHECK(closed);
  }
  {
    Client c(f.port());
    c.send("GET /healthz HTTP/1.0\r\n\r\n");
    bool closed = false;
    const std::string a = c.read_until([](const std::string&) { return false; }, &closed);
    CHECK(a.find("Connection: close\r\n") != std::string::npos);
    CHECK(a.ends_with("path /healthz\n"));
    CHECK(closed);
  }
}

TEST_CASE("http server: a head that is not whole within 2 s is closed, however slowly it trickles") {
  Fixture f;
  Client slow(f.port());
  slow.send("GET /metrics HTTP/1.1\r\nX-A: ");
  accepted(f);
  f.clock.advance(1'500);
  slow.send("b");  // a byte keeps no head alive past its deadline
  CHECK(slow.quiet());
  f.clock.advance(600);
  CHECK(slow.closed_by_server());
  // And one that sends nothing at all.
  Client mute(f.port());
  accepted(f);
  CHECK(mute.quiet());
  f.clock.advance(2'100);
  CHECK(mute.closed_by_server());
  CHECK(f.calls == 2);  // the probes
}

TEST_CASE("http server: a kept-alive connection idle for 5 s is closed, and after 1000 requests it says close") {
  Fixture f;
  Client c(f.port());
  c.send(kGet);
  CHECK(answers_in(c.read_until([](const std::string& t) { return answers_in(t) == 1; })) == 1);
  f.clock.advance(4'000);
  CHECK(c.quiet());
  c.send(kGet);  // in time: served, and the idle time starts again
  CHECK(answers_in(c.read_until([](const std::string& t) { return answers_in(t) == 1; })) == 1);
  f.clock.advance(5'100);
  CHECK(c.closed_by_server());

  Client many(f.port());
  std::string all;
  for (uint32_t i = 0; i < HttpServer::kMaxRequests; ++i) all += kGet;
  many.send(all);
  bool closed = false;
  const std::string got = many.read_until([](const std::string&) { return false; }, &closed);
  CHECK(answers_in(got) == static_cast<int>(HttpServer::kMaxRequests));
  CHECK(got.find("Connection: close\r\n") == got.rfind("Connection: "));  // the last one only
  CHECK(closed);
}

TEST_CASE("http server: a head over 8 KiB is answered 431 and closed") {
  Fixture f;
  Client c(f.port());
  c.send("GET /metrics HTTP/1.1\r\nX-Pad: " + std::string(9000, 'a'));
  bool closed = false;
  const std::string a = c.read_until([](const std::string&) { return false; }, &closed);
  CHECK(a.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
  CHECK(closed);
  CHECK(f.calls == 0);
}

TEST_CASE("http server: past 256 connections, the one waiting longest for a request gives way") {
  Fixture f;
  std::vector<std::unique_ptr<Client>> idle;
  for (std::size_t i = 0; i < HttpServer::kMaxConnections; ++i) {
    idle.push_back(std::make_unique<Client>(f.port()));
    f.clock.advance(1);  // each waits a little less long than the one before
  }
  // A scrape beyond the cap is served...
  Client scrape(f.port());
  scrape.send(kGet);
  CHECK(answers_in(scrape.read_until([](const std::string& t) { return answers_in(t) == 1; })) == 1);
  // ...in the place of the first idle one.
  CHECK(idle.front()->closed_by_server());
  CHECK(idle[1]->quiet());
}
