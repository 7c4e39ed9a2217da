// The first-seen kind: an alert rule with `new = "{ua}"`. Its line's value
// (per key, when the rule has one) is looked up in the rule's memory of
// values (value_memory.h): a value not seen within `remember` raises an
// alert, once; one seen since is remembered again; while the rule learns
// (its first `learn`) values are only remembered. The rule keeps no
// window per key: one window, which counts nothing.
#include <bit>
#include <string>

#include "engine/rule_logic.h"
#include "engine/rule_records.h"
#include "engine/rule_state.h"
#include "util/value_hash.h"

namespace swthrottle::engine {
namespace {

Verdict verdict_of(ValueMemory::Seen s) {
  switch (s) {
    case ValueMemory::Seen::New: return Verdict::NewValue;
    case ValueMemory::Seen::Again: return Verdict::SeenValue;
    case ValueMemory::Seen::Learning: break;
  }
  return Verdict::Learning;
}

class NewValueLogic final : public RuleLogic {
 public:
  Decision offer(RuleState& rs, Hit& hit) const override {
    Decision d;
    // The line's value; an empty one (its captures missing) is no value.
    thread_local std::string value;
    value.clear();
    rs.rule->new_value->render(value, hit.values);
    if (value.empty()) {
      d.verdict = Verdict::NoValue;
      return d;
    }
    const uint64_t h = rs.rule->key ? value_hash(hit.key, value) : value_hash(value);
    const ValueMemory::Outcome o = rs.values->see(h, hit.t);
    if (o.forgot) rs.stats().evictions.add();
    rs.stats().events.add(static_cast<uint64_t>(std::popcount(hit.events)));
    d.verdict = verdict_of(o.seen);
    if (o.seen == ValueMemory::Seen::Learning) rs.stats().learned.add();
    if (o.seen != ValueMemory::Seen::New) return d;
    // The alert counts the line's events: one each.
    const std::size_t n = rs.rule->events.size();
    for (std::size_t i = 0; i < n; ++i) hit.counts[i] = hit.events >> i & 1;
    d.counts_known = true;
    Record r =
        alert_record(RecordType::Alert, rs, hit.key, hit.now, hit.counts.first(n), 0, hit.values, hit.line.text, true);
    r.value = value;
    r.has_value = true;
    hit.alerts.push_back(std::move(r));
    return d;
  }

  void check_key(RuleState& /*rs*/, window::Window& /*w*/, std::string_view /*key*/, int64_t /*now*/,
                 std::vector<Record>& /*out*/) const override {}

  bool windows_per_key() const override { return false; }
};

}  // namespace

const RuleLogic& new_value_logic() {
  static const NewValueLogic logic;
  return logic;
}

}  // namespace swthrottle::engine
