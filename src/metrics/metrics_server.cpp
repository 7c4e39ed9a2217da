#include "metrics/metrics_server.h"

#include <charconv>

#include <fmt/format.h>

#include "metrics/exposition.h"
#include "metrics/health.h"

namespace swthrottle::metrics {

namespace {

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
    : snapshot_(std::move(snapshot)), stall_ms_(stall_ms) {}

MetricsServer::~MetricsServer() = default;

HttpResponse MetricsServer::respond(std::string_view path) const {
  HttpResponse res;
  if (path == "/metrics") {
    res.content_type = kPrometheusContentType;
    res.body = prometheus_text(snapshot_());
  } else if (path == "/healthz") {
    const Health h = health_of(snapshot_(), stall_ms_);
    if (h.ok) res.body = "ok\n";
    for (const std::string& p : h.problems) res.body += p + "\n";
    res.status = h.ok ? 200 : 503;
  } else {
    res.status = 404;
    res.body = "not found: the paths are /metrics and /healthz\n";
  }
  return res;
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& listen,
                                                            std::function<Snapshot()> snapshot, int64_t stall_ms) {
  auto where = parse_listen(listen);
  if (!where) return where.error();
  std::unique_ptr<MetricsServer> m(new MetricsServer(std::move(snapshot), stall_ms));
  const MetricsServer* self = m.get();
  auto server =
      HttpServer::start(where->first, where->second, [self](std::string_view path) { return self->respond(path); });
  if (!server) return listen_error(listen, server.error().what);
  m->port_ = (*server)->port();
  m->server_ = std::move(*server);
  return m;
}

std::string listen_note(std::string_view listen) {
  auto where = parse_listen(listen);
  if (!where) return "metrics: " + where.error().what + "\n";
  const auto& [host, port] = *where;
  if (host.empty() || host == "0.0.0.0" || host == "::")
    return fmt::format(
        "metrics: /metrics and /healthz listen on every address of this machine{} (all interfaces), port {}: "
        "reachable from other hosts unless a firewall says otherwise; --metrics-listen 127.0.0.1:{} keeps them "
        "local\n",
        host == "0.0.0.0" ? " (IPv4)" : "", port, port);
  return fmt::format("metrics: /metrics and /healthz listen on {} port {}\n", host, port);
}

}  // namespace swthrottle::metrics
