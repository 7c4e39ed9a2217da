// What the fleet client says about itself (man page: METRICS, FLEET): its
// counters as the fleet thread and the deciders bump them (FleetStats), and
// the same as plain values at one moment (FleetCounts) for every report.
#pragma once

#include <atomic>
#include <cstdint>

namespace swthrottle::fleet {

// FleetStats' counters, read at one moment; the comments are FleetStats'.
struct FleetCounts {
  uint64_t asked = 0;
  uint64_t answered = 0;
  uint64_t unanswered = 0;
  uint64_t timeouts = 0;
  uint64_t errors = 0;
  uint64_t degraded = 0;
  uint64_t reconnects = 0;
  uint64_t reloads = 0;
  uint64_t resets = 0;
  uint64_t evicted = 0;
  uint64_t failovers = 0;
  uint64_t unconfirmed = 0;
  uint64_t flushes = 0;
  uint64_t late_flushed = 0;
  uint64_t dropped = 0;
  uint64_t local_alerts = 0;
  uint64_t duplicates = 0;
  bool degraded_now = false;
};

// Counters for --stats. Relaxed: reports, not synchronization.
struct FleetStats {
  std::atomic<uint64_t> asked{0};         // requests asked
  std::atomic<uint64_t> answered{0};      // answered by Redis in time
  std::atomic<uint64_t> unanswered{0};    // degraded, timed out, or refused: decided locally
  std::atomic<uint64_t> timeouts{0};      // waited the whole timeout
  std::atomic<uint64_t> errors{0};        // Redis or a script refused a request
  std::atomic<uint64_t> degraded{0};      // times Redis became unreachable (or was refused)
  std::atomic<uint64_t> reconnects{0};    // times it became reachable again
  std::atomic<uint64_t> reloads{0};       // NOSCRIPT answers (script cache lost), each a reload
  std::atomic<uint64_t> resets{0};        // run_id changes: Redis restarted
  std::atomic<uint64_t> evicted{0};       // keys Redis evicted while we were connected
  std::atomic<uint64_t> failovers{0};     // primaries replaced by a replica (Sentinel, Cluster)
  std::atomic<uint64_t> unconfirmed{0};   // counts those primaries had not replicated: what failovers may have lost
  std::atomic<uint64_t> flushes{0};       // batched: windows flushed
  std::atomic<uint64_t> late_flushed{0};  // batched: flushed counts older than the fleet window
  std::atomic<uint64_t> dropped{0};       // batched: counts dropped, too many windows waiting (long outage)
  std::atomic<uint64_t> local_alerts{0};  // alerts raised on the host's own window without the fleet
  std::atomic<uint64_t> duplicates{0};    // of those, found raised by another host too (its claim failed)
  std::atomic<bool> degraded_now{false};

  // The counters as plain values, for a snapshot (each read on its own).
  FleetCounts values() const;
};

inline FleetCounts FleetStats::values() const {
  FleetCounts c;
  c.asked = asked.load(std::memory_order_relaxed);
  c.answered = answered.load(std::memory_order_relaxed);
  c.unanswered = unanswered.load(std::memory_order_relaxed);
  c.timeouts = timeouts.load(std::memory_order_relaxed);
  c.errors = errors.load(std::memory_order_relaxed);
  c.degraded = degraded.load(std::memory_order_relaxed);
  c.reconnects = reconnects.load(std::memory_order_relaxed);
  c.reloads = reloads.load(std::memory_order_relaxed);
  c.resets = resets.load(std::memory_order_relaxed);
  c.evicted = evicted.load(std::memory_order_relaxed);
  c.failovers = failovers.load(std::memory_order_relaxed);
  c.unconfirmed = unconfirmed.load(std::memory_order_relaxed);
  c.flushes = flushes.load(std::memory_order_relaxed);
  c.late_flushed = late_flushed.load(std::memory_order_relaxed);
  c.dropped = dropped.load(std::memory_order_relaxed);
  c.local_alerts = local_alerts.load(std::memory_order_relaxed);
  c.duplicates = duplicates.load(std::memory_order_relaxed);
  c.degraded_now = degraded_now.load(std::memory_order_acquire);
  return c;
}

}  // namespace swthrottle::fleet
