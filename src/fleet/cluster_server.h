// ClusterServer: the FleetServer of redis+cluster://N1,N2 (DESIGN.md §8.3:
// every script touches one key, KEYS[1], and a window's name carries its
// hash tag, so each window lives on one slot's primary). Written over the
// hiredis sync API: Debian 12 has no cluster client for C, and hiredis 0.14
// has no cluster support.
//
// connect() reads the slot map (CLUSTER SLOTS) from the first node that
// answers (the primaries known, then the URL's nodes), refuses a map with
// slots no primary serves (the cluster is down, or a failover is under way),
// and connects to every primary. run() sends each request to its slot's
// primary, one pipeline per primary, all of them written before any is
// read; then follows what comes back:
//
//   MOVED slot host:port   the slot moved for good: the map is corrected and
//                          the request sent to its new primary
//   ASK slot host:port     the slot is migrating and this key has gone: the
//                          request is sent there once, after ASKING
//   NOSCRIPT               that primary lost its scripts: loaded, sent again
//
// none of which ran the script, so nothing is counted twice. A primary whose
// connection fails ends run() false; the fleet thread connect()s again,
// which reads the map anew: a replica promoted meanwhile serves the slots,
// and the old primary's unconfirmed counts are the Failover it reports.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fleet/fleet_server.h"
#include "fleet/primary_node.h"
#include "fleet/slot_map.h"

namespace swthrottle::fleet {

class ClusterServer final : public FleetServer {
 public:
  explicit ClusterServer(const FleetClientOptions& options);

  bool connect() override;
  void close() override;
  bool run(std::span<const Request> requests, std::vector<Reply>& replies) override;
  std::optional<std::vector<NodeInfo>> info() override;
  bool has_replicas() const override { return true; }
  bool look_at_replication() override;
  void take_failovers(std::vector<Failover>& out) override;
  uint64_t reloads() const override;
  const std::string& error() const override { return error_; }
  // A cluster promotes a replica within its cluster-node-timeout: asked
  // again at least once a second meanwhile.
  int64_t max_backoff_ms() const override { return 1'000; }

  const SlotMap& slot_map() const { return map_; }
  // MOVED and ASK answers followed so far (for tests and --stats).
  uint64_t redirects() const { return redirects_; }

 private:
  // One request on its way: where it goes next, and whether after ASKING.
  struct Route {
    std::size_t request = 0;
    PrimaryNode* node = nullptr;
    bool asking = false;
  };
  bool read_slot_map(SlotMap& out);
  PrimaryNode& node_at(const Address& a);  // made (not connected) when new
  // One round: the routes' requests sent, one pipeline per node, and read.
  // The routes to send again (redirected, NOSCRIPT) go to `next`. False: a
  // connection failed.
  bool round(std::span<const Request> requests, std::vector<Route>& routes, std::vector<Reply>& replies,
             std::vector<Route>& next);

  const FleetClientOptions options_;
  SlotMap map_;
  std::vector<std::unique_ptr<PrimaryNode>> nodes_;  // every node ever routed to
  RedisConnection meta_;                             // for CLUSTER SLOTS
  std::vector<Failover> failovers_;
  uint64_t redirects_ = 0;
  std::string error_;
};

}  // namespace swthrottle::fleet
