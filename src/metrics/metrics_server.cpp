#include "metrics/metrics_server.h"

#include <httplib.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>
#include <vector>

#include "metrics/exposition.h"
#include "metrics/health.h"

namespace swthrottle::metrics {

namespace {

// A metrics endpoint gets a scrape every few seconds: two threads are plenty,
// and the default pool (8 or more) would be idle threads in every daemon.
constexpr std::size_t kThreads = 2;

Error listen_error(std::string_view listen, const std::string& what) {
  return Error{"", 0, 0, "--metrics-listen " + std::string(listen) + ": " + what};
}

}  // namespace

Result<std::pair<std::string, int>> parse_listen(std::string_view listen) {
  std::string host;
  std::string_view port_text;
  if (!listen.empty() && listen.front() == '[') {
    const std::size_t close = listen.find(']');
    if (close == std::string_view::npos || close + 1 >= listen.size() || listen[close + 1] != ':')
      return listen_error(listen, "expected [IPV6]:PORT");
    host = std::string(listen.substr(1, close - 1));
    if (host.empty()) return listen_error(listen, "an empty IPv6 address");
    port_text = listen.substr(close + 2);
  } else {
    const std::size_t colon = listen.rfind(':');
    if (colon == std::string_view::npos) return listen_error(listen, "expected ADDR:PORT or :PORT");
    host = std::string(listen.substr(0, colon));
    // A bare IPv6 address ("::1:9100") cannot be told from its port.
    if (host.find(':') != std::string::npos)
      return listen_error(listen, "an IPv6 address goes in brackets: [ADDR]:PORT");
    port_text = listen.substr(colon + 1);
  }
  int port = -1;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535)
    return listen_error(listen, "the port must be a number from 0 to 65535");
  return std::pair<std::string, int>{std::move(host), port};
}

MetricsServer::MetricsServer(std::function<Snapshot()> snapshot, int64_t stall_ms)
    : snapshot_(std::move(snapshot)), stall_ms_(stall_ms), server_(std::make_unique<httplib::Server>()) {}

MetricsServer::~MetricsServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& listen,
                                                            std::function<Snapshot()> snapshot, int64_t stall_ms) {
  auto where = parse_listen(listen);
  if (!where) return where.error();
  std::unique_ptr<MetricsServer> m(new MetricsServer(std::move(snapshot), stall_ms));
  httplib::Server& srv = *m->server_;
  srv.new_task_queue = [] { return new httplib::ThreadPool(kThreads); };

  MetricsServer* self = m.get();
  srv.Get("/metrics", [self](const httplib::Request&, httplib::Response& res) {
    res.set_content(prometheus_text(self->snapshot_()), kPrometheusContentType);
  });
  srv.Get("/healthz", [self](const httplib::Request&, httplib::Response& res) {
    const Health h = health_of(self->snapshot_(), self->stall_ms_);
    std::string body;
    if (h.ok) body = "ok\n";
    for (const std::string& p : h.problems) body += p + "\n";
    res.status = h.ok ? 200 : 503;
    res.set_content(body, "text/plain; charset=utf-8");
  });
  // Any other path: httplib's own 404.

  const auto& [host, port] = *where;
  // ":PORT": "::" takes IPv6 and IPv4 alike (httplib clears IPV6_V6ONLY);
  // without IPv6 in the kernel, 0.0.0.0.
  std::vector<std::string> hosts = host.empty() ? std::vector<std::string>{"::", "0.0.0.0"} : std::vector{host};
  int bound = -1;
  int err = 0;
  for (const std::string& h : hosts) {
    errno = 0;
    bound = port == 0 ? srv.bind_to_any_port(h) : (srv.bind_to_port(h, port) ? port : -1);
    if (bound > 0) break;
    // httplib reports a failed bind as a bare false: the errno of the
    // failed call is still there (nothing after it sets errno on failure).
    err = errno;
  }
  if (bound <= 0) {
    std::string what = "cannot listen there";
    if (err == EADDRINUSE) what += ": the address is in use (another swthrottle or exporter on that port?)";
    else if (err != 0) what += std::string(": ") + std::strerror(err);
    return listen_error(listen, what);
  }
  m->port_ = bound;
  // The socket listens from bind on: a connection made before the thread
  // reaches accept() waits in the backlog, so start() returns ready to serve.
  m->thread_ = std::thread([self] {
    self->server_->listen_after_bind();
    self->served_ = true;
  });
  // httplib's stop() does nothing until listen_after_bind() has marked the
  // server running: a MetricsServer destroyed right away would join a
  // thread that never stops. Marking it is the thread's first step.
  while (!srv.is_running() && !m->served_) std::this_thread::yield();
  return m;
}

}  // namespace swthrottle::metrics
