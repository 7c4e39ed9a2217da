#include "fleet/redis_connection.h"

#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace swthrottle::fleet {

namespace {

// hiredis 0.14 writes with write(2), not send(MSG_NOSIGNAL): a write to a
// server that died raises SIGPIPE, which would end the whole process. This
// guard blocks SIGPIPE for the calling thread while hiredis may write, and
// takes a SIGPIPE that the write raised off the pending set before the old
// mask comes back (the write itself fails with EPIPE, which hiredis reports).
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_set_);
    sigaddset(&pipe_set_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set_, &old_set_);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
  }
  ~SigpipeGuard() {
    const int saved = errno;
    if (!was_pending_) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const timespec zero{};
        while (sigtimedwait(&pipe_set_, nullptr, &zero) < 0 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_set_, nullptr);
    errno = saved;
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_set_;
  sigset_t old_set_;
  bool was_pending_ = false;
};

timeval to_timeval(std::chrono::milliseconds ms) {
  const auto count = ms.count() < 1 ? 1 : ms.count();
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(count / 1000);
  tv.tv_usec = static_cast<suseconds_t>((count % 1000) * 1000);
  return tv;
}

// The value of `name:` in an INFO section's text ("k:v\r\n" lines).
std::string info_field(std::string_view text, std::string_view name) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > name.size() && line.starts_with(name) && line[name.size()] == ':')
      return std::string(line.substr(name.size() + 1));
    pos = end + 1;
  }
  return {};
}

bool to_int64(const redisReply* r, int64_t& out) {
  if (r == nullptr) return false;
  if (r->type == REDIS_REPLY_INTEGER) {
    out = r->integer;
    return true;
  }
  if (r->type != REDIS_REPLY_STRING) return false;
  const auto [end, ec] = std::from_chars(r->str, r->str + r->len, out);
  return ec == std::errc() && end == r->str + r->len;
}

}  // namespace

void ReplyDeleter::operator()(redisReply* r) const {
  if (r != nullptr) freeReplyObject(r);
}

RedisConnection::RedisConnection() = default;

RedisConnection::~RedisConnection() { close(); }

bool RedisConnection::connected() const { return ctx_ != nullptr; }

void RedisConnection::close() {
  if (ctx_ != nullptr) {
    redisFree(ctx_);
    ctx_ = nullptr;
  }
}

bool RedisConnection::connect(const Address& address, int db, std::chrono::milliseconds timeout,
                              const Credentials& credentials) {
  close();
  error_.clear();
  label_ = address.label();
  timeout_ = timeout;
  credentials_source_ = credentials.source;
  const timeval tv = to_timeval(timeout);
  ctx_ = address.unix_path.empty() ? redisConnectWithTimeout(address.host.c_str(), address.port, tv)
                                   : redisConnectUnixWithTimeout(address.unix_path.c_str(), tv);
  if (ctx_ == nullptr) {
    error_ = "redis " + label_ + ": cannot allocate a connection";
    return false;
  }
  if (ctx_->err != 0) {
    fail_with_context();
    return false;
  }
  // The connect timeout is not a command timeout: without this, a read from
  // a hung server blocks for ever (0.14 never applies it by itself).
  if (redisSetTimeout(ctx_, tv) != REDIS_OK) {
    fail_with_context();
    return false;
  }
  auto refused = [&](std::string_view what, const redisReply& r) {
    error_ = "redis " + label_ + ": " + std::string(what) + ": " + explain({r.str, r.len});
    close();
    return false;
  };
  if (credentials.given()) {
    // AUTH user password (Redis 6 ACL users), or AUTH password for the
    // default user; the password is never part of a message.
    std::vector<std::string_view> argv = {"AUTH"};
    if (!credentials.user.empty()) argv.push_back(credentials.user);
    argv.push_back(credentials.password);
    ReplyPtr r = command(argv);
    if (!r) return false;
    if (r->type == REDIS_REPLY_ERROR) return refused("AUTH", *r);
  }
  if (db != 0) {
    const std::string db_text = std::to_string(db);
    const std::string_view argv[] = {"SELECT", db_text};
    ReplyPtr r = command(argv);
    if (!r) return false;
    if (r->type == REDIS_REPLY_ERROR) return refused("SELECT " + db_text, *r);
  }
  return true;
}

std::string RedisConnection::explain(std::string_view redis_error) const {
  const std::string& env = credentials_source_;
  if (redis_error.starts_with("NOAUTH")) return "NOAUTH: the server wants a password (" + env + "_PASSWORD)";
  if (redis_error.starts_with("WRONGPASS"))
    return "WRONGPASS: the server refused the user name or password (" + env + "_USER, " + env + "_PASSWORD)";
  if (redis_error.starts_with("NOPERM"))
    return std::string(redis_error) + " (the ACL of the user " + env + "_USER names)";
  return std::string(redis_error);
}

bool policy_evicts(std::string_view policy) {
  return policy.starts_with("allkeys-") || policy.starts_with("volatile-");
}

void RedisConnection::fail_with_context() {
  std::string why = ctx_ != nullptr && ctx_->errstr[0] != '\0' ? std::string(ctx_->errstr) : "connection failed";
  if (ctx_ != nullptr && ctx_->err == REDIS_ERR_EOF) why = "the server closed the connection";
  // hiredis reports its SO_RCVTIMEO/SO_SNDTIMEO running out as EAGAIN's text
  // (0.14: REDIS_ERR_IO; 1.x: REDIS_ERR_TIMEOUT, which 0.14 does not define).
  if (ctx_ != nullptr && why == std::strerror(EAGAIN))
    why = "no answer within " + std::to_string(timeout_.count()) + " ms";
  error_ = "redis " + label_ + ": " + why;
  close();
}

void RedisConnection::append(std::span<const std::string_view> argv) {
  if (ctx_ == nullptr) return;
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  ptrs.reserve(argv.size());
  lens.reserve(argv.size());
  for (const auto a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  if (redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), ptrs.data(), lens.data()) != REDIS_OK)
    fail_with_context();
}

ReplyPtr RedisConnection::read_reply() {
  if (ctx_ == nullptr) {
    if (error_.empty()) error_ = "redis: not connected";
    return nullptr;
  }
  void* reply = nullptr;
  int rc = REDIS_OK;
  // Only the first read after append() writes (the whole output buffer).
  if (ctx_->obuf != nullptr && ctx_->obuf[0] != '\0') {
    SigpipeGuard guard;
    rc = redisGetReply(ctx_, &reply);
  } else {
    rc = redisGetReply(ctx_, &reply);
  }
  if (rc != REDIS_OK || reply == nullptr) {
    if (reply != nullptr) freeReplyObject(reply);
    fail_with_context();
    return nullptr;
  }
  return ReplyPtr(static_cast<redisReply*>(reply));
}

ReplyPtr RedisConnection::command(std::span<const std::string_view> argv) {
  append(argv);
  return read_reply();
}

int RedisConnection::fd() const { return ctx_ != nullptr ? ctx_->fd : -1; }

bool RedisConnection::read_pushed(std::vector<ReplyPtr>& out) {
  if (ctx_ == nullptr) return false;
  if (redisBufferRead(ctx_) != REDIS_OK) {
    fail_with_context();
    return false;
  }
  for (;;) {
    void* reply = nullptr;
    if (redisGetReplyFromReader(ctx_, &reply) != REDIS_OK) {
      fail_with_context();
      return false;
    }
    if (reply == nullptr) return true;
    out.emplace_back(static_cast<redisReply*>(reply));
  }
}

std::optional<ServerInfo> RedisConnection::server_info() {
  const std::string_view server_argv[] = {"INFO", "server"};
  const std::string_view memory_argv[] = {"INFO", "memory"};
  const std::string_view stats_argv[] = {"INFO", "stats"};
  const std::string_view time_argv[] = {"TIME"};
  append(server_argv);
  append(memory_argv);
  append(stats_argv);
  append(time_argv);
  ReplyPtr server = read_reply();
  ReplyPtr memory = server ? read_reply() : nullptr;
  ReplyPtr stats = memory ? read_reply() : nullptr;
  ReplyPtr time = stats ? read_reply() : nullptr;
  if (!time) return std::nullopt;
  ServerInfo info;
  if (server->type == REDIS_REPLY_STRING) info.run_id = info_field({server->str, server->len}, "run_id");
  if (memory->type == REDIS_REPLY_STRING)
    info.maxmemory_policy = info_field({memory->str, memory->len}, "maxmemory_policy");
  if (stats->type == REDIS_REPLY_STRING) {
    const std::string evicted = info_field({stats->str, stats->len}, "evicted_keys");
    info.evicted_keys = std::strtoll(evicted.c_str(), nullptr, 10);
  }
  int64_t sec = 0, usec = 0;
  if (time->type == REDIS_REPLY_ARRAY && time->elements == 2 && to_int64(time->element[0], sec) &&
      to_int64(time->element[1], usec))
    info.time_ms = sec * 1000 + usec / 1000;
  if (info.run_id.empty() || time->type != REDIS_REPLY_ARRAY) {
    error_ = "redis " + label_ + ": unexpected answer to INFO or TIME";
    if (server->type == REDIS_REPLY_ERROR) error_ += ": " + explain({server->str, server->len});
    return std::nullopt;
  }
  return info;
}

std::optional<Role> RedisConnection::role() {
  const std::string_view argv[] = {"ROLE"};
  ReplyPtr r = command(argv);
  if (!r) return std::nullopt;
  // A primary: ["master", offset, [[ip, port, offset], ...]]; a replica or a
  // sentinel: ["slave", ...] or ["sentinel", ...].
  if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 || r->element[0]->type != REDIS_REPLY_STRING) {
    error_ = "redis " + label_ + ": unexpected answer to ROLE";
    if (r->type == REDIS_REPLY_ERROR) error_ += ": " + explain({r->str, r->len});
    return std::nullopt;
  }
  Role role;
  role.primary = std::string_view(r->element[0]->str, r->element[0]->len) == "master";
  if (!role.primary || r->elements < 3) return role;
  to_int64(r->element[1], role.offset);
  const redisReply* replicas = r->element[2];
  if (replicas->type != REDIS_REPLY_ARRAY) return role;
  for (std::size_t i = 0; i < replicas->elements; ++i) {
    const redisReply* one = replicas->element[i];
    int64_t acked = 0;
    if (one->type == REDIS_REPLY_ARRAY && one->elements >= 3 && to_int64(one->element[2], acked))
      role.replica_offset = std::max(role.replica_offset, acked);
  }
  return role;
}

}  // namespace swthrottle::fleet
