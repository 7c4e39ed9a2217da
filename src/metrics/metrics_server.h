// MetricsServer: the HTTP endpoint of a running swthrottle (man page:
// METRICS), on an HttpServer (http_server.h) in a thread of its own:
//
//   GET /metrics   200, the Prometheus text of snapshot() (exposition.h)
//   GET /healthz   200 "ok\n", or 503 with health_of()'s problems, one a line
//   anything else  404 (HEAD: the same heads; other methods 405)
//
// The server's limits (a whole request head within 2 s, 8 KiB of it, 256
// connections, 1000 requests and 5 s of idleness per kept-alive connection)
// keep slow or stuck clients from holding /healthz or a scrape up.
//
// snapshot() is called on the server's thread, once per request: it must be
// safe to call from any thread, and quick. The destructor stops the server.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "metrics/http_server.h"
#include "metrics/snapshot.h"
#include "util/result.h"

namespace swthrottle::metrics {

// "ADDR:PORT", "[IPV6]:PORT" or ":PORT" (every address: the host is "") into
// host and port (0-65535; 0 asks for a free port). The IPv6 host comes
// without its brackets.
Result<std::pair<std::string, int>> parse_listen(std::string_view listen);

class MetricsServer {
 public:
  // Binds `listen` (see parse_listen; ":PORT" binds "::", both IPv6 and
  // IPv4, or 0.0.0.0 where there is no IPv6: every address of the machine)
  // and starts serving. A bad address or one that cannot be bound (in use,
  // not ours) is an Error naming it.
  static Result<std::unique_ptr<MetricsServer>> start(const std::string& listen, std::function<Snapshot()> snapshot,
                                                      int64_t stall_ms);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }  // the bound port (the free one for ":0")

 private:
  MetricsServer(std::function<Snapshot()> snapshot, int64_t stall_ms);
  HttpResponse respond(std::string_view path) const;

  std::function<Snapshot()> snapshot_;
  int64_t stall_ms_;
  int port_ = 0;
  std::unique_ptr<HttpServer> server_;  // last: stopped before the rest goes
};

// What --check says of --metrics-listen, one line: where it listens, and for
// ":PORT", 0.0.0.0 and [::] that this is every address of the machine.
std::string listen_note(std::string_view listen);

}  // namespace swthrottle::metrics
