#include "support/prometheus_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

extern char** environ;

namespace swthrottle::test {

namespace {

using Clock = std::chrono::steady_clock;

// Prometheus 2.42 is ready in one or two seconds (it replays an empty
// write-ahead log); a CI machine whose two cores run other builds too may
// take several times that.
constexpr auto kStartTimeout = std::chrono::seconds(20);
constexpr int kRequestTimeoutSeconds = 5;

// prometheus on PATH, else in /usr/bin, /usr/sbin, /usr/local/bin; "" when missing.
std::string find_prometheus() {
  std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  path += ":/usr/bin:/usr/sbin:/usr/local/bin";
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/prometheus";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then
// released). Another process may take it first: start() retries on a clash.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error(std::string("bind 127.0.0.1:0: ") + std::strerror(err));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string tail_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  if (text.size() > 3000) text = text.substr(text.size() - 3000);
  return text;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Percent-encodes everything but the unreserved characters of RFC 3986.
std::string url_encode(const std::string& s) {
  std::string out;
  for (const unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace

GetReply http_get(int port, const std::string& path) {
  Fd s{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (s.fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  timeval tv{};
  tv.tv_sec = kRequestTimeoutSeconds;
  ::setsockopt(s.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(s.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const std::string where = "GET http://127.0.0.1:" + std::to_string(port) + path;
  if (::connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error(where + ": connect: " + std::strerror(errno));

  const std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n\r\n";
  for (std::size_t sent = 0; sent < req.size();) {
    const ssize_t n = ::send(s.fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(where + ": send: " + std::strerror(errno));
    sent += static_cast<std::size_t>(n);
  }

  // HTTP/1.0: the reply ends when the server closes the connection.
  std::string reply;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::recv(s.fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(where + ": recv: " + std::strerror(errno));
    if (n == 0) break;
    reply.append(buf, static_cast<std::size_t>(n));
  }
  const std::size_t head_end = reply.find("\r\n\r\n");
  if (reply.compare(0, 5, "HTTP/") != 0 || head_end == std::string::npos)
    throw std::runtime_error(where + ": not an HTTP reply: " + reply.substr(0, 200));
  GetReply out;
  const std::size_t sp = reply.find(' ');
  out.status = std::atoi(reply.c_str() + sp + 1);
  out.headers = reply.substr(0, head_end);
  out.body = reply.substr(head_end + 4);
  return out;
}

PrometheusServer::PrometheusServer(const std::string& target) {
  // scrape_timeout must not exceed the interval (Prometheus refuses the
  // config): both 1 s, so the test waits seconds, not the default minute.
  dir_.write("prometheus.yml",
             "global:\n"
             "  scrape_interval: 1s\n"
             "  scrape_timeout: 1s\n"
             "scrape_configs:\n"
             "  - job_name: swthrottle\n"
             "    static_configs:\n"
             "      - targets: ['" +
                 target + "']\n");
  start();
}

PrometheusServer::~PrometheusServer() { kill9(); }

std::string PrometheusServer::log_tail() const { return tail_of(dir_.file("prometheus.log")); }

std::string PrometheusServer::query(const std::string& expr) const {
  const std::string path = "/api/v1/query?query=" + url_encode(expr);
  GetReply r = http_get(port_, path);
  if (r.status != 200) throw std::runtime_error("GET " + path + ": status " + std::to_string(r.status) + ": " + r.body);
  return r.body;
}

void PrometheusServer::kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

bool PrometheusServer::ready() {
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    throw std::runtime_error("prometheus exited at start (status " + std::to_string(status) + "); its log:\n" +
                             log_tail());
  }
  try {
    return http_get(port_, "/-/ready").status == 200;
  } catch (const std::runtime_error&) {
    return false;  // not listening yet
  }
}

void PrometheusServer::start() {
  const std::string binary = find_prometheus();
  if (binary.empty())
    throw std::runtime_error(
        "prometheus is not installed (apt-get install prometheus): the scrape test needs a real one");
  for (int attempt = 0;; ++attempt) {
    port_ = free_port();
    std::vector<std::string> args = {binary, "--config.file=" + dir_.file("prometheus.yml"),
                                     "--storage.tsdb.path=" + dir_.file("data"),
                                     "--web.listen-address=127.0.0.1:" + std::to_string(port_)};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string log = dir_.file("prometheus.log");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    // Its working directory is ours: Prometheus resolves nothing relative
    // here (every path above is absolute).
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    const int rc = ::posix_spawn(&pid_, binary.c_str(), &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
      pid_ = -1;
      throw std::runtime_error("cannot start " + binary + ": " + std::strerror(rc));
    }

    // Bounded retries on the condition "/-/ready answers 200": short waits
    // that grow to 100 ms, 20 s in all.
    const auto deadline = Clock::now() + kStartTimeout;
    auto wait = std::chrono::milliseconds(5);
    try {
      while (!ready()) {
        if (Clock::now() >= deadline) {
          kill9();
          throw std::runtime_error("prometheus was not ready within 20 s; its log:\n" + log_tail());
        }
        std::this_thread::sleep_for(wait);
        wait = std::min(wait * 2, std::chrono::milliseconds(100));
      }
      return;
    } catch (const std::runtime_error&) {
      // Another process took the free port between our probe and
      // Prometheus's bind: try another one.
      if (attempt < 5 && log_tail().find("address already in use") != std::string::npos) continue;
      throw;
    }
  }
}

}  // namespace swthrottle::test
