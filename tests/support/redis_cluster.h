// A Redis Cluster for the fleet tests (DESIGN.md §8.3): cluster-enabled
// redis-servers on free TCP ports of 127.0.0.1 (support/redis_server.h),
// joined by `redis-cli --cluster create ... --cluster-yes`, every one
// started by the test and killed by pid at the end. A node is failed after
// 1 s without an answer (cluster-node-timeout), so that a replica takes
// over within a few seconds.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "support/redis_server.h"

namespace swthrottle::test {

struct ClusterOptions {
  int primaries = 3;
  int replicas = 0;  // per primary
  std::vector<std::string> server_args;
};

class RedisCluster {
 public:
  // Starts the nodes, creates the cluster, waits until every node says
  // cluster_state:ok. Throws with redis-cli's output when it cannot.
  explicit RedisCluster(ClusterOptions options = {});

  // redis+cluster:// with the first two nodes (the rest are found in the slot map).
  std::string url() const;
  std::size_t size() const { return nodes_.size(); }
  RedisServer& node(std::size_t i) { return *nodes_[i]; }
  std::string node_id(std::size_t i);
  // The node serving `slot` now, as node `ask` says (CLUSTER SLOTS); -1: none.
  int owner_of(uint16_t slot, std::size_t ask = 0);
  // The value of a key, from whichever node serves it ("(nil)" when none has it).
  std::string get_anywhere(const std::vector<std::string>& command);
  // The node every running node says serves `slot`, when they all say
  // cluster_state:ok and agree, and it is not `not_by`; else -1.
  int settled(uint16_t slot, int not_by = -1);
  // Waits until every running node says cluster_state:ok and agrees that
  // `slot` is served by a node other than `not_by` (-1: any); that node.
  int wait_ok(uint16_t slot = 0, int not_by = -1,
              std::chrono::milliseconds timeout = std::chrono::milliseconds(30'000));
  // Moves `slot` from its node to node `to` by hand, as resharding does:
  // IMPORTING/MIGRATING, MIGRATE of its keys in batches (calling `between`
  // after each batch, and once before the first), then SETSLOT NODE on the
  // destination, the source and the others, in that order.
  void move_slot(uint16_t slot, std::size_t to, const std::function<void()>& between = nullptr);

 private:
  ClusterOptions options_;
  std::vector<std::unique_ptr<RedisServer>> nodes_;
};

}  // namespace swthrottle::test
