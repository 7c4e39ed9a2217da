// The distinct kind: an alert rule with `distinct = "{ip}"`. A line's events
// are counted in its key's window as an alert rule's are, and the value its
// template renders is counted once per window however often it comes
// (window/distinct_count.h); the condition reads `distinct`, their count
// (a threshold compares it). The key's window is a DistinctWindow.
#include <algorithm>
#include <array>
#include <optional>
#include <string>

#include "engine/alert_logic.h"
#include "engine/distinct_window.h"
#include "engine/rule_logic.h"
#include "engine/rule_records.h"
#include "engine/rule_state.h"
#include "util/value_hash.h"

namespace swthrottle::engine {
namespace {

class DistinctLogic final : public RuleLogic {
 public:
  Decision offer(RuleState& rs, Hit& hit) const override {
    // The line's value; an empty one (its captures missing) is no value.
    thread_local std::string value;
    value.clear();
    rs.rule->distinct->render(value, hit.values);
    const std::optional<uint64_t> h = value.empty() ? std::nullopt : std::optional<uint64_t>(value_hash(value));
    std::fill_n(hit.counts.begin(), std::min<std::size_t>(rs.counts_width, 64), 0);
    auto& w = static_cast<DistinctWindow&>(hit.window);
    const DistinctWindow::Outcome o = w.offer_distinct(hit.t, hit.now, hit.events, h, rs.policy, hit.counts);
    const std::size_t before = hit.alerts.size();
    Decision d = alert_decision(rs, hit, o.alert);
    d.estimated = o.distinct.estimated;
    // What a threshold of the rule compares, for the backtest's profile.
    if (hit.want_count && d.counted) d.window_count = o.distinct.value;
    for (std::size_t i = before; i < hit.alerts.size(); ++i) hit.alerts[i].distinct_estimated = d.estimated;
    return d;
  }

  void check_key(RuleState& rs, window::Window& w, std::string_view key, int64_t now,
                 std::vector<Record>& out) const override {
    std::array<uint64_t, 64> counts{};
    const DistinctWindow::Outcome o = static_cast<DistinctWindow&>(w).tick_distinct(now, rs.policy, counts);
    if (o.alert.action != window::AlertAction::Resolved) return;
    out.push_back(resolved_record(rs, key, now, counts, o.alert.suppressed));
    out.back().distinct_estimated = o.distinct.estimated;
  }

  const WindowMaker* window_maker() const override { return &DistinctWindow::maker(); }
};

}  // namespace

const RuleLogic& distinct_logic() {
  static const DistinctLogic logic;
  return logic;
}

}  // namespace swthrottle::engine
