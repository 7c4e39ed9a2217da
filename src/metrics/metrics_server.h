// MetricsServer: the HTTP endpoint of a running swthrottle (man page:
// METRICS), on cpp-httplib in a thread of its own:
//
//   GET /metrics   200, the Prometheus text of snapshot() (exposition.h)
//   GET /healthz   200 "ok\n", or 503 with health_of()'s problems, one a line
//   anything else  404
//
// snapshot() is called on the server's threads, once per request: it must be
// safe to call from any thread. The destructor stops the server and waits
// for the requests in flight.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "metrics/snapshot.h"
#include "util/result.h"

namespace httplib {
class Server;
}

namespace swthrottle::metrics {

// "ADDR:PORT", "[IPV6]:PORT" or ":PORT" (every address: the host is "") into
// host and port (0-65535; 0 asks for a free port). The IPv6 host comes
// without its brackets.
Result<std::pair<std::string, int>> parse_listen(std::string_view listen);

class MetricsServer {
 public:
  // Binds `listen` (see parse_listen; ":PORT" binds "::", both IPv6 and
  // IPv4, or 0.0.0.0 where there is no IPv6) and starts serving. A bad
  // address or one that cannot be bound (in use, not ours) is an Error
  // naming it.
  static Result<std::unique_ptr<MetricsServer>> start(const std::string& listen, std::function<Snapshot()> snapshot,
                                                      int64_t stall_ms);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }  // the bound port (the free one for ":0")

 private:
  MetricsServer(std::function<Snapshot()> snapshot, int64_t stall_ms);

  std::function<Snapshot()> snapshot_;
  int64_t stall_ms_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::atomic<bool> served_{false};  // listen_after_bind() returned (an accept error, or stop())
  std::thread thread_;
};

}  // namespace swthrottle::metrics
