// Human-readable reports: the --check summary, --explain entries, --stats.
#pragma once

#include <string>
#include <string_view>

#include "config/rules.h"
#include "engine/engine.h"
#include "fleet/fleet_client.h"

namespace swthrottle::cli {

// --check: one block per rule, then "N rules OK".
std::string check_summary(const config::RuleSet& rules);

// --explain: the block for one line that matched at least one rule.
std::string explain_line(const config::RuleSet& rules, std::string_view input, uint64_t line_no, std::string_view line,
                         bool timed, int64_t t_ms, const std::vector<engine::ExplainEntry>& entries);

// --stats / SIGUSR1, for stderr.
std::string stats_report(const engine::Engine& engine);

// --stats / SIGUSR1: the fleet's line (only with fleet rules).
std::string fleet_stats_report(const fleet::FleetStats& stats, const config::FleetSettings& fleet);

}  // namespace swthrottle::cli
