// /healthz (man page: METRICS, "Health"): is this swthrottle doing its job?
// Pure: the snapshot and the rules come in.
//
// Unhealthy when: not ready yet; an input has lines waiting (a followed
// file with bytes behind) and none of its lines was decided for longer
// than `stall_ms` (counted from the start when none ever was); or the fleet
// is degraded (fleet rules decide alone).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metrics/snapshot.h"

namespace swthrottle::metrics {

struct Health {
  bool ok = true;
  std::vector<std::string> problems;  // one line each, for the body of a 503
};

Health health_of(const Snapshot& s, int64_t stall_ms);

}  // namespace swthrottle::metrics
