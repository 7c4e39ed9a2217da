#include "support/redis_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
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
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace swthrottle::test {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kStartTimeout = std::chrono::milliseconds(5000);

// redis-server on PATH (else /usr/bin, /usr/sbin), or "".
std::string find_redis_server() {
  std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  path += ":/usr/bin:/usr/sbin:/usr/local/bin";
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/redis-server";
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
  if (text.size() > 2000) text = text.substr(text.size() - 2000);
  return text;
}

redisContext* open_context(const std::string& socket_path, int port, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  redisContext* c = socket_path.empty() ? redisConnectWithTimeout("127.0.0.1", port, tv)
                                        : redisConnectUnixWithTimeout(socket_path.c_str(), tv);
  if (c != nullptr && c->err == 0 && redisSetTimeout(c, tv) == REDIS_OK) return c;
  if (c != nullptr) redisFree(c);
  return nullptr;
}

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ContextPtr = std::unique_ptr<redisContext, ContextFree>;
using ReplyHolder = std::unique_ptr<redisReply, ReplyFree>;

ReplyHolder command(redisContext* c, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  return ReplyHolder(
      static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(args.size()), argv.data(), lens.data())));
}

std::string to_text(const redisReply* r) {
  switch (r->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS: return std::string(r->str, r->len);
    case REDIS_REPLY_INTEGER: return std::to_string(r->integer);
    case REDIS_REPLY_NIL: return "(nil)";
    case REDIS_REPLY_ERROR: return "ERR: " + std::string(r->str, r->len);
    case REDIS_REPLY_ARRAY: {
      std::string out;
      for (std::size_t i = 0; i < r->elements; ++i) {
        if (i > 0) out += '\n';
        out += to_text(r->element[i]);
      }
      return out;
    }
    default: return "(unknown reply type " + std::to_string(r->type) + ")";
  }
}

}  // namespace

RedisServer::RedisServer(RedisServerOptions options) : options_(std::move(options)) {
  if (!options_.tcp) socket_path_ = dir_.file("r.sock");
  start();
}

RedisServer::~RedisServer() { kill9(); }

std::string RedisServer::url() const {
  return options_.tcp ? "redis://127.0.0.1:" + std::to_string(port_) : "unix:" + socket_path_;
}

void RedisServer::kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

void RedisServer::restart() {
  kill9();
  start();
}

void RedisServer::pause() {
  if (pid_ > 0) ::kill(pid_, SIGSTOP);
}

void RedisServer::resume() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

bool RedisServer::answers() {
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done == pid_) {
    pid_ = -1;
    throw std::runtime_error("redis-server exited at start (status " + std::to_string(status) + "); its log:\n" +
                             tail_of(dir_.file("redis.log")));
  }
  ContextPtr c(open_context(socket_path_, port_, std::chrono::milliseconds(200)));
  if (!c) return false;
  ReplyHolder r = command(c.get(), {"PING"});
  if (!r) return false;
  // PONG, or NOAUTH from a server with a password: either way it is up.
  return r->type == REDIS_REPLY_STATUS || (r->type == REDIS_REPLY_ERROR && std::strstr(r->str, "NOAUTH") != nullptr);
}

void RedisServer::start() {
  const std::string binary = find_redis_server();
  if (binary.empty())
    throw std::runtime_error(
        "redis-server is not installed (apt-get install redis-server): the fleet tests need a real one");
  const bool keep_port = options_.tcp && port_ != 0;  // restart(): the same port again
  for (int attempt = 0;; ++attempt) {
    if (options_.tcp && !keep_port) port_ = free_port();
    std::vector<std::string> args = {binary, "--port", std::to_string(options_.tcp ? port_ : 0)};
    if (options_.tcp) {
      args.insert(args.end(), {"--bind", "127.0.0.1"});
    } else {
      args.insert(args.end(), {"--unixsocket", socket_path_});
    }
    args.insert(args.end(), {"--save", "", "--appendonly", options_.appendonly ? "yes" : "no", "--dir", dir_.path(),
                             "--logfile", dir_.file("redis.log"), "--daemonize", "no"});
    if (!options_.password.empty()) args.insert(args.end(), {"--requirepass", options_.password});
    args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());

    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
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

    // Bounded retries on the condition "answers PING": short waits that
    // grow to 50 ms, 5 s in all.
    const auto deadline = Clock::now() + kStartTimeout;
    auto wait = std::chrono::milliseconds(1);
    try {
      while (!answers()) {
        if (Clock::now() >= deadline) {
          kill9();
          throw std::runtime_error("redis-server did not answer PING within 5 s; its log:\n" +
                                   tail_of(dir_.file("redis.log")));
        }
        std::this_thread::sleep_for(wait);
        wait = std::min(wait * 2, std::chrono::milliseconds(50));
      }
      return;
    } catch (const std::runtime_error&) {
      // Another process took the free port between our probe and the
      // server's bind: try another one.
      if (options_.tcp && !keep_port && attempt < 5 &&
          tail_of(dir_.file("redis.log")).find("Address already in use") != std::string::npos)
        continue;
      throw;
    }
  }
}

std::string RedisServer::cli(const std::vector<std::string>& args) {
  ContextPtr c(open_context(socket_path_, port_, std::chrono::milliseconds(5000)));
  if (!c) throw std::runtime_error("cannot connect to the test redis-server at " + url());
  if (!options_.password.empty()) {
    ReplyHolder auth = command(c.get(), {"AUTH", options_.password});
    if (!auth) throw std::runtime_error("AUTH to the test redis-server failed: " + std::string(c->errstr));
  }
  ReplyHolder r = command(c.get(), args);
  if (!r) throw std::runtime_error("the test redis-server did not answer: " + std::string(c->errstr));
  return to_text(r.get());
}

}  // namespace swthrottle::test
