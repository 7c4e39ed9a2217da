// What delivery says about itself (man page: METRICS, DELIVERY): the
// figures of each destination and of the outbox, as plain values the pool
// and the outbox hand out and every report (--stats text and JSON, the
// Prometheus text) reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace swthrottle::delivery {

struct DestinationStats {
  std::string label;             // Destination::label: never its URL
  std::string_view preset;       // "webhook", "slack", ...
  uint32_t number = 0;           // Destination::number()
  uint64_t queued = 0;           // deliveries submitted (recovered ones included)
  uint64_t delivered = 0;        // deliveries acknowledged with a 2xx
  uint64_t attempts = 0;         // POSTs made (batches count once)
  uint64_t failed_attempts = 0;  // POSTs that got no 2xx
  uint64_t dead_letters = 0;     // deliveries given up
  uint64_t reposts = 0;          // Alertmanager: firing alerts posted again
  uint64_t pending = 0;          // waiting now
  bool circuit_open = false;
};

struct OutboxStats {
  uint64_t added = 0;
  uint64_t delivered = 0;     // done() calls
  uint64_t dead_letters = 0;  // dead_letter() calls, "outbox full" drops included
  uint64_t dropped = 0;       // dead-lettered by DropOldest
  uint64_t recovered = 0;     // pending at open (a previous run's)
  uint64_t pending = 0;       // now
  // Done with (delivered or dead-lettered), but the journal could not
  // record it (a full disk): still listed there, so a restart would send
  // it again, until the journal is rewritten.
  uint64_t unrecorded = 0;
};

// A run's delivery: no destination is an empty list; the outbox is there
// only with --state (and something to deliver).
struct DeliveryStats {
  std::vector<DestinationStats> destinations;
  std::optional<OutboxStats> outbox;
};

}  // namespace swthrottle::delivery
