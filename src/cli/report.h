// Human-readable reports: the --check summary and --stats (--explain: cli/explain.h).
#pragma once

#include <string>
#include <string_view>

#include "config/rules.h"
#include "engine/engine.h"
#include "fleet/fleet_stats.h"

namespace swthrottle::cli {

// --check: one block per rule, then "N rules OK".
std::string check_summary(const config::RuleSet& rules);

// --stats / SIGUSR1, for stderr.
std::string stats_report(const engine::Engine& engine);

// --stats / SIGUSR1: the fleet's line (only with fleet rules).
std::string fleet_stats_report(const fleet::FleetCounts& stats, const config::FleetSettings& fleet);

}  // namespace swthrottle::cli
