#include "support/alertmanager_server.h"

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
#include <cerrno>
#include <chrono>
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

// Alertmanager 0.25 is ready in well under a second; a loaded CI machine
// with two cores shared by several builds may take many times that.
constexpr auto kStartTimeout = std::chrono::seconds(15);
constexpr int kRequestTimeoutSeconds = 5;

// Every alert goes to a receiver without any notifier: the tests read the
// alerts back through the API, and nothing leaves the machine.
constexpr const char* kConfig =
    "route:\n"
    "  receiver: 'null'\n"
    "  group_wait: 1s\n"
    "receivers:\n"
    "  - name: 'null'\n";

// prometheus-alertmanager (Debian's name) or alertmanager (upstream's) on
// PATH, else in /usr/bin, /usr/sbin, /usr/local/bin; "" when neither is.
std::string find_alertmanager() {
  std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  path += ":/usr/bin:/usr/sbin:/usr/local/bin";
  for (const char* name : {"prometheus-alertmanager", "alertmanager"}) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      if (dir.empty()) continue;
      const std::string candidate = dir + "/" + name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
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

// One request to 127.0.0.1:port; throws when it cannot connect, send or
// read, each step bounded by SO_SNDTIMEO / SO_RCVTIMEO.
HttpReply request(int port, const std::string& method, const std::string& path, const std::string* body) {
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
  const std::string where = method + " http://127.0.0.1:" + std::to_string(port) + path;
  if (::connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error(where + ": connect: " + std::strerror(errno));

  std::string req = method + " " + path + " HTTP/1.0\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n";
  if (body != nullptr) {
    req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body->size()) + "\r\n\r\n";
    req += *body;
  } else {
    req += "\r\n";
  }
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
  HttpReply out;
  const std::size_t sp = reply.find(' ');
  out.status = std::atoi(reply.c_str() + sp + 1);
  out.body = reply.substr(head_end + 4);
  return out;
}

}  // namespace

AlertmanagerServer::AlertmanagerServer() {
  dir_.write("am.yml", kConfig);
  start();
}

AlertmanagerServer::~AlertmanagerServer() { kill9(); }

std::string AlertmanagerServer::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

std::string AlertmanagerServer::log_tail() const { return tail_of(dir_.file("am.log")); }

HttpReply AlertmanagerServer::get(const std::string& path) const { return request(port_, "GET", path, nullptr); }

HttpReply AlertmanagerServer::post_json(const std::string& path, const std::string& body) const {
  return request(port_, "POST", path, &body);
}

std::string AlertmanagerServer::alerts(const std::string& query) const {
  HttpReply r = get("/api/v2/alerts" + query);
  if (r.status != 200)
    throw std::runtime_error("GET /api/v2/alerts" + query + ": status " + std::to_string(r.status) + ": " + r.body);
  return r.body;
}

void AlertmanagerServer::kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

bool AlertmanagerServer::ready() {
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    throw std::runtime_error("prometheus-alertmanager exited at start (status " + std::to_string(status) +
                             "); its log:\n" + log_tail());
  }
  try {
    return get("/-/ready").status == 200;
  } catch (const std::runtime_error&) {
    return false;  // not listening yet
  }
}

void AlertmanagerServer::start() {
  const std::string binary = find_alertmanager();
  if (binary.empty())
    throw std::runtime_error(
        "prometheus-alertmanager is not installed (apt-get install prometheus-alertmanager): the Alertmanager "
        "tests need a real one");
  for (int attempt = 0;; ++attempt) {
    port_ = free_port();
    std::vector<std::string> args = {binary, "--config.file=" + dir_.file("am.yml"),
                                     "--storage.path=" + dir_.file("data"),
                                     "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                                     // Empty: no cluster, so no gossip port to find and no settling to wait for.
                                     "--cluster.listen-address="};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string log = dir_.file("am.log");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
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
    // that grow to 100 ms, 15 s in all.
    const auto deadline = Clock::now() + kStartTimeout;
    auto wait = std::chrono::milliseconds(5);
    try {
      while (!ready()) {
        if (Clock::now() >= deadline) {
          kill9();
          throw std::runtime_error("prometheus-alertmanager was not ready within 15 s; its log:\n" + log_tail());
        }
        std::this_thread::sleep_for(wait);
        wait = std::min(wait * 2, std::chrono::milliseconds(100));
      }
      return;
    } catch (const std::runtime_error&) {
      // Another process took the free port between our probe and
      // Alertmanager's bind: try another one.
      if (attempt < 5 && log_tail().find("address already in use") != std::string::npos) continue;
      throw;
    }
  }
}

}  // namespace swthrottle::test
