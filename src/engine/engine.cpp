#include "engine/engine.h"

#include <algorithm>
#include <array>
#include <bit>

#include "engine/rule_logic.h"
#include "engine/rule_records.h"
#include "engine/rule_state.h"
#include "util/atomic_max.h"

namespace swthrottle::engine {

namespace {

bool template_uses_captures(const std::optional<config::Template>& t, std::size_t n) {
  if (!t) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (t->uses(config::kFieldFirstCapture + static_cast<int>(i))) return true;
  return false;
}

}  // namespace

struct Engine::LineRecords {
  std::vector<Record> summaries;  // group 2
  std::vector<Record> alerts;     // group 4
  bool throttle_matched = false;
  bool suppressed = false;
  const config::Rule* passed_by = nullptr;
};

// Filled before use, as far as each rule needs: zeroing 1.5 KiB per line
// showed in profiles.
struct Engine::Scratch {
  std::string key;
  RecentSlots recent;
  std::array<uint64_t, 64> counts;
  FieldValues values;
};

Engine::Engine(const config::RuleSet& rules, const EngineOptions& options) : rules_(rules), options_(options) {
  for (std::size_t i = 0; i < rules.rules.size(); ++i) {
    const config::Rule& r = rules.rules[i];
    auto rs = std::make_unique<RuleState>();
    rs->rule = &r;
    rs->logic = &logic_for(r);
    rs->index = static_cast<uint32_t>(i);
    rs->throttle = r.kind == config::RuleKind::Throttle;
    rs->limit = r.threshold.value_or(0);
    rs->threshold_text = r.threshold ? std::to_string(*r.threshold) : r.when_text;
    rs->fleet = r.fleet != config::FleetMode::Off;
    rs->batched = r.fleet == config::FleetMode::Batched;
    rs->needs_captures = template_uses_captures(r.key, r.capture_names.size()) ||
                         template_uses_captures(r.message, r.capture_names.size());
    // A throttle counts passed lines (one counter); an alert counts each event.
    rs->spec = window::WindowSpec{r.window_ms / r.buckets, r.buckets,
                                  rs->throttle ? 1u : static_cast<uint32_t>(r.events.size())};
    if (rs->throttle && r.events.size() > 1) rs->tallied_events = static_cast<uint32_t>(r.events.size());
    rs->condition = ExprCondition(&r.when);
    rs->policy = window::AlertPolicy{&rs->condition, r.cooldown_ms, r.resolve};
    if (r.resolve_when) {
      rs->clear = ExprCondition(&*r.resolve_when);
      rs->policy.clear = &rs->clear;
    }
    if (r.key) {
      rs->keys = std::make_shared<KeyMap>(r.mode, rs->spec, r.max_keys);
    } else {
      rs->single = window::make_window(r.mode, rs->spec);
    }
    states_.push_back(std::move(rs));
  }
  share_keys(/*every_keyed=*/false);
}

void Engine::observe(CountObserver* observer) {
  observer_ = observer;
  for (auto& rs : states_) rs->observed = observer != nullptr && observer->observes(rs->index);
  if (observer != nullptr) share_keys(/*every_keyed=*/true);  // each key gets the observer's word
}

Engine::~Engine() = default;

const RuleStats& Engine::rule_stats(std::size_t r) const { return *states_[r]->stats_ptr; }

std::size_t Engine::key_count(std::size_t r) const {
  const RuleState& rs = *states_[r];
  return rs.keys ? rs.keys->size() : 1;
}

int64_t Engine::next_boundary_ms() const {
  const int64_t now = now_.load();
  return now < 0 ? INT64_MAX : next_boundary_after(now);
}

void Engine::check_rule(RuleState& rs, int64_t now, std::vector<Record>& out) {
  if (rs.rider >= 0) {
    check_riders(rs, now, out);
    return;
  }
  rs.logic->check_rule(rs, now, fleet_, out);
  if (rs.single) {
    rs.logic->check_key(rs, *rs.single, "", now, out);
    return;
  }
  auto active = rs.keys->active(/*prune=*/true);
  // Keys in a stable order, so that records do not depend on hash order.
  std::sort(active.begin(), active.end(), [](const auto& a, const auto& b) { return a->key() < b->key(); });
  for (const auto& slot : active) rs.logic->check_key(rs, window_of(rs, *slot), slot->key(), now, out);
}

int64_t Engine::next_boundary_after(int64_t now) const {
  int64_t next = INT64_MAX;
  for (const auto& rs : states_) next = std::min(next, (now / rs->spec.width_ms + 1) * rs->spec.width_ms);
  return next;
}

void Engine::boundary_checks(int64_t old_now, int64_t new_now, std::vector<Record>& out, BoundaryMemo* memo) {
  if (old_now >= 0) {  // nothing can be pending before the first line
    if (memo && memo->crosses_none(this, old_now, new_now)) return;
    for (auto& rs : states_) {
      const int64_t w = rs->spec.width_ms;
      if (new_now / w != old_now / w) check_rule(*rs, new_now, out);
    }
  }
  if (memo) *memo = BoundaryMemo{this, new_now, next_boundary_after(new_now)};
}

void Engine::tick(int64_t now_ms, std::vector<Record>& out, BoundaryMemo* memo) {
  out.clear();
  const int64_t old = atomic_max(now_, now_ms);
  if (old < now_ms) boundary_checks(old, now_ms, out, memo);
}

void Engine::flush_evicted(RuleState& rs, const SlotRef& evicted, int64_t now, std::vector<Record>& out) {
  rs.stats().evictions.add();
  // An evicted alert key is forgotten (counted in the stats); a throttle's
  // reports what it held back.
  if (rs.logic->keeps_pending()) rs.logic->take_pending(rs, window_of(rs, *evicted), evicted->key(), now, out);
}

int64_t Engine::advance(const LineEvent& line, std::vector<Record>& out, BoundaryMemo* memo) {
  if (!line.timed) return now_.load();
  const int64_t t = std::max<int64_t>(line.t_ms, 0);
  const int64_t old = atomic_max(now_, t);
  if (old < t) boundary_checks(old, t, out, memo);  // group 1: boundary-check records
  return std::max(old, t);
}

// decide_hit, decide_timed and write_line are offer()'s steps, split for
// reading: inlined into it, as the one function they were, because the
// calls cost the matched lines 5 % more instructions in the engine (callgrind
// on the bench corpus).
[[gnu::always_inline]] inline void Engine::decide_hit(const match::RuleHit& hit, const LineEvent& line,
                                                      const match::MatchResult& m, int64_t now, Scratch& s,
                                                      LineRecords& lr, std::vector<Record>& out, ExplainEntry* ex) {
  RuleState& rs = *states_[hit.rule];
  const config::Rule& rule = *rs.rule;
  rs.stats().lines.add();
  const std::size_t ncap = rule.capture_names.size();
  const bool have_captures =
      (rs.needs_captures || options_.all_captures) && hit.first_capture + ncap <= m.captures.size();
  const auto first_event = static_cast<std::size_t>(std::countr_zero(hit.events));
  const std::size_t nfields = config::kFieldFirstCapture + std::min<std::size_t>(ncap, 64);
  std::fill(s.values.begin(), s.values.begin() + static_cast<std::ptrdiff_t>(nfields), std::string_view());
  rule_values(rs, s.values);
  s.values[config::kFieldEvent] =
      first_event < rule.event_names.size() ? std::string_view(rule.event_names[first_event]) : std::string_view();
  s.values[config::kFieldLine] = line.text;
  if (have_captures)
    for (std::size_t i = 0; i < ncap && i < 64; ++i)
      s.values[config::kFieldFirstCapture + i] = m.captures[hit.first_capture + i];
  if (ex) {
    ex->rule = hit.rule;
    ex->events = hit.events;
    if (have_captures)
      for (std::size_t i = 0; i < ncap; ++i)
        ex->captures.emplace_back(rule.capture_names[i], std::string(m.captures[hit.first_capture + i]));
  }
  Decision d;
  if (!line.timed) {  // no timestamp seen yet: not windowed; throttle rules pass it
    rs.stats().untimed.add();
    d.verdict = Verdict::Untimed;
    if (rs.throttle) {
      lr.throttle_matched = true;
      if (lr.passed_by == nullptr) lr.passed_by = &rule;
    }
  } else if (rs.rider >= 0) {  // --explain only: see offer()
    d.verdict = Verdict::Copy;
  } else {
    d = decide_timed(rs, hit.events, line, now, s, lr, out, ex);
  }
  if (ex) ex->decision = d;
}

[[gnu::always_inline]] inline Decision Engine::decide_timed(RuleState& rs, uint64_t events, const LineEvent& line,
                                                            int64_t now, Scratch& s, LineRecords& lr,
                                                            std::vector<Record>& out, ExplainEntry* ex) {
  const config::Rule& rule = *rs.rule;
  const std::size_t nfields = config::kFieldFirstCapture + std::min<std::size_t>(rule.capture_names.size(), 64);
  s.key.clear();
  if (rule.key) rule.key->render(s.key, std::span<const std::string_view>(s.values.data(), nfields));
  if (ex) ex->key = s.key;
  window::Window* w = rs.single.get();
  SlotRef slot;
  if (rs.keys) {
    slot = key_slot(rs, s.key, now, s.recent, out);
    w = &window_of(rs, *slot);
  }
  Hit hit{line,      events, std::max<int64_t>(line.t_ms, 0), now, s.key, *w, s.values, s.counts, lr.summaries,
          lr.alerts, fleet_, ex != nullptr || rs.observed};
  const Decision d = rs.watched() ? offer_watched(rs, hit, slot) : rs.logic->offer(rs, hit);
  if (d.keep_active && slot) rs.keys->mark_active(slot);
  if (rs.throttle) {
    lr.throttle_matched = true;
    if (d.verdict == Verdict::Passed && lr.passed_by == nullptr) lr.passed_by = &rule;
    if (d.verdict == Verdict::Suppressed) lr.suppressed = true;
  }
  if (ex && d.counts_known) {
    const std::size_t n = rs.throttle ? 1 : rule.events.size();
    ex->counts.assign(s.counts.begin(), s.counts.begin() + static_cast<std::ptrdiff_t>(n));
  }
  return d;
}

[[gnu::always_inline]] inline void Engine::write_line(const LineEvent& line, int64_t now, LineRecords& lr,
                                                      std::vector<Record>& out) {
  for (Record& r : lr.summaries) out.push_back(std::move(r));
  if (!lr.suppressed && (lr.throttle_matched || options_.passthrough)) {
    Record r;
    r.type = RecordType::Line;
    r.has_time = now >= 0;
    r.time_ms = now < 0 ? 0 : now;
    r.rule = lr.passed_by;
    r.line = line.text;
    r.has_line = true;
    stats_->written.add();
    out.push_back(std::move(r));
  }
  for (Record& r : lr.alerts) out.push_back(std::move(r));
}

void Engine::offer(const LineEvent& line, const match::MatchResult& m, std::vector<Record>& out,
                   std::vector<ExplainEntry>* explain, BoundaryMemo* memo) {
  out.clear();
  if (explain) explain->clear();
  const int64_t now = advance(line, out, memo);
  if (m.hits.empty()) {
    // Most lines match nothing: past the boundary checks there is nothing to
    // decide, and only --passthrough writes them.
    if (!options_.passthrough) return;
  } else {
    stats_->matched.add();
  }
  LineRecords lr;
  Scratch s;
  for (const match::RuleHit& hit : m.hits) {
    // A rider is decided with the line of the rule whose window it rides on
    // (offer_watched): nothing here but its line count.
    if (states_[hit.rule]->rider >= 0 && line.timed && explain == nullptr) {
      states_[hit.rule]->stats().lines.add();
      continue;
    }
    decide_hit(hit, line, m, now, s, lr, out, explain ? &explain->emplace_back() : nullptr);
  }
  write_line(line, now, lr, out);
}

void Engine::finish(std::vector<Record>& out) {
  out.clear();
  const int64_t now = now_.load();
  for (auto& rs : states_) {
    if (!rs->logic->keeps_pending()) continue;
    if (rs->single) {
      rs->logic->take_pending(*rs, *rs->single, "", now, out);
      continue;
    }
    auto slots = rs->keys->all();
    std::sort(slots.begin(), slots.end(), [](const auto& a, const auto& b) { return a->key() < b->key(); });
    for (const auto& slot : slots) rs->logic->take_pending(*rs, window_of(*rs, *slot), slot->key(), now, out);
  }
}

}  // namespace swthrottle::engine
