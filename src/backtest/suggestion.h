// The suggestion line of a swept alert rule (man page: BACKTEST,
// "Suggestion"): the smallest candidate threshold that would have fired at
// most the target's number of alerts over the history (target: N per
// DURATION, scaled to the history's length, at least 1), against what the
// rule's own threshold fired. When the rule's own is within the target, it
// says so, and names a smaller value that would be too (more sensitive).
// Throttles get none: a throttle's Y is a budget the user sets, not a level
// to find.
#pragma once

#include <cstdint>
#include <string>

#include "backtest/report.h"

namespace swthrottle::backtest {

// The alerts the target allows over `span_ms` of history: N per DURATION,
// rounded down, and at least 1.
uint64_t alert_budget(uint64_t per, int64_t duration_ms, int64_t span_ms);

// "" when the rule has no sweep or is a throttle.
std::string suggest(const RuleResult& rule, uint64_t budget, int64_t span_ms, const std::string& target_text);

}  // namespace swthrottle::backtest
