// SentinelServer: the FleetServer of redis+sentinel://S1,S2/NAME. The
// sentinels are asked which server is the primary named NAME (SENTINEL
// get-master-addr-by-name), in turn, sticking with the first that answers;
// the windows live on that primary. They are asked again whenever the
// connection to it fails, when it answers READONLY (it was made a replica:
// nothing was applied), when a sentinel announces +switch-master
// (SentinelWatch), and every 10 s (still_current).
//
// A new primary is a failover (DESIGN.md §8.10): it holds what replication
// had brought it, so the counts this host wrote to the old one and no
// replica had acknowledged may be lost. Their number (UnconfirmedWrites,
// looked at once a second) is the Failover it reports.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fleet/fleet_server.h"
#include "fleet/primary_node.h"
#include "fleet/sentinel_watch.h"

namespace swthrottle::fleet {

class SentinelServer final : public FleetServer {
 public:
  SentinelServer(const FleetClientOptions& options, const Clock& clock);
  ~SentinelServer() override;

  bool connect() override;
  void close() override;
  bool run(std::span<const Request> requests, std::vector<Reply>& replies) override;
  std::optional<std::vector<NodeInfo>> info() override;
  bool has_replicas() const override { return true; }
  bool look_at_replication() override;
  bool still_current() override;
  void take_failovers(std::vector<Failover>& out) override;
  void watch(std::function<void()> moved) override;
  uint64_t reloads() const override;
  const std::string& error() const override { return error_; }

  // The primary connected to (for tests); empty before the first connect().
  std::optional<Address> primary() const;

 private:
  // The primary's address, as the first sentinel that answers says. Empty:
  // none did (error_ says why).
  std::optional<Address> ask_sentinels();

  const FleetClientOptions options_;
  const Clock& clock_;
  std::unique_ptr<PrimaryNode> primary_;
  RedisConnection sentinel_;     // to the sentinel that answered last
  std::size_t sentinel_at_ = 0;  // its index in the endpoint's servers
  std::vector<Failover> failovers_;
  uint64_t old_reloads_ = 0;  // of primaries left behind
  std::string error_;
  std::unique_ptr<SentinelWatch> watch_;
};

}  // namespace swthrottle::fleet
