// One question a fleet rule asks the fleet's Redis, and its answer
// (DESIGN.md §8.3-8.7; man page: FLEET). A plain value: the decider that
// asks, the fleet thread that sends it and the script layer (scripts.h) that
// encodes it all share it.
//
// Every fleet window is one Redis hash, `hash_key` (built by the caller:
// swt:{<namespace>:<rule>:<defhash>:<key>}). Buckets are absolute numbers,
// floor(t / width), the same integer on every host for the same time. The
// hash holds:
//   nb            the newest bucket any host moved the window to (fleet "now")
//   <b>:<e>       the count of event e in bucket b
//   s:<e>         the sum of event e over the window
//   last, ep, sup alert state: time of the last alert (ms, the event's time),
//                 the episode that alert opened, held-back lines since it
//   k             the rule key as written, when hash_key holds a digest of it
// and expires `shape.ttl_ms` after its last write (PEXPIRE, wall time).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace swthrottle::fleet {

struct WindowShape {
  uint32_t buckets = 10;  // B, 1..600
  int64_t width_ms = 0;   // w = X / B
  uint32_t events = 1;    // E, 1..64: counters per bucket (a throttle has 1)
  int64_t ttl_ms = 0;     // PEXPIRE after every write: max(2X, cooldown) + 10 s
  // Every op sends the whole shape (Claim and Resolve write too, so they
  // need ttl_ms): the scripts refuse B, E or ttl_ms out of range (ttl_ms 0
  // included) and every number outside 0..10^14-1 (lua/prelude.lua).
};

enum class Op : uint8_t {
  // Throttle: advance to max(nb, now_bucket, bucket); when the window's sum is
  // below `limit`, pass and count one in `bucket` (or in nb when `bucket` is
  // late: older than the window); else suppress (nothing counted).
  Throttle,
  // Alert: advance as above; unless late, add one to every event of `events`
  // (bit i: event i) in `bucket`; return the window's per-event sums. When
  // `limit` > 0 and the sum of all events >= limit, claim too (as Claim).
  Alert,
  // Claim: the compare-and-set of "alert once per cooldown, fleet-wide":
  // when `last` is unset or t_ms - last >= cooldown_ms: last = t_ms,
  // ep = episode, reply.suppressed = sup, sup = 0, claimed; else sup += 1.
  Claim,
  // Resolve: when ep == episode, delete ep: resolved (reply.suppressed = sup).
  // Else nothing (another host's episode, or already resolved).
  Resolve,
  // Read: advance to now_bucket; return the per-event sums.
  Read,
  // Flush (fleet = "batched", alerts): a host's counts since its last flush
  // of this window, made idempotent by (host, seq): a seq not above the
  // host's last one adds nothing (a retry after a lost reply). Advances to
  // max(nb, now_bucket, the deltas' buckets); deltas older than the window
  // are not added and counted in reply.late_count. Returns the sums; claims
  // as Alert does when `limit` > 0 (a retry whose first try claimed answers
  // claimed again: ep still holds its episode).
  Flush,
  // Lease (fleet = "batched", throttles): advance to `bucket` (the host's
  // now); first give back `return_n` unused permits of `return_bucket` if it
  // is still in the window; then grant min(want, Y - sum, max(1, (Y - sum) /
  // (2 H_active))) permits, counted in `bucket` at once (in nb when `bucket`
  // is late). H_active: the hosts (by `host`) that took a lease in the window.
  Lease,
};
inline constexpr std::size_t kOps = 7;

// A host's count of one event in one bucket, not yet in the fleet window.
struct Delta {
  int64_t bucket = 0;
  uint32_t event = 0;
  uint64_t n = 0;
};

struct Request {
  Op op = Op::Read;
  std::string hash_key;
  std::string original_key;  // set when hash_key holds a digest: stored in field k
  WindowShape shape;
  int64_t bucket = 0;         // Throttle, Alert: the event's bucket
  int64_t now_bucket = 0;     // Throttle, Alert, Read: the asking host's now
  uint64_t limit = 0;         // Throttle: Y. Alert: claim at this sum (0: never)
  uint64_t events = 0;        // Alert: the events to add, one each
  int64_t t_ms = 0;           // Alert (claim), Claim: the event's time
  int64_t cooldown_ms = 0;    // Alert (claim), Claim
  std::string episode;        // Alert (claim), Claim, Flush: the id a claim writes; Resolve: the id to end
  std::vector<Delta> deltas;  // Flush: at most 4096
  std::string host;           // Flush, Lease: this process (host name and start time)
  uint64_t seq = 0;           // Flush: above every earlier flush of this host
  uint64_t want = 0;          // Lease: permits asked for (>= 1)
  int64_t return_bucket = 0;  // Lease: the bucket of the permits given back
  uint64_t return_n = 0;      // Lease: unused permits given back (0: none)
};

struct Reply {
  // False: Redis answered with an error, or the script refused its arguments
  // (error says which). The request was not applied.
  bool ok = false;
  std::string error;
  bool passed = false;        // Throttle
  bool late = false;          // Throttle, Alert: the bucket was older than the fleet window
  bool claimed = false;       // Alert (when it claimed), Claim
  bool resolved = false;      // Resolve
  int64_t newest_bucket = 0;  // nb after the step
  uint64_t suppressed = 0;    // Claim/Alert when claimed, Resolve: the fleet's held-back lines
  uint64_t sum = 0;           // Throttle, Lease: the window's count after the step
  uint64_t granted = 0;       // Lease: permits granted
  int64_t room_bucket = 0;    // Lease, none granted: the first bucket with room, as the window stands
  uint64_t active_hosts = 0;  // Lease: H_active, this host included
  uint64_t late_count = 0;    // Flush: counts older than the window, not added
  bool duplicate = false;     // Flush: a seq already applied: nothing added
  uint32_t ncounts = 0;       // Alert, Read: per-event sums in counts[0..ncounts)
  std::array<uint64_t, 64> counts{};
};

}  // namespace swthrottle::fleet
