#include "config/rule_condition.h"

#include <string>

namespace swthrottle::config {

ExprNames condition_names(const Rule& r) { return ExprNames{r.event_names, r.distinct.has_value()}; }

Expr threshold_condition(const Rule& r, uint64_t y) {
  if (!r.distinct) return Expr::threshold(y, r.events.size());
  // "distinct >= Y" always parses: `distinct` is a name of the rule and Y a whole number.
  Result<Expr> e = Expr::parse("distinct >= " + std::to_string(y), condition_names(r));
  return e ? std::move(*e) : Expr();
}

Result<Expr> parse_rule_condition(const Rule& r, std::string_view text) {
  return Expr::parse(text, condition_names(r));
}

}  // namespace swthrottle::config
