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
  std::string maxmemory_policy;  // "noeviction" is safe; an *-lru/-lfu/-random policy can evict windows
  int64_t time_ms = 0;           // the server's TIME, for the clock skew check
  int64_t evicted_keys = 0;      // INFO stats: keys evicted under maxmemory since the server started
};

class RedisConnection {
 public:
  RedisConnection();
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Connects (closing any old context), applies `timeout` to every later
  // command, authenticates with `password` when not empty, selects the
  // endpoint's database. False: not connected; error() says why.
  bool connect(const Endpoint& endpoint, std::chrono::milliseconds timeout, std::string_view password);
  bool connected() const;
  void close();
  const std::string& error() const { return error_; }

  // Pipelining: append any number of commands, then read one reply per
  // command, in order. A null reply: the connection failed (closed; error()).
  void append(std::span<const std::string_view> argv);
  ReplyPtr read_reply();

  // One command, one reply (append + read_reply).
  ReplyPtr command(std::span<const std::string_view> argv);

  // INFO server + INFO memory + INFO stats + TIME. Empty when the connection failed.
  std::optional<ServerInfo> server_info();

 private:
  // Sets error() from the context's error, with the server's label, and closes.
  void fail_with_context();

  redisContext* ctx_ = nullptr;
  std::string error_;
  std::string label_;                     // "127.0.0.1:6379" or "unix:/run/redis.sock", for messages
  std::chrono::milliseconds timeout_{0};  // as given to connect(), for messages
};

}  // namespace swthrottle::fleet
