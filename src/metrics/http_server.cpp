#include "metrics/http_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "metrics/http_request.h"

namespace swthrottle::metrics {

namespace {

const char* reason_of(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
  }
}

// A listening socket on `ai`, or -1 with errno set.
int listen_on(const addrinfo& ai) {
  const int fd = ::socket(ai.ai_family, ai.ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai.ai_protocol);
  if (fd < 0) return -1;
  const int yes = 1, no = 0;
  // SO_REUSEADDR (a restart while old connections are in TIME_WAIT), never
  // SO_REUSEPORT: a second swthrottle on the port must fail, not share it.
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (ai.ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof no);
  if (::bind(fd, ai.ai_addr, ai.ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

int bound_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
}

}  // namespace

struct HttpServer::Connection {
  int fd = -1;
  std::string in;             // bytes read and not yet answered (a pipelined request's too)
  std::string out;            // the answer being written
  std::size_t written = 0;    // of `out`
  bool close_after = false;   // close once `out` is written
  bool draining = false;      // the answer is out and our side shut: what the client still sends is read and dropped
  uint32_t served = 0;        // requests answered
  int64_t waiting_since = 0;  // when the wait for the current request (or write) began
  int64_t deadline = 0;       // close at this time (steady ms) unless it moved on
};

Result<std::unique_ptr<HttpServer>> HttpServer::start(const std::string& host, int port, Handler handler,
                                                      const Clock& clock) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  // "": every address; "::" first (IPv6 and IPv4 alike), 0.0.0.0 without IPv6.
  const std::vector<std::string> hosts = host.empty() ? std::vector<std::string>{"::", "0.0.0.0"} : std::vector{host};
  int err = 0;
  for (const std::string& h : hosts) {
    addrinfo* found = nullptr;
    if (const int gai = ::getaddrinfo(h.c_str(), std::to_string(port).c_str(), &hints, &found); gai != 0) {
      if (h == hosts.back()) return Error{"", 0, 0, fmt::format("cannot listen there: {}", ::gai_strerror(gai))};
      continue;
    }
    int fd = -1;
    for (const addrinfo* ai = found; ai != nullptr && fd < 0; ai = ai->ai_next) {
      fd = listen_on(*ai);
      if (fd < 0) err = errno;
    }
    ::freeaddrinfo(found);
    if (fd >= 0) return std::unique_ptr<HttpServer>(new HttpServer(fd, bound_port(fd), std::move(handler), clock));
  }
  std::string what = "cannot listen there";
  if (err == EADDRINUSE) what += ": the address is in use (another swthrottle or exporter on that port?)";
  else if (err != 0) what += std::string(": ") + std::strerror(err);
  return Error{"", 0, 0, what};
}

HttpServer::HttpServer(int listen_fd, int port, Handler handler, const Clock& clock)
    : listen_fd_(listen_fd), port_(port), handler_(std::move(handler)), clock_(clock) {
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  // The socket listens from bind on: a client that connects before the
  // thread polls waits in the backlog.
  thread_ = std::thread([this] { run(); });
}

HttpServer::~HttpServer() {
  const uint64_t one = 1;
  if (stop_fd_ < 0 || ::write(stop_fd_, &one, sizeof one) < 0) {
    // Without the eventfd the loop sees the stop at its next deadline check;
    // a full counter (EAGAIN) is readable anyway.
  }
  if (thread_.joinable()) thread_.join();
  for (const auto& c : connections_) ::close(c->fd);
  ::close(listen_fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

void HttpServer::run() {
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    fds.push_back({stop_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, static_cast<short>(clock_.steady_ms() >= accept_paused_until_ ? POLLIN : 0), 0});
    for (const auto& c : connections_)
      fds.push_back({c->fd, static_cast<short>(c->written < c->out.size() ? POLLOUT : POLLIN), 0});
    const int64_t wait = std::clamp<int64_t>(next_deadline() - clock_.steady_ms(), 0, 1'000);
    if (::poll(fds.data(), fds.size(), static_cast<int>(wait)) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;
    // Connections first (their entries follow the two fixed ones), then new ones.
    const int64_t now = clock_.steady_ms();
    std::size_t kept = 0;
    for (std::size_t i = 0; i < connections_.size(); ++i) {
      Connection& c = *connections_[i];
      const short revents = fds[i + 2].revents;
      const bool alive = (revents != 0 ? serve(c, revents) : true) && now < c.deadline;
      if (alive) {
        connections_[kept++] = std::move(connections_[i]);
      } else {
        ::close(c.fd);
      }
    }
    connections_.resize(kept);
    if (fds[1].revents != 0) accept_all();
  }
}

void HttpServer::accept_all() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      admit(fd);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    // Out of descriptors: the pending connections wait in the backlog, and
    // the listening socket is not polled for a while (it would stay readable).
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
      accept_paused_until_ = clock_.steady_ms() + kAcceptPauseMs;
    return;  // EAGAIN: none left
  }
}

void HttpServer::admit(int fd) {
  if (connections_.size() >= kMaxConnections) {
    // The connection that has waited longest for a request gives way: a slow
    // client's, or an idle one's. One writing an answer is never cut off.
    auto oldest = connections_.end();
    for (auto it = connections_.begin(); it != connections_.end(); ++it)
      if ((*it)->written == (*it)->out.size() &&
          (oldest == connections_.end() || (*it)->waiting_since < (*oldest)->waiting_since))
        oldest = it;
    if (oldest == connections_.end()) {
      ::close(fd);
      return;
    }
    ::close((*oldest)->fd);
    connections_.erase(oldest);
  }
  const int yes = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  auto c = std::make_unique<Connection>();
  c->fd = fd;
  c->waiting_since = clock_.steady_ms();
  c->deadline = c->waiting_since + kHeadTimeoutMs;
  connections_.push_back(std::move(c));
}

bool HttpServer::serve(Connection& c, short revents) {
  if (c.written < c.out.size()) return flush(c);
  if ((revents & (POLLIN | POLLHUP | POLLERR)) == 0) return true;
  char buf[4096];
  const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
  if (n == 0) return false;  // the client is done
  if (n < 0) return errno == EAGAIN || errno == EINTR;
  if (c.draining) return true;
  // The first byte of a later request starts its head's clock (the kept-alive
  // connection had the longer idle deadline until now; the first request's
  // clock started with the connection).
  if (c.in.empty() && c.served > 0) c.deadline = clock_.steady_ms() + kHeadTimeoutMs;
  c.in.append(buf, static_cast<std::size_t>(n));
  return answer(c);
}

// Answers the request at the front of c.in once its head is whole.
bool HttpServer::answer(Connection& c) {
  const std::size_t end = head_end(c.in);
  if (end == 0 && c.in.size() <= kMaxHeadBytes) return true;  // more to come
  const RequestHead req = parse_request_head(end == 0 ? std::string_view(c.in) : std::string_view(c.in).substr(0, end));
  HttpResponse res;
  if (req.error != 0) {
    res.status = req.error;
    res.body = std::string(reason_of(req.error)) + "\n";
  } else {
    res = handler_(req.path);
  }
  ++c.served;
  // A request that is not understood, or that came with a body we do not
  // read, leaves the stream where no next request can be found: close.
  c.close_after = !req.keep_alive || req.error != 0 || req.has_body || end == 0 || c.served >= kMaxRequests;
  c.in.erase(0, end == 0 ? c.in.size() : end);
  c.out = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: {}\r\n", res.status,
                      reason_of(res.status), res.content_type, res.body.size(), c.close_after ? "close" : "keep-alive");
  if (res.status == 405) c.out += "Allow: GET, HEAD\r\n";
  c.out += "\r\n";
  if (!req.head_only) c.out += res.body;  // one write with the head: see the file comment (Nagle)
  c.written = 0;
  c.waiting_since = clock_.steady_ms();
  c.deadline = c.waiting_since + kWriteTimeoutMs;
  return flush(c);
}

bool HttpServer::flush(Connection& c) {
  // Taken before the answer leaves: the client cannot see the answer before
  // the time its next deadline counts from.
  const int64_t now = clock_.steady_ms();
  while (c.written < c.out.size()) {
    const ssize_t n = ::send(c.fd, c.out.data() + c.written, c.out.size() - c.written, MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EINTR;  // the rest when the socket takes it
    c.written += static_cast<std::size_t>(n);
  }
  c.out.clear();
  c.written = 0;
  if (c.close_after) {
    // Closing with unread bytes (a body we do not read, the rest of a bad
    // head) would reset the connection, and the client could lose the
    // answer: our side is shut, and what still comes is read and dropped
    // until the client closes, for at most kDrainMs.
    ::shutdown(c.fd, SHUT_WR);
    c.draining = true;
    c.in.clear();
    c.deadline = now + kDrainMs;
    return true;
  }
  c.waiting_since = now;
  c.deadline = c.waiting_since + (c.in.empty() ? kIdleTimeoutMs : kHeadTimeoutMs);
  // A request sent right behind the last one (pipelined) is answered now.
  return c.in.empty() || answer(c);
}

int64_t HttpServer::next_deadline() const {
  const int64_t now = clock_.steady_ms();
  int64_t soonest = now + 1'000;
  if (accept_paused_until_ > now) soonest = std::min(soonest, accept_paused_until_);
  for (const auto& c : connections_) soonest = std::min(soonest, c->deadline);
  return soonest;
}

}  // namespace swthrottle::metrics
