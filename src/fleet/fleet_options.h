// What the fleet's client is given: where Redis is, who we are to it, how
// long a line may wait, and what it tolerates (man page: FLEET).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "fleet/credentials.h"
#include "fleet/endpoint.h"

namespace swthrottle::fleet {

struct FleetClientOptions {
  Endpoint endpoint;
  Credentials credentials;  // the servers holding windows (SWTHROTTLE_REDIS_*)
  // The sentinels of a redis+sentinel:// endpoint (SWTHROTTLE_SENTINEL_*).
  Credentials sentinel_credentials{"", "", "SWTHROTTLE_SENTINEL"};
  std::chrono::milliseconds timeout{200};
  std::chrono::milliseconds sync{250};  // fleet = "batched": how often the batch sources are flushed
  std::string fallback = "local";       // on_unreachable, for the messages
  // Warn when this host's wall clock and Redis's differ by more than this
  // (a quarter of the narrowest fleet bucket). 0: never.
  int64_t skew_warn_ms = 0;
  // A Redis whose maxmemory-policy can evict windows (allkeys-*, volatile-*)
  // is refused, as if unreachable, unless this is set ([fleet] allow_eviction).
  bool allow_eviction = false;
};

}  // namespace swthrottle::fleet
