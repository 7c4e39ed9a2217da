// The throttle kind with `fleet` (man page: FLEET): a line passes when the
// fleet window has room; the host's own window counts what passed here, and
// decides alone, by on_unreachable, when the fleet gives no answer in time.
#include "engine/rule_logic.h"
#include "engine/rule_state.h"
#include "engine/throttle_logic.h"

namespace swthrottle::engine {
namespace {

// A throttle's limit without an answer from the fleet (on_unreachable).
uint64_t fallback_limit(uint64_t limit, config::Unreachable u) {
  return u == config::Unreachable::Local ? limit : u == config::Unreachable::Open ? UINT64_MAX : 0;
}

class FleetThrottleLogic final : public RuleLogic {
 public:
  Decision offer(RuleState& rs, Hit& hit) const override {
    if (hit.fleet == nullptr) return throttle_logic().offer(rs, hit);
    FleetAnswer a;
    const bool answered = rs.batched ? hit.fleet->lease(rs.index, hit.key, hit.now, a)
                                     : hit.fleet->throttle(rs.index, hit.key, hit.t, hit.now, a);
    uint64_t limit = 0;
    FleetSaid said = FleetSaid::Unreachable;
    if (answered) {
      limit = a.passed ? UINT64_MAX : 0;
      said = a.passed ? FleetSaid::Room : FleetSaid::Full;
      if (a.late) rs.stats().fleet_late.add();
    } else {
      rs.stats().fleet_local.add();
      limit = fallback_limit(rs.limit, hit.fleet->on_unreachable());
    }
    Decision d = decide_throttle(rs, hit, limit);
    d.fleet = said;
    if (answered && a.late && !d.late) {
      rs.stats().late.add();
      d.late = true;
    }
    return d;
  }

  void check_key(RuleState& rs, window::Window& w, std::string_view key, int64_t now,
                 std::vector<Record>& out) const override {
    throttle_logic().check_key(rs, w, key, now, out);
  }
  bool keeps_pending() const override { return true; }
  void take_pending(RuleState& rs, window::Window& w, std::string_view key, int64_t now,
                    std::vector<Record>& out) const override {
    throttle_logic().take_pending(rs, w, key, now, out);
  }
};

}  // namespace

const RuleLogic& fleet_throttle_logic() {
  static const FleetThrottleLogic logic;
  return logic;
}

}  // namespace swthrottle::engine
