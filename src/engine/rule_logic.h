// RuleLogic: what one kind of rule does (DESIGN.md §3) with a line of one of
// its keys, at a boundary check, and with what a window holds back when it
// goes. The engine finds the key and its window, and calls the logic of the
// rule's kind; the logic counts, decides, builds the rule's records and
// returns a Decision. A new kind of rule is a file that implements this
// interface, plus a line in logic_for()'s table (rule_logic.cpp).
//
// Internal to src/engine/.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "config/rules.h"
#include "engine/decision.h"
#include "engine/engine.h"
#include "engine/fleet_link.h"
#include "engine/record.h"
#include "window/window.h"

namespace swthrottle::engine {

struct RuleState;

// One timed line of a rule's key, as the engine hands it to the rule's logic.
struct Hit {
  const LineEvent& line;
  uint64_t events = 0;  // bit i: the line matched event i of the rule
  int64_t t = 0;        // the line's time
  int64_t now = 0;      // "now" after the line
  std::string_view key;
  window::Window& window;              // the key's window
  std::span<std::string_view> values;  // the template fields of the line (config::Field order)
  std::span<uint64_t> counts;          // scratch of 64 counters: the window's counts after the decision
  std::vector<Record>& summaries;      // group 2: summaries written because the line passes
  std::vector<Record>& alerts;         // group 4: alerts and resolveds
  FleetLink* fleet = nullptr;          // null: rules with `fleet` decide alone
  bool want_count = false;             // fill Decision::window_count (--explain, an observer)
};

class RuleLogic {
 public:
  virtual ~RuleLogic() = default;
  // Counts the hit's line in its key's window and decides.
  virtual Decision offer(RuleState& rs, Hit& hit) const = 0;
  // The boundary check of one key's window at `now`: resolves, room-again summaries.
  virtual void check_key(RuleState& rs, window::Window& w, std::string_view key, int64_t now,
                         std::vector<Record>& out) const = 0;
  // The boundary check of what the rule keeps beside its keys' windows,
  // once per check and before the keys.
  virtual void check_rule(RuleState& /*rs*/, int64_t /*now*/, FleetLink* /*fleet*/,
                          std::vector<Record>& /*out*/) const {}
  // Whether a key's window can hold something back for later (a throttle's
  // summary), so that take_pending() is worth calling when it goes.
  virtual bool keeps_pending() const { return false; }
  // A key's window goes (end of input, eviction, a reload that starts the
  // rule fresh): what it held back, as records.
  virtual void take_pending(RuleState& /*rs*/, window::Window& /*w*/, std::string_view /*key*/, int64_t /*now*/,
                            std::vector<Record>& /*out*/) const {}
};

// The logic of each kind of rule, and the table that picks one for a rule.
const RuleLogic& throttle_logic();
const RuleLogic& alert_logic();
const RuleLogic& fleet_throttle_logic();
const RuleLogic& fleet_alert_logic();
const RuleLogic& logic_for(const config::Rule& rule);

}  // namespace swthrottle::engine
