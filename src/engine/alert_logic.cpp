// The alert kind (DESIGN.md §3): a line's events are counted in its key's
// window, then the condition is evaluated there; the window's alert state
// (window/alert_state.h) raises, holds back within the cooldown, and
// resolves.
#include <algorithm>
#include <array>
#include <bit>

#include "engine/rule_logic.h"
#include "engine/rule_records.h"
#include "engine/rule_state.h"

namespace swthrottle::engine {
namespace {

Verdict verdict_of(const window::AlertOutcome& o) {
  switch (o.action) {
    case window::AlertAction::Alert: return Verdict::Alert;
    case window::AlertAction::Resolved: return Verdict::Resolved;
    case window::AlertAction::None: break;
  }
  return o.holds ? Verdict::HeldBack : o.firing ? Verdict::CountedFiring : Verdict::Counted;
}

class AlertLogic final : public RuleLogic {
 public:
  Decision offer(RuleState& rs, Hit& hit) const override {
    const std::size_t n = rs.rule->events.size();
    std::fill_n(hit.counts.begin(), std::min<std::size_t>(n, 64), 0);
    const window::AlertOutcome o = hit.window.offer_alert(hit.t, hit.now, hit.events, rs.policy, hit.counts);
    Decision d;
    d.counts_known = true;
    d.window_now = o.now_ms;
    if (o.late) {
      rs.stats().late.add();
      d.verdict = Verdict::Late;
      return d;
    }
    d.counted = true;
    d.keep_active = o.firing;
    rs.stats().events.add(static_cast<uint64_t>(std::popcount(hit.events)));
    if (hit.want_count)
      for (std::size_t i = 0; i < n; ++i) d.window_count += hit.counts[i];
    d.verdict = verdict_of(o);
    const std::span<const uint64_t> counts = hit.counts.first(n);
    if (o.action == window::AlertAction::Alert) {
      hit.alerts.push_back(
          alert_record(RecordType::Alert, rs, hit.key, hit.now, counts, o.suppressed, hit.values, hit.line.text, true));
    } else if (o.action == window::AlertAction::Resolved) {
      hit.alerts.push_back(alert_record(RecordType::Resolved, rs, hit.key, hit.now, counts, o.suppressed, hit.values));
    } else if (o.holds) {
      rs.stats().suppressed.add();
    }
    return d;
  }

  void check_key(RuleState& rs, window::Window& w, std::string_view key, int64_t now,
                 std::vector<Record>& out) const override {
    std::array<uint64_t, 64> counts{};
    const window::AlertOutcome o = w.tick_alert(now, rs.policy, counts);
    if (o.action != window::AlertAction::Resolved) return;
    out.push_back(resolved_record(rs, key, now, counts, o.suppressed));
  }
};

}  // namespace

const RuleLogic& alert_logic() {
  static const AlertLogic logic;
  return logic;
}

}  // namespace swthrottle::engine
