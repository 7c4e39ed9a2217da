// The destinations of a run (man page: DELIVERY): those the command line,
// [delivery], its [[delivery.destination]] tables and the rules name, with
// their secrets (from the environment or files, never the command line).
// Deliveries (app/deliveries.h) starts the pool over them.
#pragma once

#include <string>
#include <vector>

#include "cli/options.h"
#include "config/rules.h"
#include "delivery/delivery_stats.h"
#include "delivery/destination.h"
#include "util/result.h"

namespace swthrottle::app {

// The labels of the destinations `rules` (with the command line) name that
// the running destinations (`started`) do not have: a reload cannot add one.
std::vector<std::string> destinations_not_started(const cli::Options& options, const config::RuleSet& rules,
                                                  const std::vector<delivery::DestinationStats>& started);

// The destinations a run with these options and rules delivers to, secrets
// read (url_file, key_file, header files, the environment's token).
Result<std::vector<delivery::Destination>> destinations_of(const cli::Options& options, const config::RuleSet& rules);

}  // namespace swthrottle::app
