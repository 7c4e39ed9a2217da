// The rule diff of `swthrottle backtest --against OLD` (man page: BACKTEST):
// the alerts of the old rules against the new ones over the same history,
// rule by rule and key by key (the pairing is in result.h, RuleDiff).
#pragma once

#include <vector>

#include "backtest/report.h"

namespace swthrottle::backtest {

// `older`, `newer`: the results of the two replays, every rule of each. One
// RuleDiff per rule name of either side: the new rules' order, then rules
// only the old rules have.
std::vector<RuleDiff> diff_rules(const std::vector<RuleResult>& older, const std::vector<RuleResult>& newer);

}  // namespace swthrottle::backtest
