// The text of --stats and SIGUSR1 (man page: --stats): a Snapshot as
// "swthrottle: stats: ..." lines for stderr. Its JSON and the Prometheus
// text are beside it (exposition.h), read from the same Snapshot.
//
// The lines, in order: the lines of every input together; one per rule;
// then, when the run has them, the fleet's, exec's, one per delivery
// destination and the outbox's. A figure that only some runs or rules have
// (invalid_json, json_repaired, cut, learned, forgotten, fleet_local) is
// shown only there, so that the lines of the others stay as they were.
#pragma once

#include <string>

#include "metrics/snapshot.h"

namespace swthrottle::metrics {

std::string stats_text(const Snapshot& s);

}  // namespace swthrottle::metrics
