// HttpServer: the small HTTP/1.1 server under /metrics and /healthz (man
// page: METRICS): GET and HEAD of a few paths, answered from memory.
//
// Why not a thread per connection (cpp-httplib's model, which this
// replaces): its pool of two threads was held by two clients that connect
// and send nothing, or trickle a header a byte a second (its read timeout
// is per recv(2); nothing bounds a whole head), and every scrape then
// waited; a bigger pool only moves the number of such clients it takes.
// Here one thread serves every connection with poll(2) and non-blocking
// sockets, and each connection is held to deadlines, so a slow or stuck
// client costs a descriptor and a few KiB, never a thread or another
// client's answer:
// - a request head must arrive whole within kHeadTimeoutMs of its first byte
//   (of the connection, for the first request), and be at most
//   kMaxHeadBytes (http_request.h; more is 431);
// - a kept-alive connection waits at most kIdleTimeoutMs for its next
//   request, and serves at most kMaxRequests (the last answer says
//   "Connection: close");
// - an answer must be taken by the client within kWriteTimeoutMs;
// - at most kMaxConnections are open: a new one beyond takes the place of
//   the one that has waited longest for a request (a slow client's, or an
//   idle one), so that clients who send their request at once (a scrape)
//   are always served;
// - an answer is one write(2) of head and body, on a socket with TCP_NODELAY:
//   a head and a body written apart met Nagle's algorithm and the client's
//   delayed ACK, 30 ms per request on a kept-alive connection.
//
// The handler runs on the server's thread, once per request: it must be
// quick and must not block (MetricsServer's builds its text from a snapshot).
// The destructor stops the thread and closes every connection.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "util/clock.h"
#include "util/result.h"

namespace swthrottle::metrics {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class HttpServer {
 public:
  static constexpr int64_t kHeadTimeoutMs = 2'000;
  static constexpr int64_t kIdleTimeoutMs = 5'000;
  static constexpr int64_t kWriteTimeoutMs = 5'000;
  static constexpr std::size_t kMaxConnections = 256;
  static constexpr uint32_t kMaxRequests = 1'000;
  static constexpr int64_t kDrainMs = 1'000;      // reading what a closed connection's client still sends
  static constexpr int64_t kAcceptPauseMs = 100;  // out of descriptors: accept again after this

  using Handler = std::function<HttpResponse(std::string_view path)>;

  // Binds host:port (host "" : every address, IPv6 and IPv4 alike, or IPv4
  // alone without IPv6; a name is resolved, its first address that binds
  // taken; port 0: a free one) and starts serving. Error{what}: why it
  // cannot listen there (errno's words; "in use" for EADDRINUSE).
  static Result<std::unique_ptr<HttpServer>> start(const std::string& host, int port, Handler handler,
                                                   const Clock& clock = system_clock());
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }

 private:
  struct Connection;
  HttpServer(int listen_fd, int port, Handler handler, const Clock& clock);
  void run();
  void accept_all();
  void admit(int fd);
  // One connection's turn: read, answer, write; false when it is done with.
  bool serve(Connection& c, short revents);
  bool answer(Connection& c);
  bool flush(Connection& c);
  int64_t next_deadline() const;

  const int listen_fd_;
  const int port_;
  const Handler handler_;
  const Clock& clock_;
  int stop_fd_ = -1;  // eventfd written by the destructor
  int64_t accept_paused_until_ = 0;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::thread thread_;  // last: started when everything else is set
};

}  // namespace swthrottle::metrics
