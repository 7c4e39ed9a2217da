// The engine's key sharing (backtest): a keyed rule and its candidate copies
// in one KeyMap of WindowGroups (engine/window_group.h), the AlertRiders that
// decide on another member's window, a rule's window in a shared slot, and
// the one seam through which a backtest watches a hit (offer_watched).
#include <algorithm>
#include <array>
#include <bit>
#include <mutex>

#include "engine/engine.h"
#include "engine/rule_logic.h"
#include "engine/rule_records.h"
#include "engine/rule_state.h"
#include "engine/window_group.h"

namespace swthrottle::engine {

// A candidate copy (config::Rule::matched_as) of a keyed rule is given the
// rule's hits and renders the same keys: with the same max_keys its map
// would hold the same keys as the rule's and evict the same ones, in the
// same order. One map for the rule and its copies finds each key once.
// Before the first line: the maps are empty.
void Engine::share_keys(bool every_keyed) {
  std::vector<std::vector<uint32_t>> copies(states_.size());
  for (const auto& rs : states_) {
    const config::Rule& r = *rs->rule;
    if (!r.matched_as || !r.key || *r.matched_as >= rs->index) continue;
    const config::Rule& source = *states_[*r.matched_as]->rule;
    if (!source.key || source.key->text() != r.key->text() || source.mode != r.mode || source.max_keys != r.max_keys)
      continue;
    copies[*r.matched_as].push_back(rs->index);
  }
  for (std::size_t s = 0; s < states_.size(); ++s) {
    const RuleState& source = *states_[s];
    if (!source.keys || source.rule->matched_as || source.fleet) continue;
    if (copies[s].empty() && !every_keyed) continue;
    auto sharers = std::make_shared<std::vector<uint32_t>>();
    sharers->push_back(static_cast<uint32_t>(s));
    sharers->insert(sharers->end(), copies[s].begin(), copies[s].end());
    // An alert candidate whose window is an earlier alert member's rides on
    // it; every other member has a window of its own.
    std::vector<RuleState*> windowed;
    std::vector<window::WindowSpec> specs;
    int32_t riders = 0;
    for (uint32_t r : *sharers) states_[r]->riders.clear();
    for (uint32_t r : *sharers) {
      RuleState& rs = *states_[r];
      auto same_window = [&](const RuleState* h) {
        return !h->throttle && h->spec.width_ms == rs.spec.width_ms && h->spec.buckets == rs.spec.buckets &&
               h->spec.events == rs.spec.events;
      };
      const auto host = rs.throttle ? windowed.end() : std::find_if(windowed.begin(), windowed.end(), same_window);
      if (host != windowed.end()) {
        rs.member = static_cast<uint32_t>(host - windowed.begin());
        rs.rider = riders++;
        (*host)->riders.push_back(&rs);
      } else {
        rs.member = static_cast<uint32_t>(windowed.size());
        windowed.push_back(&rs);
        specs.push_back(rs.spec);
      }
    }
    auto keys = std::make_shared<KeyMap>(states_[s]->rule->mode, std::move(specs), static_cast<std::size_t>(riders),
                                         states_[s]->rule->max_keys);
    for (uint32_t r : *sharers) {
      states_[r]->keys = keys;
      states_[r]->sharers = sharers;
      states_[r]->shares_lookup = states_[r]->rider < 0 && windowed.size() > 1;
    }
  }
}

Decision Engine::offer_watched(RuleState& rs, Hit& hit, const SlotRef& slot) {
  std::atomic<uint32_t>* word = rs.observed ? memo_of(rs, slot) : nullptr;
  if (word != nullptr) observer_->will_count(rs.index, *word);
  Decision d;
  if (rs.riders.empty()) {
    d = rs.logic->offer(rs, hit);
  } else {
    // The riders decide on the counts this line made, before any other
    // line of the key is counted: as on windows of their own. Their records
    // come before the host's, as they always have.
    auto& group = static_cast<WindowGroup&>(slot->window());
    std::vector<Record> riders_records;
    {
      std::lock_guard lock(group.riders_mutex());
      const std::size_t before = hit.alerts.size();
      d = rs.logic->offer(rs, hit);
      if (offer_riders(rs, group, d, hit, riders_records)) d.keep_active = true;
      hit.alerts.insert(hit.alerts.begin() + static_cast<std::ptrdiff_t>(before),
                        std::make_move_iterator(riders_records.begin()), std::make_move_iterator(riders_records.end()));
    }
  }
  if (rs.observed && d.counted) observer_->counted(rs.index, hit.key, hit.t, d.window_count, word);
  return d;
}

bool Engine::offer_riders(RuleState& host, WindowGroup& group, const Decision& d, Hit& hit,
                          std::vector<Record>& alerts) {
  bool firing = false;
  for (RuleState* rp : host.riders) {
    RuleState& rs = *rp;
    if (!d.counted) {
      rs.stats().late.add();
      continue;
    }
    const std::span<const uint64_t> c = hit.counts.first(rs.rule->events.size());
    rs.stats().events.add(static_cast<uint64_t>(std::popcount(hit.events)));
    if (rs.observed) {
      uint64_t sum = 0;
      for (uint64_t v : c) sum += v;
      observer_->counted(rs.index, hit.key, hit.t, sum, nullptr);
    }
    // What the window's offer_alert does after counting, on its own state.
    AlertRider& ar = group.rider(static_cast<std::size_t>(rs.rider));
    const bool holds = rs.condition.holds(c);
    const bool clear = window::clears(rs.policy, ar.state.firing, holds, c);
    const window::AlertStep step =
        window::next_alert_state(ar.state, holds, clear, /*from_event=*/true, d.window_now, rs.policy);
    if (step.changed) ar.state = step.next;
    firing = firing || ar.state.firing;
    if (step.action == window::AlertAction::None) {
      if (holds) {
        ++ar.held_back;
        rs.stats().suppressed.add();
      }
      continue;
    }
    const bool alert = step.action == window::AlertAction::Alert;
    rule_values(rs, hit.values);
    alerts.push_back(alert_record(alert ? RecordType::Alert : RecordType::Resolved, rs, hit.key, hit.now, c,
                                  ar.held_back, hit.values, alert ? hit.line.text : std::string_view(), alert));
    if (alert) ar.held_back = 0;
  }
  rule_values(host, hit.values);  // the host's line goes on with its own
  return firing;
}

void Engine::check_riders(RuleState& rs, int64_t now, std::vector<Record>& out) {
  std::array<uint64_t, 64> counts{};
  const std::span<uint64_t> c(counts.data(), rs.rule->events.size());
  auto active = rs.keys->active(/*prune=*/true);
  std::sort(active.begin(), active.end(), [](const auto& a, const auto& b) { return a->key() < b->key(); });
  for (const auto& slot : active) {
    auto& group = static_cast<WindowGroup&>(slot->window());
    std::lock_guard lock(group.riders_mutex());
    AlertRider& ar = group.rider(static_cast<std::size_t>(rs.rider));
    if (!ar.state.firing) continue;  // as tick_alert: only a firing key can resolve
    window::Window& w = group.member(rs.member);
    w.advance(now);
    w.read(c);
    const bool holds = rs.condition.holds(c);
    const bool clear = window::clears(rs.policy, ar.state.firing, holds, c);
    const window::AlertStep step =
        window::next_alert_state(ar.state, holds, clear, /*from_event=*/false, w.now_ms(), rs.policy);
    if (step.changed) ar.state = step.next;
    if (step.action == window::AlertAction::Resolved)
      out.push_back(resolved_record(rs, slot->key(), now, c, ar.held_back));
  }
}

window::WindowState Engine::saved_window(const RuleState& rs, const Slot& slot) {
  window::WindowState st = window_of(rs, slot).save();
  if (rs.rider < 0) return st;
  // The counts of the window it rides on, with its own alert state.
  auto& group = static_cast<WindowGroup&>(slot.window());
  std::lock_guard lock(group.riders_mutex());
  const AlertRider& ar = group.rider(static_cast<std::size_t>(rs.rider));
  st.firing = ar.state.firing;
  st.announced = ar.state.announced;
  st.alerted = ar.state.alerted;
  st.last_alert_ms = ar.state.last_alert_ms;
  st.alert_suppressed = ar.held_back;
  return st;
}

void Engine::load_rider(const RuleState& rs, const Slot& slot, const window::WindowState& st) {
  auto& group = static_cast<WindowGroup&>(slot.window());
  std::lock_guard lock(group.riders_mutex());
  AlertRider& ar = group.rider(static_cast<std::size_t>(rs.rider));
  ar.state = window::AlertState{st.firing, st.announced, st.alerted, st.last_alert_ms};
  ar.held_back = st.alert_suppressed;
}

std::atomic<uint32_t>* Engine::memo_of(const RuleState& rs, const SlotRef& slot) {
  if (!rs.sharers || rs.rider >= 0 || !slot) return nullptr;
  return &static_cast<WindowGroup&>(slot->window()).observer_memo(rs.member);
}

window::Window& Engine::window_of(const RuleState& rs, const Slot& slot) {
  if (!rs.sharers) return slot.window();
  return static_cast<WindowGroup&>(slot.window()).member(rs.member);
}

SlotRef Engine::key_slot(RuleState& rs, std::string_view key, int64_t now, RecentSlots& recent,
                         std::vector<Record>& out) {
  if (rs.shares_lookup) {
    for (const auto& [map, slot] : recent.slots)
      if (map == rs.keys.get() && slot->key() == key && rs.keys->touch(slot)) return slot;
  }
  KeyMap::Lookup l = rs.keys->get(key);
  if (!rs.sharers) {
    if (l.created) rs.stats().keys.add();
    if (l.evicted) flush_evicted(rs, l.evicted, now, out);
    return std::move(l.slot);
  }
  // What every member's own map would have done at its own lookup.
  for (uint32_t r : *rs.sharers) {
    RuleState& member = *states_[r];
    if (l.created) member.stats().keys.add();
    if (l.evicted) flush_evicted(member, l.evicted, now, out);
  }
  if (rs.shares_lookup) recent.slots[recent.next++ % RecentSlots::kSize] = {rs.keys.get(), l.slot};
  return std::move(l.slot);
}

}  // namespace swthrottle::engine
