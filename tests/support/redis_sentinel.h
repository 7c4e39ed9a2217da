// A Sentinel-managed Redis for the fleet tests (DESIGN.md §8.9): a primary
// and its replicas (support/redis_server.h, each on a free TCP port of
// 127.0.0.1) and redis-sentinel processes watching them under the name
// "mymaster", every one started by the test and killed by pid at the end.
//
// The sentinels take a primary for down after 1 s without an answer, so
// that a failover takes a second or two, not the default 30 s.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "support/redis_server.h"
#include "support/temp_dir.h"

namespace swthrottle::test {

struct SentinelGroupOptions {
  int replicas = 2;
  int sentinels = 1;
  std::string password;           // the servers' (requirepass, masterauth; the sentinels' auth-pass)
  std::string user;               // with password: an ACL user the sentinels use to reach the servers
  std::string sentinel_password;  // the sentinels' own (requirepass)
  std::vector<std::string> server_args;
};

class RedisSentinelGroup {
 public:
  // Starts the primary, the replicas (and waits until they are in sync),
  // then the sentinels (and waits until they know every replica).
  explicit RedisSentinelGroup(SentinelGroupOptions options = {});
  ~RedisSentinelGroup();  // the sentinels first, then the servers
  RedisSentinelGroup(const RedisSentinelGroup&) = delete;
  RedisSentinelGroup& operator=(const RedisSentinelGroup&) = delete;

  static constexpr const char* kName = "mymaster";

  // redis+sentinel://127.0.0.1:S1,127.0.0.1:S2/mymaster, after `extra` sentinels (addresses) given first.
  std::string url(const std::vector<std::string>& extra = {}) const;
  std::size_t servers() const { return servers_.size(); }
  RedisServer& server(std::size_t i) { return *servers_[i]; }
  int sentinel_port(std::size_t i) const { return sentinel_ports_[i]; }

  // One command to sentinel i.
  std::string sentinel_cli(const std::vector<std::string>& args, std::size_t i = 0);
  // The server the sentinels name the primary now (-1: none of ours).
  int primary();
  // Waits (at most `timeout`) until the sentinels name a primary other than
  // server `old`, and that server answers ROLE as a primary; its index.
  // Throws when that does not happen.
  int wait_failover(int old, std::chrono::milliseconds timeout = std::chrono::milliseconds(30'000));
  // Waits until every other server is a replica of `primary`, in sync.
  void wait_replicas_of(int primary, std::chrono::milliseconds timeout = std::chrono::milliseconds(30'000));

 private:
  void start_sentinel(std::size_t i);

  SentinelGroupOptions options_;
  TempDir dir_;
  std::vector<std::unique_ptr<RedisServer>> servers_;
  std::vector<int> sentinel_ports_;
  std::vector<pid_t> sentinel_pids_;
};

}  // namespace swthrottle::test
