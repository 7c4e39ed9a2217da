// The --check summary, in prose (--explain: cli/explain.h; --stats: metrics/stats_text.h).
#pragma once

#include <string>
#include <string_view>

#include "config/rules.h"

namespace swthrottle::cli {

// --check: one block per rule, then "N rules OK".
std::string check_summary(const config::RuleSet& rules);

}  // namespace swthrottle::cli
