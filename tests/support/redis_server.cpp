#include "support/redis_server.h"

#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "support/test_daemon.h"

namespace swthrottle::test {

namespace {

constexpr auto kStartTimeout = std::chrono::milliseconds(5000);

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

void RedisServer::kill9() { kill_and_reap(pid_); }

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
                             file_tail(dir_.file("redis.log"), 2000));
  }
  ContextPtr c(open_context(socket_path_, port_, std::chrono::milliseconds(200)));
  if (!c) return false;
  ReplyHolder r = command(c.get(), {"PING"});
  if (!r) return false;
  // PONG, or NOAUTH from a server with a password: either way it is up.
  return r->type == REDIS_REPLY_STATUS || (r->type == REDIS_REPLY_ERROR && std::strstr(r->str, "NOAUTH") != nullptr);
}

void RedisServer::start() {
  const std::string binary = find_program({"redis-server"});
  if (binary.empty())
    throw std::runtime_error(
        "redis-server is not installed (apt-get install redis-server): the fleet tests need a real one");
  const bool keep_port = options_.tcp && port_ != 0;  // restart(): the same port again
  for (int attempt = 0;; ++attempt) {
    if (options_.tcp && !keep_port) port_ = free_port();
    std::vector<std::string> args = {binary, "--port", std::to_string(options_.tcp ? port_ : 0)};
    if (options_.tcp) {
      args.insert(args.end(), {"--bind", "127.0.0.1"});
      // The bus port is not PORT + 10000, which may pass 65535.
      if (options_.cluster)
        args.insert(args.end(), {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-port",
                                 std::to_string(free_port())});
    } else {
      args.insert(args.end(), {"--unixsocket", socket_path_});
    }
    // A replica's first sync starts at once, not after the default 5 s
    // a primary waits to serve several replicas with one transfer.
    args.insert(args.end(), {"--repl-diskless-sync-delay", "0"});
    args.insert(args.end(), {"--save", "", "--appendonly", options_.appendonly ? "yes" : "no", "--dir", dir_.path(),
                             "--logfile", dir_.file("redis.log"), "--daemonize", "no"});
    // The same password for the replicas of a group to reach their primary.
    if (!options_.password.empty())
      args.insert(args.end(), {"--requirepass", options_.password, "--masterauth", options_.password});
    args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());

    pid_ = spawn_daemon(args, "");  // its log is --logfile's

    // Bounded retries on the condition "answers PING": short waits that
    // grow to 50 ms, 5 s in all.
    try {
      if (!wait_ready([this] { return answers(); }, kStartTimeout, std::chrono::milliseconds(1),
                      std::chrono::milliseconds(50))) {
        kill9();
        throw std::runtime_error("redis-server did not answer PING within 5 s; its log:\n" +
                                 file_tail(dir_.file("redis.log"), 2000));
      }
      return;
    } catch (const std::runtime_error&) {
      // Another process took the free port between our probe and the
      // server's bind: try another one.
      if (options_.tcp && !keep_port && attempt < 5 &&
          file_tail(dir_.file("redis.log"), 2000).find("Address already in use") != std::string::npos)
        continue;
      throw;
    }
  }
}

std::string RedisServer::cli(const std::vector<std::string>& args) {
  return redis_command(socket_path_, port_, args, options_.password);
}

std::vector<std::string> RedisServer::cli_all(const std::vector<std::vector<std::string>>& commands) {
  return redis_commands(socket_path_, port_, commands, options_.password);
}

std::string redis_command(const std::string& socket_path, int port, const std::vector<std::string>& args,
                          const std::string& password, const std::string& user) {
  return redis_commands(socket_path, port, {args}, password, user)[0];
}

std::vector<std::string> redis_commands(const std::string& socket_path, int port,
                                        const std::vector<std::vector<std::string>>& commands,
                                        const std::string& password, const std::string& user) {
  const std::string where = socket_path.empty() ? "127.0.0.1:" + std::to_string(port) : socket_path;
  ContextPtr c(open_context(socket_path, port, std::chrono::milliseconds(5000)));
  if (!c) throw std::runtime_error("cannot connect to the test redis at " + where);
  if (!password.empty()) {
    std::vector<std::string> auth_args = {"AUTH"};
    if (!user.empty()) auth_args.push_back(user);
    auth_args.push_back(password);
    ReplyHolder auth = command(c.get(), auth_args);
    if (!auth) throw std::runtime_error("AUTH to the test redis at " + where + " failed: " + std::string(c->errstr));
  }
  std::vector<std::string> out;
  for (const auto& args : commands) {
    ReplyHolder r = command(c.get(), args);
    if (!r) throw std::runtime_error("the test redis at " + where + " did not answer: " + std::string(c->errstr));
    out.push_back(to_text(r.get()));
  }
  return out;
}

}  // namespace swthrottle::test
