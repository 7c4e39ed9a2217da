// A rule's condition as the rule's names read it: its events, previous(e),
// and `distinct` when the rule counts distinct values. The rules parser and
// `swthrottle backtest`'s candidate copies (backtest/sweep_plan.h) build
// conditions the same way here.
#pragma once

#include <cstdint>
#include <string_view>

#include "config/expr.h"
#include "config/rules.h"
#include "util/result.h"

namespace swthrottle::config {

// The names `when` and `resolve_when` may use in rule `r`.
ExprNames condition_names(const Rule& r);

// What threshold = "Y per X" means for rule `r`: the sum of its events'
// counts >= y, or for a rule with `distinct`, the count of distinct values >= y.
Expr threshold_condition(const Rule& r, uint64_t y);

// `text` as a condition of rule `r` (a `when`, a `resolve_when`).
Result<Expr> parse_rule_condition(const Rule& r, std::string_view text);

}  // namespace swthrottle::config
