#include "engine/rule_logic.h"

namespace swthrottle::engine {
namespace {

bool is_fleet_throttle(const config::Rule& r) {
  return r.fleet != config::FleetMode::Off && r.kind == config::RuleKind::Throttle;
}
bool is_fleet_alert(const config::Rule& r) {
  return r.fleet != config::FleetMode::Off && r.kind == config::RuleKind::Alert;
}
bool is_throttle(const config::Rule& r) { return r.kind == config::RuleKind::Throttle; }
bool is_alert(const config::Rule& r) { return r.kind == config::RuleKind::Alert; }

struct Kind {
  bool (*applies)(const config::Rule&);
  const RuleLogic& (*logic)();
};

// The first row that applies is the rule's kind: more specific rows first.
constexpr Kind kKinds[] = {
    {is_fleet_throttle, fleet_throttle_logic},
    {is_fleet_alert, fleet_alert_logic},
    {is_throttle, throttle_logic},
    {is_alert, alert_logic},
};

}  // namespace

const RuleLogic& logic_for(const config::Rule& rule) {
  for (const Kind& k : kKinds)
    if (k.applies(rule)) return k.logic();
  return alert_logic();  // unreachable: every rule is an alert or a throttle
}

}  // namespace swthrottle::engine
