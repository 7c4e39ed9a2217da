// The Prometheus text exposition (format 0.0.4) of a Snapshot (man page:
// METRICS): swthrottle_ names, _total counters, base units (seconds,
// bytes), one family per line of HELP and TYPE, label values escaped
// (backslash, double quote, newline). `promtool check metrics` accepts it.
#pragma once

#include <string>

#include "metrics/snapshot.h"

namespace swthrottle::metrics {

std::string prometheus_text(const Snapshot& s);

// The same figures as one JSON object (for --stats with --format json):
// {"time":..., "lines":..., "rules":[{...}], "inputs":[...], ...}, no newline.
std::string stats_json(const Snapshot& s);

}  // namespace swthrottle::metrics
