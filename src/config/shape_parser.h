// The keys of the distinct, first-seen and previous-window rules, as
// sections of parse_rule (rule_parser.cpp): each reads its keys from the
// rule's table into `out`, or says what is wrong at file:line:col.
// Internal to src/config/.
#pragma once

#include "config/rule_parser.h"
#include "config/rule_table.h"

namespace swthrottle::config {

// distinct = TEMPLATE: before the condition, which may name `distinct`.
MaybeError parse_distinct(RuleTable& r, PendingRule& out);
// new = TEMPLATE, remember, learn, max_values: after the templates.
MaybeError parse_new_value(RuleTable& r, PendingRule& out);
// for, forget, then and within refused beside them: before parse_watch.
MaybeError check_one_kind(RuleTable& r, PendingRule& out);
// What they ask of the rest of the rule (previous() limits, fleet), last.
MaybeError check_shapes(RuleTable& r, PendingRule& out);

}  // namespace swthrottle::config
