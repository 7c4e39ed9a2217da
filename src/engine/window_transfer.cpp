// Engine's windows handed on: saved for --state and loaded into the next
// run's engine, or adopted by the engine of a reload (SIGHUP), rule by rule.
#include <algorithm>

#include "config/rule_identity.h"
#include "engine/engine.h"
#include "engine/rule_state.h"
#include "util/atomic_max.h"

namespace swthrottle::engine {

EngineState Engine::save_state() const {
  EngineState st;
  st.now_ms = now_.load();
  for (const auto& rs : states_) {
    RuleWindows rw;
    rw.rule = rs->rule->name;
    rw.fingerprint = rs->rule->fingerprint;
    if (rs->single) {
      rw.windows.push_back({"", rs->single->save()});
    } else {
      for (const auto& slot : rs->keys->by_age())
        rw.windows.push_back({std::string(slot->key()), saved_window(*rs, *slot)});
    }
    st.rules.push_back(std::move(rw));
  }
  return st;
}

std::vector<std::string> Engine::load_state(const EngineState& st) {
  atomic_max(now_, st.now_ms);
  std::vector<std::string> fresh;
  for (auto& rs : states_) {
    const RuleWindows* saved = nullptr;
    for (const RuleWindows& rw : st.rules)
      if (rw.rule == rs->rule->name) saved = &rw;
    if (saved == nullptr) continue;                     // a new rule
    if (saved->fingerprint != rs->rule->fingerprint) {  // config::fingerprint(), set at load
      fresh.push_back(rs->rule->name);
      continue;
    }
    for (const RuleWindows::Keyed& k : saved->windows) {
      if (rs->single) {
        rs->single->load(k.window);
      } else {
        KeyMap::Lookup l = rs->keys->get(k.key);  // oldest first: the LRU order comes back as it was
        if (rs->rider >= 0) {
          load_rider(*rs, *l.slot, k.window);
          if (k.window.firing) rs->keys->mark_active(l.slot);
          continue;
        }
        window::Window& w = window_of(*rs, *l.slot);
        w.load(k.window);
        if (!w.quiet()) rs->keys->mark_active(l.slot);
      }
    }
  }
  return fresh;
}

// Reported now because the windows go: their rule was removed or changed
// beyond keeping (DESIGN.md §3: what was held back is said, at the latest at exit).
void Engine::take_all_pending(RuleState& prev, int64_t then, std::vector<Record>& flushed) {
  if (!prev.logic->keeps_pending()) return;
  if (prev.single) {
    prev.logic->take_pending(prev, *prev.single, "", then, flushed);
    return;
  }
  for (const auto& slot : prev.keys->by_age())
    prev.logic->take_pending(prev, window_of(prev, *slot), slot->key(), then, flushed);
}

std::vector<std::string> Engine::adopt(const Engine& old, std::vector<Record>& flushed) {
  flushed.clear();
  // A rule the reload removed: its windows go with it, its summaries do not.
  for (const auto& o : old.states_) {
    const bool kept =
        std::any_of(states_.begin(), states_.end(), [&](const auto& rs) { return rs->rule->name == o->rule->name; });
    if (!kept) take_all_pending(*o, old.now_.load(), flushed);
  }
  atomic_max(now_, old.now_.load());
  stats_ = old.stats_;
  std::vector<std::string> fresh;
  for (auto& rs : states_) {
    RuleState* prev = nullptr;
    for (const auto& o : old.states_)
      if (o->rule->name == rs->rule->name) prev = o.get();
    if (prev == nullptr) continue;  // a new rule
    if (!config::windows_carry_over(*prev->rule, *rs->rule)) {
      // Its windows go, but what they held back is still reported (DESIGN.md §3:
      // at the latest at exit), as at the end of input.
      fresh.push_back(rs->rule->name);
      take_all_pending(*prev, old.now_.load(), flushed);
      continue;
    }
    rs->stats_ptr = prev->stats_ptr;
    rs->episodes = prev->episodes;
    if (prev->rule->mode == rs->rule->mode) {
      rs->single = prev->single;  // shared: deciders finishing a line on the old engine count here too
      rs->keys = prev->keys;
      rs->sharers = prev->sharers;  // and the map's members as they were
      rs->member = prev->member;
      continue;
    }
    // The mode changed: the same state, carried into windows of the new mode.
    if (rs->rider >= 0 || prev->rider >= 0) continue;  // backtest copies only: a backtest never reloads
    if (rs->single) {
      rs->single->load(prev->single->save());
    } else {
      for (const auto& slot : prev->keys->by_age()) {
        KeyMap::Lookup l = rs->keys->get(slot->key());
        window::Window& w = window_of(*rs, *l.slot);
        w.load(window_of(*prev, *slot).save());
        if (!w.quiet()) rs->keys->mark_active(l.slot);
      }
    }
  }
  return fresh;
}

}  // namespace swthrottle::engine
