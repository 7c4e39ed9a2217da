#include "engine/engine.h"

#include <algorithm>
#include <array>
#include <bit>
#include <mutex>

#include <fmt/format.h>

#include "config/rule_identity.h"
#include "engine/rule_state.h"
#include "engine/window_group.h"
#include "util/atomic_max.h"

namespace swthrottle::engine {

namespace {

bool template_uses_captures(const std::optional<config::Template>& t, std::size_t n) {
  if (!t) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (t->uses(config::kFieldFirstCapture + static_cast<int>(i))) return true;
  return false;
}

// A throttle's limit without an answer from the fleet (on_unreachable).
uint64_t fallback_limit(uint64_t limit, config::Unreachable u) {
  return u == config::Unreachable::Local ? limit : u == config::Unreachable::Open ? UINT64_MAX : 0;
}

}  // namespace

Engine::Engine(const config::RuleSet& rules, const EngineOptions& options) : rules_(rules), options_(options) {
  for (std::size_t i = 0; i < rules.rules.size(); ++i) {
    const config::Rule& r = rules.rules[i];
    auto rs = std::make_unique<RuleState>();
    rs->rule = &r;
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

Record Engine::make_record(RecordType type, const RuleState& rs, std::string_view key, int64_t now) const {
  Record r;
  r.type = type;
  r.has_time = now >= 0;
  r.time_ms = now < 0 ? 0 : now;
  r.rule = rs.rule;
  r.key.assign(key);
  return r;
}

Record Engine::summary_record(const RuleState& rs, std::string_view key, int64_t now, const window::Summary& s,
                              std::span<const uint64_t> counts) const {
  Record r = make_record(RecordType::Summary, rs, key, now);
  r.suppressed = s.suppressed;
  r.first_ms = s.first_ms;
  r.last_ms = s.last_ms;
  // Per event of the suppressed lines. A one-event rule's windows tally none:
  // every suppressed line matched its event. A tally missing for a rule of
  // more (pending from a state file of an older swthrottle) reads as zeros,
  // as the window writes it.
  const std::size_t n = rs.rule->events.size();
  if (n == 1) {
    r.counts.assign(1, s.suppressed);
  } else {
    r.counts.assign(n, 0);
    std::copy_n(counts.begin(), std::min(n, counts.size()), r.counts.begin());
  }
  return r;
}

void Engine::fill_counts(Record& r, const RuleState& rs, std::span<const uint64_t> counts) const {
  r.counts.assign(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(rs.rule->events.size()));
  r.count = 0;
  for (uint64_t c : r.counts) r.count += c;
}

void Engine::render_message(const RuleState& rs, Record& r, std::span<std::string_view> values) const {
  const config::Rule& rule = *rs.rule;
  if (!rule.message) return;
  const std::string count_text = std::to_string(r.count), suppressed_text = std::to_string(r.suppressed);
  values[config::kFieldCount] = count_text;
  values[config::kFieldSuppressed] = suppressed_text;
  values[config::kFieldKey] = r.key;
  const std::size_t n = config::kFieldFirstCapture + std::min<std::size_t>(rule.capture_names.size(), 64);
  rule.message->render(r.message, values.first(std::min(n, values.size())));
  r.has_message = true;
}

void Engine::check_rule(RuleState& rs, int64_t now, std::vector<Record>& out) {
  if (rs.rider >= 0) {
    check_riders(rs, now, out);
    return;
  }
  std::array<uint64_t, 64> counts{};
  auto check = [&](window::Window& w, std::string_view key) {
    if (rs.throttle) {
      const std::span<uint64_t> tally(counts.data(), rs.tallied_events);
      const window::Summary s = w.tick_throttle(now, rs.limit, tally);
      if (s.suppressed == 0) return;
      rs.stats().summaries.add();
      out.push_back(summary_record(rs, key, now, s, tally));
    } else {
      const window::AlertOutcome o = w.tick_alert(now, rs.policy, counts);
      if (o.action != window::AlertAction::Resolved) return;
      out.push_back(resolved_record(rs, key, now, counts, o.suppressed));
    }
  };
  if (rs.fleet && fleet_ != nullptr && !rs.throttle) check_fleet_episodes(rs, now, out);
  if (rs.single) {
    check(*rs.single, "");
    return;
  }
  auto active = rs.keys->active(/*prune=*/true);
  // Keys in a stable order, so that records do not depend on hash order.
  std::sort(active.begin(), active.end(), [](const auto& a, const auto& b) { return a->key() < b->key(); });
  for (const auto& slot : active) check(window_of(rs, *slot), slot->key());
}

bool Engine::offer_fleet_alert(RuleState& rs, uint64_t events, std::string_view key, const LineEvent& line, int64_t t,
                               int64_t now, window::Window& w, std::span<uint64_t> counts,
                               std::span<std::string_view> values, std::vector<Record>& alerts, ExplainEntry* ex) {
  const config::Rule& rule = *rs.rule;
  const std::size_t n = rule.events.size();
  const std::span<uint64_t> c = counts.first(n);
  // The host's own window keeps counting: it decides when the fleet cannot.
  auto count_here = [&] {
    for (uint64_t e = events; e != 0; e &= e - 1) w.add(t, static_cast<uint32_t>(std::countr_zero(e)));
  };
  if (rs.batched) {
    // Counted here and among the deltas the fleet thread flushes; the fleet
    // thread claims the alert, and the timer writes it (fleet_alerts()).
    if (!fleet_->add(rs.index, key, t, now, events, line.text)) {
      rs.stats().fleet_local.add();
      if (fleet_->on_unreachable() == config::Unreachable::Local) return false;
      count_here();
      if (ex)
        ex->decision =
            fmt::format("fleet unreachable: on_unreachable = {}, no alert", to_string(fleet_->on_unreachable()));
      return true;
    }
    count_here();
    rs.stats().events.add(static_cast<uint64_t>(std::popcount(events)));
    if (ex) ex->decision = "counted; sent to the fleet with the next flush";
    return true;
  }
  FleetAnswer a;
  // A plain threshold is claimed in the same step as the count; a `when` is
  // evaluated here, and claimed in a second step only when it holds.
  const bool plain = rule.threshold.has_value();
  if (!fleet_->alert(rs.index, key, t, now, events, plain, c, a)) {
    rs.stats().fleet_local.add();
    if (fleet_->on_unreachable() == config::Unreachable::Local) return false;
    count_here();
    if (ex)
      ex->decision =
          fmt::format("fleet unreachable: on_unreachable = {}, no alert", to_string(fleet_->on_unreachable()));
    return true;
  }
  count_here();
  if (ex) ex->counts.assign(c.begin(), c.end());
  if (a.late) {
    rs.stats().late.add();
    rs.stats().fleet_late.add();
    if (ex) ex->decision = "late: older than the fleet window, not counted";
    return true;
  }
  rs.stats().events.add(static_cast<uint64_t>(std::popcount(events)));
  const bool holds = rule.when.eval(c);
  if (holds && !plain && !fleet_->claim(rs.index, key, t, a)) {
    rs.stats().fleet_local.add();  // the count is in; the claim had no answer: no alert from here
  }
  if (a.claimed) {
    alerts.push_back(claimed_alert(rs, key, now, c, a.suppressed, line.text, true, a.episode, values));
  } else if (holds) {
    rs.stats().suppressed.add();
  }
  if (ex) {
    ex->decision = a.claimed ? "alert (claimed for the fleet)"
                   : holds   ? "condition holds in the fleet window; no alert: inside the cooldown of the fleet's last"
                             : "counted in the fleet window; condition false";
  }
  return true;
}

void Engine::fleet_alerts(std::vector<FleetClaim>& claims, std::vector<Record>& out) {
  out.clear();
  claims.clear();
  if (fleet_ == nullptr) return;
  fleet_->take_claims(claims);
  const int64_t now = now_.load();
  for (const FleetClaim& c : claims) {
    if (c.rule >= states_.size()) continue;
    RuleState& rs = *states_[c.rule];
    const config::Rule& rule = *rs.rule;
    const std::span<const uint64_t> counts(c.counts.data(), rule.events.size());
    // Claimed by the fleet thread: the line is one of the key's, without its captures.
    std::array<std::string_view, 64 + config::kFieldFirstCapture> values{};
    rule_values(rs, values);
    values[config::kFieldLine] = c.line;
    out.push_back(claimed_alert(rs, c.key, now, counts, c.suppressed, c.line, !c.line.empty(), c.episode, values));
  }
}

void Engine::check_fleet_episodes(RuleState& rs, int64_t now, std::vector<Record>& out) {
  std::vector<std::pair<std::string, std::string>> open;
  {
    std::lock_guard lock(rs.episodes->mu);
    open.assign(rs.episodes->by_key.begin(), rs.episodes->by_key.end());
  }
  const config::Rule& rule = *rs.rule;
  const std::size_t n = rule.events.size();
  for (const auto& [key, episode] : open) {
    std::array<uint64_t, 64> counts{};
    const std::span<uint64_t> c(counts.data(), n);
    if (!fleet_->read(rs.index, key, now, c)) continue;  // no answer: asked again at the next boundary
    if (rule.when.eval(c)) continue;
    if (rule.resolve_when && !rule.resolve_when->eval(c)) continue;
    FleetAnswer a;
    if (!fleet_->resolve(rs.index, key, episode, a)) continue;
    {
      std::lock_guard lock(rs.episodes->mu);
      rs.episodes->by_key.erase(key);  // resolved, or no longer the fleet's episode (another host's now)
    }
    if (!a.resolved) continue;
    out.push_back(resolved_record(rs, key, now, c, a.suppressed));
  }
}

void Engine::rule_values(const RuleState& rs, std::span<std::string_view> values) const {
  values[config::kFieldRule] = rs.rule->name;
  values[config::kFieldWindow] = rs.rule->window_text;
  values[config::kFieldThreshold] = rs.threshold_text;
}

Record Engine::resolved_record(RuleState& rs, std::string_view key, int64_t now, std::span<const uint64_t> counts,
                               uint64_t suppressed) {
  Record r = make_record(RecordType::Resolved, rs, key, now);
  fill_counts(r, rs, counts);
  r.suppressed = suppressed;
  // No line at a boundary check: {line}, {event} and captures are empty.
  std::array<std::string_view, 64 + config::kFieldFirstCapture> values{};
  rule_values(rs, values);
  render_message(rs, r, values);
  rs.stats().resolveds.add();
  return r;
}

Record Engine::claimed_alert(RuleState& rs, std::string_view key, int64_t now, std::span<const uint64_t> counts,
                             uint64_t suppressed, std::string_view line, bool has_line, std::string_view episode,
                             std::span<std::string_view> values) {
  Record r = make_record(RecordType::Alert, rs, key, now);
  fill_counts(r, rs, counts);
  r.suppressed = suppressed;
  r.line = line;
  r.has_line = has_line;
  render_message(rs, r, values);
  rs.stats().alerts.add();
  if (rs.rule->resolve) {  // this host opened the episode: it resolves it (check_fleet_episodes)
    std::lock_guard lock(rs.episodes->mu);
    rs.episodes->by_key[std::string(key)] = std::string(episode);
  }
  return r;
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
  if (!rs.throttle) return;  // an evicted alert key is forgotten (counted in the stats)
  std::array<uint64_t, 64> counts;
  const std::span<uint64_t> tally(counts.data(), rs.tallied_events);
  const window::Summary s = window_of(rs, *evicted).take_pending(tally);
  if (s.suppressed == 0) return;
  rs.stats().summaries.add();
  out.push_back(summary_record(rs, evicted->key(), now, s, tally));
}

void Engine::offer(const LineEvent& line, const match::MatchResult& m, std::vector<Record>& out,
                   std::vector<ExplainEntry>* explain, BoundaryMemo* memo) {
  out.clear();
  if (explain) explain->clear();
  int64_t now = now_.load();
  int64_t t = 0;
  if (line.timed) {
    t = std::max<int64_t>(line.t_ms, 0);
    const int64_t old = atomic_max(now_, t);
    if (old < t) boundary_checks(old, t, out, memo);  // group 1: boundary-check records
    now = std::max(old, t);
  }
  if (m.hits.empty()) {
    // Most lines match nothing: past the boundary checks there is nothing to
    // decide, and only --passthrough writes them.
    if (!options_.passthrough) return;
  } else {
    stats_->matched.add();
  }

  std::vector<Record> summaries;  // group 2
  std::vector<Record> alerts;     // group 4
  bool throttle_matched = false;
  bool suppressed = false;
  const config::Rule* passed_by = nullptr;
  std::string key;
  RecentSlots recent;
  // Filled before use, as far as each rule needs: zeroing 1.5 KiB per line
  // showed in profiles.
  std::array<uint64_t, 64> counts;
  std::array<std::string_view, 64 + config::kFieldFirstCapture> values;

  for (const match::RuleHit& hit : m.hits) {
    RuleState& rs = *states_[hit.rule];
    const config::Rule& rule = *rs.rule;
    rs.stats().lines.add();
    // A rider is decided with the line of the rule whose window it rides on
    // (offer_riders): nothing here but its line count.
    if (rs.rider >= 0 && line.timed && explain == nullptr) continue;
    const std::size_t ncap = rule.capture_names.size();
    const bool have_captures =
        (rs.needs_captures || options_.all_captures) && hit.first_capture + ncap <= m.captures.size();
    const auto first_event = static_cast<std::size_t>(std::countr_zero(hit.events));
    const std::size_t nfields = config::kFieldFirstCapture + std::min<std::size_t>(ncap, 64);
    std::fill(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(nfields), std::string_view());
    rule_values(rs, values);
    values[config::kFieldEvent] =
        first_event < rule.event_names.size() ? std::string_view(rule.event_names[first_event]) : std::string_view();
    values[config::kFieldLine] = line.text;
    if (have_captures)
      for (std::size_t i = 0; i < ncap && i < 64; ++i)
        values[config::kFieldFirstCapture + i] = m.captures[hit.first_capture + i];
    const std::span<const std::string_view> fields(values.data(), nfields);

    ExplainEntry* ex = nullptr;
    if (explain) {
      ex = &explain->emplace_back();
      ex->rule = hit.rule;
      ex->events = hit.events;
      if (have_captures)
        for (std::size_t i = 0; i < ncap; ++i)
          ex->captures.emplace_back(rule.capture_names[i], std::string(m.captures[hit.first_capture + i]));
    }

    if (!line.timed) {  // no timestamp seen yet: not windowed; throttle rules pass it
      rs.stats().untimed.add();
      if (rs.throttle) {
        throttle_matched = true;
        if (passed_by == nullptr) passed_by = &rule;
      }
      if (ex)
        ex->decision = rs.throttle ? "passed: no timestamp seen yet, not windowed"
                                   : "ignored: no timestamp seen yet, not windowed";
      continue;
    }

    if (rs.rider >= 0) {  // as above, with --explain
      if (ex) ex->decision = "decided on the window of the rule it copies";
      continue;
    }

    key.clear();
    if (rule.key) rule.key->render(key, fields);
    if (ex) ex->key = key;
    window::Window* w = rs.single.get();
    SlotRef slot;
    if (rs.keys) {
      slot = key_slot(rs, key, now, recent, out);
      w = &window_of(rs, *slot);
      if (rs.observed) {
        if (const auto* word = memo_of(rs, slot)) observer_->will_count(hit.rule, *word);
      }
    }

    if (rs.throttle) {
      throttle_matched = true;
      // A multi-event rule's summaries say which events were suppressed.
      const window::LineEvents events{hit.events, rs.tallied_events};
      const std::span<uint64_t> tally(counts.data(), rs.tallied_events);
      // A fleet rule passes when the fleet window has room; the host's own
      // window counts what passed here (and decides alone without an answer).
      uint64_t limit = rs.limit;
      bool fleet_late = false;
      const char* fleet_says = nullptr;
      if (rs.fleet && fleet_ != nullptr) {
        FleetAnswer a;
        if (rs.batched ? fleet_->lease(hit.rule, key, now, a) : fleet_->throttle(hit.rule, key, t, now, a)) {
          limit = a.passed ? UINT64_MAX : 0;
          fleet_late = a.late;
          if (a.late) rs.stats().fleet_late.add();
          fleet_says = a.passed ? "fleet window has room" : "fleet window is full";
        } else {
          rs.stats().fleet_local.add();
          limit = fallback_limit(rs.limit, fleet_->on_unreachable());
          fleet_says = "fleet unreachable: on_unreachable";
        }
      }
      const window::ThrottleOutcome o = w->offer_throttle(t, now, limit, 0, events, tally);
      if (o.late || fleet_late) rs.stats().late.add();
      if (rs.observed && !o.late) {
        uint64_t c = 0;
        w->read(std::span<uint64_t>(&c, 1));
        observer_->counted(hit.rule, key, t, c, memo_of(rs, slot));
      }
      if (o.passed) {
        rs.stats().passed.add();
        if (passed_by == nullptr) passed_by = &rule;
        if (o.summary.suppressed != 0) {
          rs.stats().summaries.add();
          summaries.push_back(summary_record(rs, key, now, o.summary, tally));
        }
      } else {
        suppressed = true;
        rs.stats().suppressed.add();
        if (slot) rs.keys->mark_active(slot);
      }
      if (ex) {
        counts[0] = 0;
        w->read(std::span<uint64_t>(counts.data(), 1));
        ex->counts.assign(1, counts[0]);
        ex->decision =
            fmt::format("{}{} ({} of {} per {} in the window)", o.passed ? "passed" : "suppressed",
                        o.late || fleet_late ? ", late: decided at now" : "", counts[0], rs.limit, rule.window_text);
        if (fleet_says != nullptr) {
          ex->decision += fmt::format(
              "; {}{}", fleet_says,
              fleet_says[6] == 'u' ? " = " + std::string(to_string(fleet_->on_unreachable())) : std::string());
        }
      }
      continue;
    }

    std::fill_n(counts.begin(), std::min<std::size_t>(rule.events.size(), 64), 0);
    if (rs.fleet && fleet_ != nullptr) {
      if (offer_fleet_alert(rs, hit.events, key, line, t, now, *w, counts, values, alerts, ex)) continue;
      // No answer in time: on_unreachable = "local" decides on this window below.
    }
    window::AlertOutcome o;
    if (rs.riders.empty()) {
      o = w->offer_alert(t, now, hit.events, rs.policy, counts);
    } else {
      // The riders decide on the counts this line made, before any other
      // line of the key is counted: as on windows of their own.
      auto& group = static_cast<WindowGroup&>(slot->window());
      bool riders_firing = false;
      {
        std::lock_guard lock(group.riders_mutex());
        o = w->offer_alert(t, now, hit.events, rs.policy, counts);
        riders_firing = offer_riders(rs, group, o, counts, key, line, t, now, hit.events, values, alerts);
      }
      if (riders_firing) rs.keys->mark_active(slot);
    }
    if (ex) ex->counts.assign(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(rule.events.size()));
    if (o.late) {
      rs.stats().late.add();
      if (ex) ex->decision = "late: older than the window, not counted";
      continue;
    }
    rs.stats().events.add(static_cast<uint64_t>(std::popcount(hit.events)));
    if (rs.observed) {
      uint64_t sum = 0;
      for (std::size_t i = 0; i < rule.events.size(); ++i) sum += counts[i];
      observer_->counted(hit.rule, key, t, sum, memo_of(rs, slot));
    }
    if (o.firing && slot) rs.keys->mark_active(slot);
    if (o.action == window::AlertAction::Alert || o.action == window::AlertAction::Resolved) {
      const bool alert = o.action == window::AlertAction::Alert;
      if (alert && rs.fleet && fleet_ != nullptr) fleet_->raised_locally(hit.rule, key, t);
      Record r = make_record(alert ? RecordType::Alert : RecordType::Resolved, rs, key, now);
      fill_counts(r, rs, counts);
      r.suppressed = o.suppressed;
      if (alert) {
        r.line = line.text;
        r.has_line = true;
      }
      render_message(rs, r, values);
      (alert ? rs.stats().alerts : rs.stats().resolveds).add();
      alerts.push_back(std::move(r));
    } else if (o.holds) {
      rs.stats().suppressed.add();
    }
    if (ex) {
      ex->decision = o.action == window::AlertAction::Alert      ? to_string(o.action)
                     : o.action == window::AlertAction::Resolved ? "resolved: the condition no longer holds"
                     : o.holds  ? "condition holds; no alert: inside the cooldown since the last one"
                     : o.firing ? "counted; condition false, still firing: resolve_when does not hold"
                                : "counted; condition false";
    }
  }

  for (Record& r : summaries) out.push_back(std::move(r));
  if (!suppressed && (throttle_matched || options_.passthrough)) {
    Record r;
    r.type = RecordType::Line;
    r.has_time = now >= 0;
    r.time_ms = now < 0 ? 0 : now;
    r.rule = passed_by;
    r.line = line.text;
    r.has_line = true;
    stats_->written.add();
    out.push_back(std::move(r));
  }
  for (Record& r : alerts) out.push_back(std::move(r));
}

void Engine::finish(std::vector<Record>& out) {
  out.clear();
  const int64_t now = now_.load();
  for (auto& rs : states_) {
    if (!rs->throttle) continue;
    auto take = [&](window::Window& w, std::string_view key) {
      std::array<uint64_t, 64> counts;
      const std::span<uint64_t> tally(counts.data(), rs->tallied_events);
      const window::Summary s = w.take_pending(tally);
      if (s.suppressed == 0) return;
      rs->stats().summaries.add();
      out.push_back(summary_record(*rs, key, now, s, tally));
    };
    if (rs->single) {
      take(*rs->single, "");
      continue;
    }
    auto slots = rs->keys->all();
    std::sort(slots.begin(), slots.end(), [](const auto& a, const auto& b) { return a->key() < b->key(); });
    for (const auto& s : slots) take(window_of(*rs, *s), s->key());
  }
}

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

std::vector<std::string> Engine::adopt(const Engine& old, std::vector<Record>& flushed) {
  flushed.clear();
  atomic_max(now_, old.now_.load());
  stats_ = old.stats_;
  std::vector<std::string> fresh;
  for (auto& rs : states_) {
    const RuleState* prev = nullptr;
    for (const auto& o : old.states_)
      if (o->rule->name == rs->rule->name) prev = o.get();
    if (prev == nullptr) continue;  // a new rule
    if (!config::windows_carry_over(*prev->rule, *rs->rule)) {
      // Its windows go, but what they held back is still reported (DESIGN.md §3:
      // at the latest at exit), as at the end of input.
      fresh.push_back(rs->rule->name);
      if (prev->throttle) {
        auto take = [&](window::Window& w, std::string_view key) {
          std::array<uint64_t, 64> counts;
          const std::span<uint64_t> tally(counts.data(), prev->tallied_events);
          const window::Summary s = w.take_pending(tally);
          if (s.suppressed == 0) return;
          flushed.push_back(summary_record(*prev, key, old.now_.load(), s, tally));
        };
        if (prev->single) take(*prev->single, "");
        else
          for (const auto& slot : prev->keys->by_age()) take(window_of(*prev, *slot), slot->key());
      }
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
