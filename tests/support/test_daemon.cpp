#include "support/test_daemon.h"

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
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace swthrottle::test {

namespace {

constexpr int kRequestTimeoutSeconds = 5;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string find_program(std::initializer_list<std::string_view> names) {
  std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  path += ":/usr/bin:/usr/sbin:/usr/local/bin";
  for (std::string_view name : names) {
    std::stringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      if (dir.empty()) continue;
      const std::string candidate = dir + "/" + std::string(name);
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return {};
}

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

std::string file_tail(const std::string& path, std::size_t max_bytes) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  if (text.size() > max_bytes) text = text.substr(text.size() - max_bytes);
  return text;
}

pid_t spawn_daemon(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (log.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(rc));
  return pid;
}

void kill_and_reap(pid_t& pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid = -1;
}

bool wait_ready(const std::function<bool()>& ready, std::chrono::milliseconds timeout, std::chrono::milliseconds first,
                std::chrono::milliseconds most) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto wait = first;
  while (!ready()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(wait);
    wait = std::min(wait * 2, most);
  }
  return true;
}

HttpReply http_request(int port, const std::string& method, const std::string& path, const std::string* json_body) {
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
  if (json_body != nullptr) {
    req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(json_body->size()) + "\r\n\r\n";
    req += *json_body;
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
  out.headers = reply.substr(0, head_end);
  out.body = reply.substr(head_end + 4);
  return out;
}

StartedDaemon start_http_daemon(const std::string& what, const std::function<std::vector<std::string>(int)>& argv_for,
                                const std::string& log, std::chrono::milliseconds timeout) {
  for (int attempt = 0;; ++attempt) {
    StartedDaemon d;
    d.port = free_port();
    d.pid = spawn_daemon(argv_for(d.port), log);
    try {
      auto ready = [&] {
        int status = 0;
        if (::waitpid(d.pid, &status, WNOHANG) == d.pid) {
          d.pid = -1;
          throw std::runtime_error(what + " exited at start (status " + std::to_string(status) + "); its log:\n" +
                                   file_tail(log));
        }
        try {
          return http_get(d.port, "/-/ready").status == 200;
        } catch (const std::runtime_error&) {
          return false;  // not listening yet
        }
      };
      // Short waits that grow to 100 ms.
      if (!wait_ready(ready, timeout, std::chrono::milliseconds(5), std::chrono::milliseconds(100))) {
        kill_and_reap(d.pid);
        throw std::runtime_error(what + " was not ready within " + std::to_string(timeout.count() / 1000) +
                                 " s; its log:\n" + file_tail(log));
      }
      return d;
    } catch (const std::runtime_error&) {
      // Another process took the free port between our probe and the
      // daemon's bind: try another one.
      if (attempt < 5 && file_tail(log).find("address already in use") != std::string::npos) continue;
      throw;
    }
  }
}

}  // namespace swthrottle::test
