// RuleFleet: the engine's FleetLink (engine/fleet_link.h) for one loaded
// rule set: which Redis hash holds a rule's window for a key, its shape and
// TTL, the episode ids this host writes, and the requests that ask it
// (fleet/request.h), sent through the process's one FleetClient.
//
// Keys (../FLEET.md §3.3): swt:{<namespace>:<rule>:<defhash>:<key>}, the
// whole identity inside the hash tag (Redis Cluster ready). defhash is a
// digest of config::fleet_identity(), so hosts that run different
// definitions of a rule never count in each other's windows. A rule name or
// key that holds '{' or '}', or makes the name longer than 200 bytes, is
// replaced by its digest, and the key as written is kept in the hash (k).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/rules.h"
#include "engine/fleet_link.h"
#include "fleet/fleet_client.h"
#include "fleet/request.h"

namespace swthrottle::fleet {

// 32 hex digits: two FNV-1a 64-bit hashes of `text` (stable on every host
// and build; not a security boundary).
std::string digest(std::string_view text);

class RuleFleet final : public engine::FleetLink {
 public:
  // `client` outlives this. `host`: this host's name in episode ids.
  RuleFleet(FleetClient& client, const config::RuleSet& rules, std::string host, int64_t started_ms);

  bool throttle(uint32_t rule, std::string_view key, int64_t t_ms, int64_t now_ms, engine::FleetAnswer& out) override;
  bool alert(uint32_t rule, std::string_view key, int64_t t_ms, int64_t now_ms, uint64_t events, bool claim,
             std::span<uint64_t> counts, engine::FleetAnswer& out) override;
  bool claim(uint32_t rule, std::string_view key, int64_t t_ms, engine::FleetAnswer& out) override;
  bool read(uint32_t rule, std::string_view key, int64_t now_ms, std::span<uint64_t> counts) override;
  bool resolve(uint32_t rule, std::string_view key, std::string_view episode, engine::FleetAnswer& out) override;
  config::Unreachable on_unreachable() const override { return on_unreachable_; }

  // The Redis hash of a rule's window for `key` (for tests and --explain).
  std::string hash_key(uint32_t rule, std::string_view key) const;
  // The rule's defhash (16 hex digits), for --stats: hosts whose differ do not share.
  const std::string& defhash(uint32_t rule) const { return rules_[rule].defhash; }

 private:
  struct RuleInfo {
    std::string prefix;  // swt:{<ns>:<rule or its digest>:<defhash>:
    std::string defhash;
    WindowShape shape;
    uint64_t limit = 0;  // Y (0 with a `when`)
    int64_t cooldown_ms = 0;
    std::string name;
    int64_t window_ms = 0;
  };
  // The fleet's newest bucket against this host's: a host whose log time
  // trails the fleet by more than half a window is told once per rule.
  void check_lag(uint32_t rule, int64_t own_bucket, const Reply& reply);
  Request request(Op op, uint32_t rule, std::string_view key) const;
  bool digested(uint32_t rule, std::string_view key) const;  // the hash names the key by its digest
  std::string next_episode();

  FleetClient& client_;
  std::vector<RuleInfo> rules_;
  config::Unreachable on_unreachable_;
  std::string episode_prefix_;  // <host>:<start ms>:
  std::atomic<uint64_t> episodes_{0};
  std::unique_ptr<std::atomic<bool>[]> lag_told_;  // by rule
};

}  // namespace swthrottle::fleet
