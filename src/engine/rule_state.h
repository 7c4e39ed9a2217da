// RuleState: the engine's state of one rule (its compiled condition, its
// windows, its stats) and the logic of its kind. Internal to src/engine/:
// the engine's files and the rule logics include it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "engine/rule_logic.h"

namespace swthrottle::engine {

// A rule's compiled `when` as the window core's Condition.
class ExprCondition final : public window::Condition {
 public:
  explicit ExprCondition(const config::Expr* e) : expr_(e) {}
  bool holds(std::span<const uint64_t> counts) const override { return expr_->eval(counts); }

 private:
  const config::Expr* expr_;
};

// The fleet episodes this host opened (it claimed their alert), by key: at
// its boundary checks it resolves those whose condition no longer holds in
// the fleet window. Shared like the windows, so a SIGHUP keeps them.
struct FleetEpisodes {
  std::mutex mu;
  std::map<std::string, std::string, std::less<>> by_key;  // key -> episode
};

struct RuleState {
  const config::Rule* rule = nullptr;
  const RuleLogic* logic = nullptr;  // the rule's kind (rule_logic.h)
  uint32_t index = 0;
  bool throttle = false;
  uint64_t limit = 0;  // throttle: Y
  bool needs_captures = false;
  std::string threshold_text;  // {threshold}: Y, or the `when` text
  window::WindowSpec spec;
  uint32_t tallied_events = 0;  // throttle of several events: LineEvents::of
  ExprCondition condition{nullptr};
  ExprCondition clear{nullptr};  // resolve_when, when the rule has one
  window::AlertPolicy policy;
  // Shared so that a reloaded engine can keep them (SIGHUP) while deciders
  // still finishing a line on the old engine use the same windows.
  std::shared_ptr<window::Window> single;  // a rule without `key`
  std::shared_ptr<KeyMap> keys;            // a rule with `key`
  // Backtest: the rules whose windows share `keys` (a keyed rule and its
  // candidate copies, engine/window_group.h), this one being member
  // `member`; null when the map is the rule's own.
  std::shared_ptr<const std::vector<uint32_t>> sharers;
  uint32_t member = 0;  // its window in the group (a rider: the window it rides on)
  int32_t rider = -1;   // an AlertRider of the group: decided on member `member`'s window
  // Other members with windows of their own look the same key up on the same line.
  bool shares_lookup = false;
  bool observed = false;           // the CountObserver wants this rule's counts
  std::vector<RuleState*> riders;  // the riders on this rule's window, decided with its lines
  std::shared_ptr<RuleStats> stats_ptr = std::make_shared<RuleStats>();
  RuleStats& stats() { return *stats_ptr; }
  bool fleet = false;    // config::Rule::fleet is on
  bool batched = false;  // fleet = "batched"
  std::shared_ptr<FleetEpisodes> episodes = std::make_shared<FleetEpisodes>();
  // A backtest watches its hits: an observer, or riders on its window
  // (Engine::offer_watched, shared_keys.cpp).
  bool watched() const { return observed || !riders.empty(); }
};

// The slots this line's rules that share key maps found: the first rule of
// a map to look the key up leaves the slot here for the others.
struct Engine::RecentSlots {
  static constexpr std::size_t kSize = 4;
  std::array<std::pair<const KeyMap*, SlotRef>, kSize> slots{};
  std::size_t next = 0;
};

}  // namespace swthrottle::engine
