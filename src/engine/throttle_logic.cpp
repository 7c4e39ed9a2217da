#include "engine/throttle_logic.h"

#include <array>

#include "engine/rule_records.h"
#include "engine/rule_state.h"

namespace swthrottle::engine {

Decision decide_throttle(RuleState& rs, Hit& hit, uint64_t limit) {
  // A multi-event rule's summaries say which events were suppressed.
  const window::LineEvents events{hit.events, rs.tallied_events};
  const std::span<uint64_t> tally = hit.counts.first(rs.tallied_events);
  const window::ThrottleOutcome o = hit.window.offer_throttle(hit.t, hit.now, limit, 0, events, tally);
  Decision d;
  d.late = o.late;
  d.counted = !o.late;
  if (o.late) rs.stats().late.add();
  if (o.passed) {
    d.verdict = Verdict::Passed;
    rs.stats().passed.add();
    if (o.summary.suppressed != 0) {
      rs.stats().summaries.add();
      hit.summaries.push_back(summary_record(rs, hit.key, hit.now, o.summary, tally));
    }
  } else {
    d.verdict = Verdict::Suppressed;
    d.keep_active = true;  // a summary is pending: the key's boundary checks report it
    rs.stats().suppressed.add();
  }
  if (hit.want_count) {
    hit.counts[0] = 0;
    hit.window.read(hit.counts.first(1));
    d.window_count = hit.counts[0];
    d.counts_known = true;
  }
  return d;
}

namespace {

class ThrottleLogic final : public RuleLogic {
 public:
  Decision offer(RuleState& rs, Hit& hit) const override { return decide_throttle(rs, hit, rs.limit); }

  void check_key(RuleState& rs, window::Window& w, std::string_view key, int64_t now,
                 std::vector<Record>& out) const override {
    std::array<uint64_t, 64> counts;
    const std::span<uint64_t> tally(counts.data(), rs.tallied_events);
    const window::Summary s = w.tick_throttle(now, rs.limit, tally);
    if (s.suppressed == 0) return;
    rs.stats().summaries.add();
    out.push_back(summary_record(rs, key, now, s, tally));
  }

  bool keeps_pending() const override { return true; }
  void take_pending(RuleState& rs, window::Window& w, std::string_view key, int64_t now,
                    std::vector<Record>& out) const override {
    take_summary(rs, w, key, now, out);
  }
};

}  // namespace

const RuleLogic& throttle_logic() {
  static const ThrottleLogic logic;
  return logic;
}

}  // namespace swthrottle::engine
