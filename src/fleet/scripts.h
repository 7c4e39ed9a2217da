// The Lua scripts of fleet windows (DESIGN.md §8.3-8.7): one script per
// Op (request.h), in src/fleet/lua/, sent as EVALSHA. Redis runs a script
// atomically, so each is one linearizable advance-add-sum-decide on one
// window's hash.
//
// Script hygiene (DESIGN.md §8.3): every script checks its ARGV count
// and ranges and answers a refusal as data, never loops more than B times
// per event, keeps every number below 10^14 (Lua numbers are doubles), and
// sets the TTL in wall time with PEXPIRE on every write. A window moved on
// by B buckets or more is cleared in one step.
//
// The script cache is not data: a restart, a failover or SCRIPT FLUSH
// empties it. run() answers NOSCRIPT by loading the scripts again and
// sending the refused requests once more (NOSCRIPT means "not run", so that
// is never a double count) and counts it in reloads().
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fleet/redis_connection.h"
#include "fleet/request.h"

namespace swthrottle::fleet {

class Scripts {
 public:
  // Sends the requests pipelined (one EVALSHA each) and reads their replies
  // into `replies` (resized to requests.size()), in order. False: the
  // connection failed; the replies from the first unanswered one on are
  // !ok with the connection's error, and the caller must reconnect. (When
  // Redis refuses SCRIPT LOAD, or answers NOSCRIPT again right after the
  // reload, the connection stands: true, those replies !ok with the error.)
  bool run(RedisConnection& conn, std::span<const Request> requests, std::vector<Reply>& replies);

  // SCRIPT LOAD of every script (also done by run() on NOSCRIPT). False: the
  // connection failed, or Redis refused a script (error() says which).
  bool load(RedisConnection& conn);
  bool loaded() const { return !shas_.empty(); }

  // The pieces of run(), for a caller that sends to several servers at once
  // (a cluster): append() one request's EVALSHA (after an ASKING when
  // `asking`: one ASK redirect), then, in the same order, read() its answer.
  // Needs loaded().
  enum class Answer {
    Done,        // `out` holds the answer: ok, or refused (out.error)
    NoScript,    // not run: load() and send again
    Redirected,  // not run: out.error is Redis's MOVED or ASK
    Lost,        // the connection failed (out.error); connect again
  };
  void append(RedisConnection& conn, const Request& request, bool asking) const;
  Answer read(RedisConnection& conn, const Request& request, bool asking, Reply& out) const;
  // A reload run() did not do (a caller of load() after NoScript): counted.
  void count_reload() { ++reloads_; }

  // Reloads done because of NOSCRIPT: one per run() that got any NOSCRIPT
  // answer (however many of its requests got one), before sending those again.
  uint64_t reloads() const { return reloads_; }

  // Why the last load() failed ("" after a good one): the connection's
  // error, or Redis's answer to SCRIPT LOAD.
  const std::string& error() const { return error_; }

  // The Lua text of each script, for tests and for the man page's reader.
  static const std::string& source(Op op);

 private:
  std::vector<std::string> shas_;  // by Op, after load()
  uint64_t reloads_ = 0;
  std::string error_;
};

}  // namespace swthrottle::fleet
