// RedisConnection: one hiredis synchronous context, with the timeouts,
// authentication and reconnection that make it safe on a line path's
// behalf (DESIGN.md §8.2). Written against the API hiredis 0.14 (Debian
// 12) and 1.x share: redisConnect*WithTimeout, redisSetTimeout after every
// connect (0.14 does not keep it across a reconnect, and without it a read
// from a hung server blocks for ever), redisAppendCommandArgv with explicit
// lengths, redisGetReply, RESP2 replies.
//
// Once any call fails the context is unusable (hiredis's rule): the
// connection closes itself, and the caller connects again.
//
// Not thread-safe: one connection per thread (the fleet thread owns one).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fleet/credentials.h"
#include "fleet/endpoint.h"

struct redisContext;
struct redisReply;

namespace swthrottle::fleet {

// A reply, owned: freed with freeReplyObject.
struct ReplyDeleter {
  void operator()(redisReply* r) const;
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

// What INFO says about the server that matters to a fleet.
struct ServerInfo {
  std::string run_id;            // changes when the server restarts: the fleet state may be gone
  std::string maxmemory_policy;  // "noeviction" is safe; allkeys-* and volatile-* can evict windows
  int64_t time_ms = 0;           // the server's TIME, for the clock skew check
  int64_t evicted_keys = 0;      // INFO stats: keys evicted under maxmemory since the server started
};

// What ROLE says: whether the server is a primary, and how far its replicas
// have acknowledged its replication stream.
struct Role {
  bool primary = false;
  int64_t offset = 0;           // a primary's replication offset
  int64_t replica_offset = -1;  // the largest offset a replica acknowledged (-1: no replica)
};

// Whether a maxmemory-policy can evict fleet windows: every allkeys-* policy
// can, and so can every volatile-* one, since every window has a TTL.
bool policy_evicts(std::string_view maxmemory_policy);

class RedisConnection {
 public:
  RedisConnection();
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Connects (closing any old context), applies `timeout` to every later
  // command, authenticates (AUTH [user] password) when credentials are
  // given, selects database `db` when not 0. False: not connected; error()
  // says why.
  bool connect(const Address& address, int db, std::chrono::milliseconds timeout, const Credentials& credentials);
  bool connected() const;
  void close();
  const std::string& error() const { return error_; }

  // Pipelining: append any number of commands, then read one reply per
  // command, in order. A null reply: the connection failed (closed; error()).
  void append(std::span<const std::string_view> argv);
  ReplyPtr read_reply();

  // One command, one reply (append + read_reply).
  ReplyPtr command(std::span<const std::string_view> argv);

  // A subscribed connection's pushed messages: fd() becomes readable
  // (poll(2)) when some arrived; read_pushed() then takes every whole one
  // without blocking. False: the connection failed (closed; error()).
  int fd() const;
  bool read_pushed(std::vector<ReplyPtr>& out);

  // INFO server + INFO memory + INFO stats + TIME. Empty when the connection failed.
  std::optional<ServerInfo> server_info();
  // ROLE. Empty when the connection failed (or the answer had no sense).
  std::optional<Role> role();

  // A Redis error answer as the user needs it: NOAUTH, WRONGPASS and NOPERM
  // say which environment variables are in play; others stay as they are.
  std::string explain(std::string_view redis_error) const;
  // "127.0.0.1:6379", for messages.
  const std::string& label() const { return label_; }

 private:
  // Sets error() from the context's error, with the server's label, and closes.
  void fail_with_context();

  redisContext* ctx_ = nullptr;
  std::string error_;
  std::string label_;                                    // "127.0.0.1:6379" or "unix:/run/redis.sock", for messages
  std::chrono::milliseconds timeout_{0};                 // as given to connect(), for messages
  std::string credentials_source_ = "SWTHROTTLE_REDIS";  // as given to connect(), for messages
};

}  // namespace swthrottle::fleet
