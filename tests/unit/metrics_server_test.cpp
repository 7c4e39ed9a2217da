// MetricsServer over real sockets on 127.0.0.1, and parse_listen.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include "metrics/exposition.h"
#include "metrics/metrics_server.h"
#include "support/prometheus_server.h"

using swthrottle::metrics::MetricsServer;
using swthrottle::metrics::parse_listen;
using swthrottle::metrics::Snapshot;
using swthrottle::test::http_get;

namespace {

Snapshot ready_snapshot() {
  Snapshot s;
  s.wall_ms = 1'764'130'505'000;
  s.started_ms = s.wall_ms - 1'000;
  s.ready = true;
  s.counts.lines = 42;
  return s;
}

std::unique_ptr<MetricsServer> start_ok(std::function<Snapshot()> snapshot) {
  auto m = MetricsServer::start("127.0.0.1:0", std::move(snapshot), 30'000);
  if (!m) FAIL("MetricsServer::start: " << m.error().str());
  REQUIRE((*m)->port() > 0);
  return std::move(*m);
}

}  // namespace

TEST_CASE("metrics: MetricsServer: GET /metrics serves the Prometheus text of a fresh snapshot") {
  std::atomic<int> calls{0};
  auto server = start_ok([&calls] {
    ++calls;
    return ready_snapshot();
  });
  const auto r = http_get(server->port(), "/metrics");
  CHECK(r.status == 200);
  CHECK(r.headers.find("Content-Type: text/plain; version=0.0.4; charset=utf-8") != std::string::npos);
  CHECK(r.body == swthrottle::metrics::prometheus_text(ready_snapshot()));
  CHECK(calls == 1);
  CHECK(http_get(server->port(), "/metrics").status == 200);
  CHECK(calls == 2);  // one snapshot per scrape, never a cached one
}

TEST_CASE("metrics: MetricsServer: /healthz answers 200 ok, or 503 with the problems") {
  std::atomic<bool> ready{true};
  auto server = start_ok([&ready] {
    Snapshot s = ready_snapshot();
    s.ready = ready;
    if (!ready) {
      s.fleet.emplace();
      s.fleet->counts.degraded_now = true;
    }
    return s;
  });
  auto r = http_get(server->port(), "/healthz");
  CHECK(r.status == 200);
  CHECK(r.body == "ok\n");

  ready = false;
  r = http_get(server->port(), "/healthz");
  CHECK(r.status == 503);
  CHECK(r.body ==
        "not ready: the rules are not loaded or the inputs not open yet\n"
        "fleet degraded: fleet rules decide alone, the fleet does not answer\n");
}

TEST_CASE("metrics: MetricsServer: any other path is 404") {
  auto server = start_ok(ready_snapshot);
  CHECK(http_get(server->port(), "/").status == 404);
  CHECK(http_get(server->port(), "/metrics/x").status == 404);
  CHECK(http_get(server->port(), "/stats").status == 404);
}

TEST_CASE("metrics: MetricsServer: after the destructor the port refuses connections") {
  int port = 0;
  {
    auto server = start_ok(ready_snapshot);
    port = server->port();
  }
  CHECK_THROWS_AS(http_get(port, "/metrics"), std::runtime_error);
}

TEST_CASE("metrics: MetricsServer: an address in use is a clear error") {
  // A socket of our own holds the port, listening.
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(fd, 1) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const std::string listen = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));

  auto m = MetricsServer::start(listen, ready_snapshot, 30'000);
  ::close(fd);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().str() == "--metrics-listen " + listen +
                               ": cannot listen there: the address is in use (another swthrottle or exporter on "
                               "that port?)");
}

TEST_CASE("metrics: MetricsServer: a bad listen address is an error before any bind") {
  auto m = MetricsServer::start("localhost", ready_snapshot, 30'000);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().str() == "--metrics-listen localhost: expected ADDR:PORT or :PORT");
}

TEST_CASE("metrics: parse_listen: ADDR:PORT, [IPV6]:PORT and :PORT") {
  struct Row {
    const char* in;
    const char* host;
    int port;
  };
  const Row good[] = {
      {"127.0.0.1:9100", "127.0.0.1", 9100}, {"[::1]:9100", "::1", 9100}, {":9100", "", 9100},
      {"localhost:0", "localhost", 0},       {"[::]:65535", "::", 65535}, {"0.0.0.0:1", "0.0.0.0", 1},
  };
  for (const Row& row : good) {
    CAPTURE(row.in);
    auto r = parse_listen(row.in);
    REQUIRE(r.ok());
    CHECK(r->first == row.host);
    CHECK(r->second == row.port);
  }
  struct Bad {
    const char* in;
    const char* why;
  };
  const Bad bad[] = {
      {"", "expected ADDR:PORT or :PORT"},
      {"9100", "expected ADDR:PORT or :PORT"},
      {"127.0.0.1:", "the port must be a number from 0 to 65535"},
      {"127.0.0.1:65536", "the port must be a number from 0 to 65535"},
      {"127.0.0.1:-1", "the port must be a number from 0 to 65535"},
      {"127.0.0.1:91x", "the port must be a number from 0 to 65535"},
      {"::1:9100", "an IPv6 address goes in brackets: [ADDR]:PORT"},
      {"[::1]9100", "expected [IPV6]:PORT"},
      {"[::1", "expected [IPV6]:PORT"},
      {"[]:9100", "an empty IPv6 address"},
  };
  for (const Bad& row : bad) {
    CAPTURE(row.in);
    auto r = parse_listen(row.in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().what == std::string("--metrics-listen ") + row.in + ": " + row.why);
  }
}
