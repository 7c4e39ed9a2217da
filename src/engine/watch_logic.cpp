// The watched kind (config/watch_parser.h; man page: SILENCE AND SEQUENCES):
// an alert rule with `for`, or whose `when` holds on an empty window ("hb <
// 1"), is evaluated at boundary checks as well as on its lines, so silence
// can fire it. Each key's window counts; the key's own state (watch_rule.h)
// decides, by step_watch() (watch_step.h).
//
// Which keys a check visits: a key's state can change between two of its
// lines only when a bucket it counted events in leaves its window, or at
// its one deadline: the end of its warm-up (one window after it was first
// seen), of its `for`, of the cooldown of an episode not yet announced, or
// its `forget`. The rule's wheel (due_keys.h) holds exactly those; a check
// visits them in bucket order at each bucket boundary it crosses, so an
// alert of silence is dated at the boundary where it was found to hold,
// however late the line (or the timer) that crossed it: a replay and a live
// run write the same records.
#include <algorithm>
#include <array>
#include <bit>
#include <mutex>
#include <new>

#include "config/watch_parser.h"
#include "engine/rule_logic.h"
#include "engine/rule_records.h"
#include "engine/rule_state.h"
#include "engine/watch_rule.h"

namespace swthrottle::engine {
namespace {

void init_key(void* where) { new (where) WatchKey(); }

WatchKey& key_of(const RuleState& rs, const Slot* slot) {
  void* p = slot != nullptr ? rs.keys->extra(*slot) : rs.watch->single();
  return *std::launder(static_cast<WatchKey*>(p));
}

int64_t ceil_bucket(int64_t t_ms, int64_t width) { return t_ms <= 0 ? 0 : (t_ms + width - 1) / width; }

Verdict verdict_of(WatchResult r) {
  switch (r) {
    case WatchResult::Quiet: return Verdict::Counted;
    case WatchResult::StillFiring: return Verdict::CountedFiring;
    case WatchResult::Pending: return Verdict::Pending;
    case WatchResult::Alert: return Verdict::Alert;
    case WatchResult::Resolved: return Verdict::Resolved;
    case WatchResult::HeldBack:
    case WatchResult::Firing: break;
  }
  return Verdict::HeldBack;
}

class WatchLogic final : public RuleLogic {
 public:
  void setup(RuleState& rs) const override {
    rs.watch = std::make_shared<WatchRule>(rs.spec.buckets, sizeof(WatchKey), init_key);
    rs.watch->holds_when_empty = config::holds_when_empty(*rs.rule);
    if (rs.keys)
      rs.keys = std::make_shared<KeyMap>(rs.rule->mode, rs.spec, rs.rule->max_keys, nullptr,
                                         KeyExtra{sizeof(WatchKey), init_key});
  }

  // A rule without key watches from the run's first time.
  void begin(RuleState& rs, int64_t now) const override {
    if (rs.keys) return;
    WatchKey& k = key_of(rs, nullptr);
    std::lock_guard lock(k.mu);
    if (k.seen) return;
    k.seen = true;
    k.since_ms = now;
    schedule_deadline(rs, k, nullptr, now);
  }

  Decision offer(RuleState& rs, Hit& hit) const override {
    WatchKey& k = key_of(rs, hit.slot != nullptr ? hit.slot->get() : nullptr);
    const std::size_t n = rs.rule->events.size();
    const std::span<uint64_t> counts = hit.counts.first(n);
    std::lock_guard lock(k.mu);
    Decision d = count_watched_hit(rs, hit, counts);
    if (d.verdict == Verdict::Late) return d;
    if (!k.seen) {
      k.seen = true;
      k.since_ms = hit.now;
    }
    k.last_event_ms = hit.now;
    // The key is due when this bucket leaves its window.
    const int64_t b = window::bucket_of(hit.t, rs.spec);
    if (b > k.expiry_b || (b < k.expiry_b && b != k.older_b)) {
      rs.watch->due.add(hit.slot != nullptr ? *hit.slot : SlotRef(), b + rs.spec.buckets);
      (b > k.expiry_b ? k.expiry_b : k.older_b) = b;
    }
    const WatchResult r = evaluate(rs, k, counts, hit.now, /*from_event=*/true);
    d.verdict = verdict_of(r);
    d.since_ms = k.state.pending_since_ms;
    if (r == WatchResult::Alert) {
      hit.alerts.push_back(
          alert_record(RecordType::Alert, rs, hit.key, hit.now, counts, k.held_back, hit.values, hit.line.text, true));
      k.held_back = 0;
    } else if (r == WatchResult::Resolved) {
      hit.alerts.push_back(alert_record(RecordType::Resolved, rs, hit.key, hit.now, counts, k.held_back, hit.values));
    } else if (r == WatchResult::HeldBack) {
      ++k.held_back;
      rs.stats().suppressed.add();
    }
    schedule_deadline(rs, k, hit.slot, hit.now);
    return d;
  }

  // Visited through the wheel in check_rule().
  void check_key(RuleState&, window::Window&, std::string_view, int64_t, std::vector<Record>&) const override {}

  void check_rule(RuleState& rs, int64_t now, FleetLink*, std::vector<Record>& out) const override {
    begin(rs, now);  // a rule new to a state file or a reload watches from its first check
    std::vector<SlotRef> due;
    for (int64_t b; (b = rs.watch->due.take_next(now / rs.spec.width_ms, due)) != DueKeys::kNone;) {
      const std::size_t first = out.size();
      for (const SlotRef& slot : due) visit(rs, slot, b, out);
      // The keys' records of one boundary in key order (a key writes at
      // most one there): sorting the few records, not the many keys due.
      std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                [](const Record& x, const Record& y) { return x.key < y.key; });
    }
  }

  void save_key(RuleState& rs, const Slot* slot, RuleWindows::Keyed& k) const override {
    WatchKey& key = key_of(rs, slot);
    std::lock_guard lock(key.mu);
    WatchedKey& w = k.watch.emplace();
    w.since_ms = key.seen ? key.since_ms : -1;
    w.last_event_ms = key.seen ? key.last_event_ms : -1;
    w.pending_since_ms = key.state.pending_since_ms;
    w.firing = key.state.alert.firing;
    w.announced = key.state.alert.announced;
    w.alerted = key.state.alert.alerted;
    w.last_alert_ms = key.state.alert.last_alert_ms;
    w.held_back = key.held_back;
  }

  void load_key(RuleState& rs, const SlotRef& slot, const RuleWindows::Keyed& k) const override {
    WatchKey& key = key_of(rs, slot.get());
    std::lock_guard lock(key.mu);
    if (k.watch) {
      const WatchedKey& w = *k.watch;
      key.seen = w.since_ms >= 0;
      key.since_ms = std::max<int64_t>(w.since_ms, 0);
      key.last_event_ms = std::max<int64_t>(w.last_event_ms, key.since_ms);
      key.state.pending_since_ms = w.pending_since_ms;
      key.state.alert = window::AlertState{w.firing, w.announced, w.alerted, w.last_alert_ms};
      key.held_back = w.held_back;
    } else if (k.window.now_ms >= 0) {
      // Saved by a swthrottle before watched rules, as a plain alert rule's
      // window: its alert state carries over, and it counts as watched for
      // the window it has (past its warm-up: a firing key stays firing).
      key.seen = true;
      key.last_event_ms = k.window.now_ms;
      key.since_ms = std::max<int64_t>(0, k.window.now_ms - rs.spec.length_ms());
      key.state.alert =
          window::AlertState{k.window.firing, k.window.announced, k.window.alerted, k.window.last_alert_ms};
      key.held_back = k.window.alert_suppressed;
    }
    // Due again when each bucket with events leaves the window (a check
    // before the window's own time would read its later counts), and at
    // the deadline.
    const int64_t now = std::max<int64_t>(k.window.now_ms, 0);
    for (const window::WindowState::Bucket& b : k.window.buckets) {
      if (b.bucket + rs.spec.buckets <= window::bucket_of(now, rs.spec)) continue;
      rs.watch->due.add(slot, b.bucket + rs.spec.buckets);
      key.expiry_b = std::max(key.expiry_b, b.bucket);
    }
    key.holds = evaluate_at(rs, key, slot ? slot->window() : *rs.single, now);
    key.deadline_b = 0;
    if (key.seen) schedule_deadline(rs, key, slot ? &slot : nullptr, now);
  }

 private:
  // The condition (after the warm-up) on `counts` at now, stepped. Key locked.
  static WatchResult evaluate(RuleState& rs, WatchKey& k, std::span<const uint64_t> counts, int64_t now,
                              bool from_event) {
    const bool warm = !rs.watch->holds_when_empty ||
                      window::bucket_of(now, rs.spec) >= window::bucket_of(k.since_ms, rs.spec) + rs.spec.buckets;
    k.holds = warm && rs.condition.holds(counts);
    const bool clears = window::clears(rs.policy, k.state.alert.firing, k.holds, counts);
    return step_watch(k.state, k.holds, clears, from_event, now, rs.rule->for_ms, rs.policy);
  }

  // Whether the condition holds on the window at now (a key loaded: what its
  // last evaluation would have found), without stepping.
  static bool evaluate_at(RuleState& rs, WatchKey& k, window::Window& w, int64_t now) {
    std::array<uint64_t, 64> c{};
    const std::span<uint64_t> counts(c.data(), rs.rule->events.size());
    w.read(counts);
    const bool warm = !rs.watch->holds_when_empty ||
                      window::bucket_of(now, rs.spec) >= window::bucket_of(k.since_ms, rs.spec) + rs.spec.buckets;
    return warm && rs.condition.holds(counts);
  }

  // The key's next deadline into the wheel, unless an entry at or before it
  // is waiting there already. Key locked.
  static void schedule_deadline(RuleState& rs, WatchKey& k, const SlotRef* slot, int64_t now) {
    const int64_t w = rs.spec.width_ms;
    const int64_t nb = window::bucket_of(now, rs.spec);
    const window::AlertState& a = k.state.alert;
    int64_t due = INT64_MAX;
    if (rs.watch->holds_when_empty) {
      const int64_t warm = window::bucket_of(k.since_ms, rs.spec) + rs.spec.buckets;
      if (warm > nb) due = warm;
    }
    if (k.state.pending() && !a.firing) due = std::min(due, ceil_bucket(k.state.pending_since_ms + rs.rule->for_ms, w));
    if (k.holds && a.firing && !a.announced && a.alerted)
      due = std::min(due, ceil_bucket(a.last_alert_ms + rs.policy.cooldown_ms, w));
    if (slot != nullptr && rs.rule->forget_ms > 0 && !(a.firing && a.announced && rs.policy.resolve))
      due = std::min(due, ceil_bucket(k.last_event_ms + rs.rule->forget_ms, w));
    if (due == INT64_MAX) return;
    due = std::max(due, nb + 1);
    if (k.deadline_b > nb && k.deadline_b <= due) return;
    k.deadline_b = due;
    rs.watch->due.add(slot != nullptr ? *slot : SlotRef(), due);
  }

  // A boundary check of one key at the start of bucket b.
  static void visit(RuleState& rs, const SlotRef& slot, int64_t b, std::vector<Record>& out) {
    const int64_t t = b * rs.spec.width_ms;
    WatchKey& k = key_of(rs, slot.get());
    std::lock_guard lock(k.mu);
    if (!k.seen || k.checked_b >= b) return;
    k.checked_b = b;
    if (slot && !rs.keys->holds(slot)) return;  // evicted or forgotten since
    window::Window& w = slot ? slot->window() : *rs.single;
    std::array<uint64_t, 64> c{};
    const std::span<uint64_t> counts(c.data(), rs.rule->events.size());
    w.advance(t);
    w.read(counts);
    const std::string_view key = slot ? slot->key() : std::string_view();
    const WatchResult r = evaluate(rs, k, counts, t, /*from_event=*/false);
    if (r == WatchResult::Alert) {
      FieldValues values{};  // no line at a boundary check: {line}, {event} and captures are empty
      rule_values(rs, values);
      out.push_back(alert_record(RecordType::Alert, rs, key, t, counts, k.held_back, values));
      k.held_back = 0;
    } else if (r == WatchResult::Resolved) {
      out.push_back(resolved_record(rs, key, t, counts, k.held_back));
    }
    const window::AlertState& a = k.state.alert;
    if (slot && rs.rule->forget_ms > 0 && t - k.last_event_ms >= rs.rule->forget_ms &&
        !(a.firing && a.announced && rs.policy.resolve)) {
      if (rs.keys->forget(slot)) rs.stats().forgotten.add();
      return;
    }
    schedule_deadline(rs, k, slot ? &slot : nullptr, t);
  }
};

}  // namespace

Decision count_watched_hit(RuleState& rs, Hit& hit, std::span<uint64_t> counts) {
  hit.window.advance(hit.now);
  bool late = false;
  for (uint64_t m = hit.events; m != 0 && !late; m &= m - 1)
    late = hit.window.add(hit.t, static_cast<uint32_t>(std::countr_zero(m))) == window::AddResult::Late;
  std::fill(counts.begin(), counts.end(), 0);
  hit.window.read(counts);
  Decision d;
  d.counts_known = true;
  d.window_now = hit.now;
  if (late) {  // changes nothing (DESIGN.md §3)
    rs.stats().late.add();
    d.verdict = Verdict::Late;
    return d;
  }
  d.counted = true;
  rs.stats().events.add(static_cast<uint64_t>(std::popcount(hit.events)));
  if (hit.want_count)
    for (uint64_t c : counts) d.window_count += c;
  return d;
}

const RuleLogic& watch_logic() {
  static const WatchLogic logic;
  return logic;
}

}  // namespace swthrottle::engine
