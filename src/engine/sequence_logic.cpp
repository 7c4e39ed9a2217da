// The sequence kind (config/watch_parser.h; man page: SILENCE AND
// SEQUENCES), SEC's Pair: when `when` holds on a key's window, the key is
// armed; the events of its lines from then on are counted apart, and once
// `then` holds on those counts within `within` of the arming, an alert is
// written, carrying the line that completed the sequence. The key is then
// disarmed; a line after `within` finds it disarmed. While armed, `when` is
// not asked again (a sixth failed login does not restart the wait). The
// cooldown holds as for any alert rule; there is nothing to resolve.
//
// Nothing happens between two lines of a key, so boundary checks have
// nothing to do: an armed key that is not completed simply lapses.
#include <algorithm>
#include <bit>
#include <mutex>
#include <new>

#include "engine/rule_logic.h"
#include "engine/rule_records.h"
#include "engine/rule_state.h"
#include "engine/watch_rule.h"

namespace swthrottle::engine {
namespace {

void init_key(void* where) { new (where) SequenceKey(); }

SequenceKey& key_of(const RuleState& rs, const Slot* slot) {
  void* p = slot != nullptr ? rs.keys->extra(*slot) : rs.watch->single();
  return *std::launder(static_cast<SequenceKey*>(p));
}

std::size_t key_bytes(const config::Rule& r) { return sizeof(SequenceKey) + sizeof(uint64_t) * r.events.size(); }

class SequenceLogic final : public RuleLogic {
 public:
  void setup(RuleState& rs) const override {
    const std::size_t bytes = key_bytes(*rs.rule);
    rs.watch = std::make_shared<WatchRule>(rs.spec.buckets, bytes, init_key);
    if (rs.keys)
      rs.keys = std::make_shared<KeyMap>(rs.rule->mode, rs.spec, rs.rule->max_keys, nullptr, KeyExtra{bytes, init_key});
  }

  Decision offer(RuleState& rs, Hit& hit) const override {
    SequenceKey& k = key_of(rs, hit.slot != nullptr ? hit.slot->get() : nullptr);
    const config::Rule& rule = *rs.rule;
    const std::size_t n = rule.events.size();
    const std::span<uint64_t> counts = hit.counts.first(n);
    const std::span<uint64_t> then_counts(k.then_counts(), n);
    std::lock_guard lock(k.mu);
    Decision d = count_watched_hit(rs, hit, counts);
    if (d.verdict == Verdict::Late) return d;
    if (k.armed && hit.now - k.armed_at_ms > rule.within_ms) k.armed = false;  // lapsed
    if (!k.armed) {
      d.verdict = Verdict::Counted;
      if (!rs.condition.holds(counts)) return d;
      k.armed = true;  // the first step: what comes after this line counts for `then`
      k.armed_at_ms = hit.now;
      std::fill(then_counts.begin(), then_counts.end(), 0);
      d.verdict = Verdict::Armed;
      return d;
    }
    for (uint64_t m = hit.events; m != 0; m &= m - 1) ++then_counts[static_cast<std::size_t>(std::countr_zero(m))];
    d.since_ms = k.armed_at_ms;
    d.verdict = Verdict::Waiting;
    if (!rule.then->eval(then_counts)) return d;
    k.armed = false;  // complete
    if (k.alert.alerted && hit.now - k.alert.last_alert_ms < rs.policy.cooldown_ms) {
      ++k.held_back;
      rs.stats().suppressed.add();
      d.verdict = Verdict::HeldBack;
      return d;
    }
    k.alert.alerted = true;
    k.alert.last_alert_ms = hit.now;
    hit.alerts.push_back(
        alert_record(RecordType::Alert, rs, hit.key, hit.now, counts, k.held_back, hit.values, hit.line.text, true));
    k.held_back = 0;
    d.verdict = Verdict::Alert;
    return d;
  }

  // Nothing changes between two lines of a key.
  void check_key(RuleState&, window::Window&, std::string_view, int64_t, std::vector<Record>&) const override {}

  void save_key(RuleState& rs, const Slot* slot, RuleWindows::Keyed& k) const override {
    SequenceKey& key = key_of(rs, slot);
    std::lock_guard lock(key.mu);
    WatchedKey& w = k.watch.emplace();
    w.armed_at_ms = key.armed ? key.armed_at_ms : -1;
    if (key.armed) w.then_counts.assign(key.then_counts(), key.then_counts() + rs.rule->events.size());
    w.alerted = key.alert.alerted;
    w.last_alert_ms = key.alert.last_alert_ms;
    w.held_back = key.held_back;
  }

  void load_key(RuleState& rs, const SlotRef& slot, const RuleWindows::Keyed& k) const override {
    if (!k.watch) return;
    SequenceKey& key = key_of(rs, slot.get());
    const WatchedKey& w = *k.watch;
    std::lock_guard lock(key.mu);
    key.armed = w.armed_at_ms >= 0;
    key.armed_at_ms = std::max<int64_t>(w.armed_at_ms, 0);
    const std::size_t n = std::min(rs.rule->events.size(), w.then_counts.size());
    std::fill_n(key.then_counts(), rs.rule->events.size(), 0);
    std::copy_n(w.then_counts.begin(), n, key.then_counts());
    key.alert.alerted = w.alerted;
    key.alert.last_alert_ms = w.last_alert_ms;
    key.held_back = w.held_back;
  }
};

}  // namespace

const RuleLogic& sequence_logic() {
  static const SequenceLogic logic;
  return logic;
}

}  // namespace swthrottle::engine
