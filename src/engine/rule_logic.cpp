#include "engine/rule_logic.h"

#include "config/watch_parser.h"

namespace swthrottle::engine {
namespace {

bool is_fleet_throttle(const config::Rule& r) {
  return r.fleet != config::FleetMode::Off && r.kind == config::RuleKind::Throttle;
}
bool is_fleet_alert(const config::Rule& r) {
  return r.fleet != config::FleetMode::Off && r.kind == config::RuleKind::Alert;
}
bool is_throttle(const config::Rule& r) { return r.kind == config::RuleKind::Throttle; }
bool is_distinct(const config::Rule& r) { return r.distinct.has_value(); }
bool is_new_value(const config::Rule& r) { return r.new_value.has_value(); }
bool is_alert(const config::Rule& r) { return r.kind == config::RuleKind::Alert; }
bool is_watched(const config::Rule& r) { return config::is_watched(r); }
bool is_sequence(const config::Rule& r) { return config::is_sequence(r); }

struct Kind {
  bool (*applies)(const config::Rule&);
  const RuleLogic& (*logic)();
};

// The first row that applies is the rule's kind: more specific rows first.
// One row a line, so that a new kind is a line of its own in a diff.
// clang-format off
constexpr Kind kKinds[] = {
    {is_fleet_throttle, fleet_throttle_logic},
    {is_fleet_alert, fleet_alert_logic},
    {is_distinct, distinct_logic},
    {is_new_value, new_value_logic},
    {is_watched, watch_logic},
    {is_sequence, sequence_logic},
    {is_throttle, throttle_logic},
    {is_alert, alert_logic},
};
// clang-format on

}  // namespace

const RuleLogic& logic_for(const config::Rule& rule) {
  for (const Kind& k : kKinds)
    if (k.applies(rule)) return k.logic();
  return alert_logic();  // unreachable: every rule is an alert or a throttle
}

}  // namespace swthrottle::engine
