// RuleFleet: the engine's FleetLink (engine/fleet_link.h) for one loaded
// rule set: which Redis hash holds a rule's window for a key, its shape and
// TTL, the episode ids this host writes, and the requests that ask it
// (fleet/request.h), sent through the process's one FleetClient.
//
// Keys (DESIGN.md §8.3): swt:{<namespace>:<rule>:<defhash>:<key>}, the
// whole identity inside the hash tag (Redis Cluster ready). defhash is a
// digest of config::fleet_identity(), so hosts that run different
// definitions of a rule never count in each other's windows. A rule name or
// key that holds '{' or '}', or makes the name longer than 200 bytes, is
// replaced by its digest, and the key as written is kept in the hash (k).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/rules.h"
#include "engine/engine_state.h"
#include "engine/fleet_link.h"
#include "fleet/fleet_client.h"
#include "fleet/request.h"
#include "util/digest.h"

namespace swthrottle::fleet {

// fleet = "batched" (DESIGN.md §8.5, §8.6): alert rules keep their
// counts here and the fleet thread flushes them every `sync` (this is its
// BatchSource), claiming in the same script; throttles take permits from a
// lease per window and bucket, asking Redis for the next lease only when
// one runs out. Alerts raised locally while Redis was unreachable (any fleet
// rule) are claimed through the same flushes once it answers (DESIGN.md §8.9).
class RuleFleet final : public engine::FleetLink, public BatchSource {
 public:
  // `client` outlives this. `host`: this host's name in episode ids.
  RuleFleet(FleetClient& client, const config::RuleSet& rules, std::string host, int64_t started_ms);
  ~RuleFleet() override;  // no longer flushed by the client
  RuleFleet(const RuleFleet&) = delete;
  RuleFleet& operator=(const RuleFleet&) = delete;

  bool throttle(uint32_t rule, std::string_view key, int64_t t_ms, int64_t now_ms, engine::FleetAnswer& out) override;
  bool alert(uint32_t rule, std::string_view key, int64_t t_ms, int64_t now_ms, uint64_t events, bool claim,
             std::span<uint64_t> counts, engine::FleetAnswer& out) override;
  bool claim(uint32_t rule, std::string_view key, int64_t t_ms, engine::FleetAnswer& out) override;
  bool read(uint32_t rule, std::string_view key, int64_t now_ms, std::span<uint64_t> counts) override;
  bool resolve(uint32_t rule, std::string_view key, std::string_view episode, engine::FleetAnswer& out) override;
  bool add(uint32_t rule, std::string_view key, int64_t t_ms, int64_t now_ms, uint64_t events,
           std::string_view line) override;
  bool lease(uint32_t rule, std::string_view key, int64_t now_ms, engine::FleetAnswer& out) override;
  void take_claims(std::vector<engine::FleetClaim>& out) override;
  void raised_locally(uint32_t rule, std::string_view key, int64_t t_ms) override;
  config::Unreachable on_unreachable() const override { return on_unreachable_; }

  // --state: the counts of batched rules not yet in the fleet (waiting, or
  // sent and not answered), and, in the next run, taken back: waiting ones
  // join the next flush, unanswered ones are sent again as they were (their
  // host and seq: counted once). Counts of a rule that is gone or changed
  // (another fleet window) are dropped; returns how many entries were.
  std::vector<engine::FleetUnsent> unsent();
  std::size_t restore(const std::vector<engine::FleetUnsent>& unsent);

  // BatchSource (the fleet thread)
  void collect(std::vector<Request>& out) override;
  void done(std::span<const Request> sent, std::span<const Reply> replies, bool answered) override;
  bool has_followups() override;
  // The Redis hash of a rule's window for `key` (for tests and --explain).
  std::string hash_key(uint32_t rule, std::string_view key) const;
  void hash_key_into(uint32_t rule, std::string_view key, std::string& out) const;
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
    bool batched = false;
    const config::Rule* rule = nullptr;
  };
  // One window's counts not yet in the fleet window (batched alerts).
  struct Pending {
    uint32_t rule = 0;
    std::string key;
    std::map<std::pair<int64_t, uint32_t>, uint64_t> deltas;  // (bucket, event) -> count
    int64_t newest_t = 0;
    int64_t now_bucket = 0;
    uint64_t unsynced = 0;
    std::string line;
  };
  // What a sent request was for, to act on its reply.
  struct Sent {
    uint32_t rule = 0;
    std::string key;
    std::string line;
    bool reconcile = false;          // the claim of an alert raised locally: nothing to write
    std::vector<uint64_t> counts{};  // a `when` claim: the flush's counts, for its alert
  };
  // A throttle window's lease (batched throttles).
  struct Lease {
    int64_t bucket = -1;  // the bucket the permits are for
    uint64_t permits = 0;
    int64_t refused = -1;   // the first bucket with room after a refusal: suppress before it, no ask
    uint64_t used = 0;      // passes in `bucket`
    bool asking = false;    // a lease asked in the background (after a refusal) has not come back
    uint64_t last_sum = 0;  // the fleet window's count at the last answer
  };
  // A Lease reply into the window's lease (lease_mu_ held).
  static void take_lease(Lease& l, int64_t bucket, const Reply& reply);
  // The lease of a rule's window for `key` (lease_mu_ held); hk: its hash key, built only for a key.
  Lease& lease_of(uint32_t rule, std::string_view key, std::string& hk);
  Request lease_request(uint32_t rule, std::string_view key, int64_t bucket, const Lease& l) const;
  // The fleet's newest bucket against this host's: a host whose log time
  // trails the fleet by more than half a window is told once per rule.
  void check_lag(uint32_t rule, int64_t own_bucket, const Reply& reply);
  Request request(Op op, uint32_t rule, std::string_view key) const;
  int64_t bucket_of(uint32_t rule, int64_t ms) const;  // the absolute bucket of a time (before 1970: 0)
  void done_locked(std::span<const Request> sent, std::span<const Reply> replies, bool answered);  // batch_mu_ held
  bool digested(uint32_t rule, std::string_view key) const;              // the hash names the key by its digest
  Request flush_request(const std::string& hash_key, const Pending& p);  // with batch_mu_ held; a new seq
  std::string next_episode();

  FleetClient& client_;
  std::vector<RuleInfo> rules_;
  config::Unreachable on_unreachable_;
  std::string episode_prefix_;  // <host>:<start ms>:
  std::atomic<uint64_t> episodes_{0};
  std::unique_ptr<std::atomic<bool>[]> lag_told_;  // by rule
  std::string host_id_;                            // <host>:<start ms>: flush sequences are per process

  std::mutex batch_mu_;  // pending_, retry_, claims_, sent_: deciders add, the fleet thread takes
  std::unordered_map<std::string, Pending> pending_;  // by hash key
  std::vector<std::pair<Request, Sent>> retry_;       // sent and not answered: sent again as they were
  std::vector<std::pair<Request, Sent>> to_lease_;    // leases asked in the background
  std::vector<std::pair<Request, Sent>> to_claim_;    // `when` found true after a flush, or raised locally: Claim next
  std::vector<Sent> sent_;                            // what collect() handed out, in order
  std::vector<engine::FleetClaim> claims_;
  // Windows where an early flush could not raise an alert before this log
  // time (inside a cooldown; at Y): flushed every `sync` only.
  std::unordered_map<std::string, int64_t> hot_until_;
  std::atomic<uint64_t> seq_{0};

  std::mutex lease_mu_;
  std::unordered_map<std::string, Lease> leases_;  // by hash key (rules with `key`)
  std::vector<Lease> keyless_leases_;              // by rule: no key to build or hash per line
};

}  // namespace swthrottle::fleet
