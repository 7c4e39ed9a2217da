// The alert kind with `fleet` (man page: FLEET): the line's events are
// counted in the fleet window (exact: at once; batched: with the next
// flush), the condition is evaluated there, and at most one host claims
// each alert. The host's own window keeps counting, and decides alone, by
// on_unreachable, when the fleet gives no answer in time. Also here: the
// alerts the fleet thread claimed for batched rules, and the boundary check
// of the episodes this host opened.
#include <array>
#include <bit>
#include <mutex>

#include "engine/rule_logic.h"
#include "engine/rule_records.h"
#include "engine/rule_state.h"

namespace swthrottle::engine {
namespace {

// The host's own window counts the line's events: it decides when the fleet cannot.
void count_here(const Hit& hit) {
  for (uint64_t e = hit.events; e != 0; e &= e - 1) hit.window.add(hit.t, static_cast<uint32_t>(std::countr_zero(e)));
}

// The fleet gave no answer. False when on_unreachable = "local": the host's
// window decides. Otherwise the line is counted here only, and no alert.
bool no_answer(RuleState& rs, const Hit& hit, Decision& d) {
  rs.stats().fleet_local.add();
  if (hit.fleet->on_unreachable() == config::Unreachable::Local) return false;
  count_here(hit);
  d.verdict = Verdict::FleetNoAlert;
  return true;
}

// The alert of a fleet claim this host won, counted; with `resolve`, the
// episode is this host's to resolve (check_episodes).
Record claimed_alert(RuleState& rs, std::string_view key, int64_t now, std::span<const uint64_t> counts,
                     uint64_t suppressed, std::string_view line, bool has_line, std::string_view episode,
                     std::span<std::string_view> values) {
  Record r = alert_record(RecordType::Alert, rs, key, now, counts, suppressed, values, line, has_line);
  if (rs.rule->resolve) {
    std::lock_guard lock(rs.episodes->mu);
    rs.episodes->by_key[std::string(key)] = std::string(episode);
  }
  return r;
}

// fleet = "batched": counted here and among the deltas the fleet thread
// flushes; the fleet thread claims the alert, and the timer writes it
// (Engine::fleet_alerts).
bool offer_batched(RuleState& rs, Hit& hit, Decision& d) {
  if (!hit.fleet->add(rs.index, hit.key, hit.t, hit.now, hit.events, hit.line.text)) return no_answer(rs, hit, d);
  count_here(hit);
  rs.stats().events.add(static_cast<uint64_t>(std::popcount(hit.events)));
  d.verdict = Verdict::FleetQueued;
  return true;
}

// fleet = "exact": a plain threshold is claimed in the same step as the
// count; a `when` is evaluated here, and claimed in a second step only when
// it holds.
bool offer_exact(RuleState& rs, Hit& hit, Decision& d) {
  const config::Rule& rule = *rs.rule;
  const std::span<uint64_t> c = hit.counts.first(rule.events.size());
  std::fill(c.begin(), c.end(), 0);
  FleetAnswer a;
  const bool plain = rule.threshold.has_value();
  if (!hit.fleet->alert(rs.index, hit.key, hit.t, hit.now, hit.events, plain, c, a)) return no_answer(rs, hit, d);
  count_here(hit);
  d.counts_known = true;
  if (a.late) {
    rs.stats().late.add();
    rs.stats().fleet_late.add();
    d.verdict = Verdict::FleetLate;
    return true;
  }
  rs.stats().events.add(static_cast<uint64_t>(std::popcount(hit.events)));
  const bool holds = rule.when.eval(c);
  if (holds && !plain && !hit.fleet->claim(rs.index, hit.key, hit.t, a)) {
    rs.stats().fleet_local.add();  // the count is in; the claim had no answer: no alert from here
  }
  if (a.claimed) {
    hit.alerts.push_back(
        claimed_alert(rs, hit.key, hit.now, c, a.suppressed, hit.line.text, true, a.episode, hit.values));
  } else if (holds) {
    rs.stats().suppressed.add();
  }
  d.verdict = a.claimed ? Verdict::FleetClaimed : holds ? Verdict::FleetHeldBack : Verdict::FleetCounted;
  return true;
}

class FleetAlertLogic final : public RuleLogic {
 public:
  Decision offer(RuleState& rs, Hit& hit) const override {
    if (hit.fleet == nullptr) return alert_logic().offer(rs, hit);
    Decision d;
    if (rs.batched ? offer_batched(rs, hit, d) : offer_exact(rs, hit, d)) return d;
    // No answer in time, and on_unreachable = "local": this host's window
    // decides; an alert it raises is claimed in the fleet once Redis answers.
    d = alert_logic().offer(rs, hit);
    if (d.verdict == Verdict::Alert) hit.fleet->raised_locally(rs.index, hit.key, hit.t);
    return d;
  }

  void check_key(RuleState& rs, window::Window& w, std::string_view key, int64_t now,
                 std::vector<Record>& out) const override {
    alert_logic().check_key(rs, w, key, now, out);
  }

  // The fleet episodes this host opened: those whose condition no longer
  // holds in the fleet window are resolved.
  void check_rule(RuleState& rs, int64_t now, FleetLink* fleet, std::vector<Record>& out) const override {
    if (fleet == nullptr) return;
    std::vector<std::pair<std::string, std::string>> open;
    {
      std::lock_guard lock(rs.episodes->mu);
      open.assign(rs.episodes->by_key.begin(), rs.episodes->by_key.end());
    }
    const config::Rule& rule = *rs.rule;
    for (const auto& [key, episode] : open) {
      std::array<uint64_t, 64> counts{};
      const std::span<uint64_t> c(counts.data(), rule.events.size());
      if (!fleet->read(rs.index, key, now, c)) continue;  // no answer: asked again at the next boundary
      if (rule.when.eval(c)) continue;
      if (rule.resolve_when && !rule.resolve_when->eval(c)) continue;
      FleetAnswer a;
      if (!fleet->resolve(rs.index, key, episode, a)) continue;
      {
        std::lock_guard lock(rs.episodes->mu);
        rs.episodes->by_key.erase(key);  // resolved, or no longer the fleet's episode (another host's now)
      }
      if (a.resolved) out.push_back(resolved_record(rs, key, now, c, a.suppressed));
    }
  }
};

}  // namespace

const RuleLogic& fleet_alert_logic() {
  static const FleetAlertLogic logic;
  return logic;
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
    const std::span<const uint64_t> counts(c.counts.data(), rs.rule->events.size());
    // Claimed by the fleet thread: the line is one of the key's, without its captures.
    FieldValues values{};
    rule_values(rs, values);
    values[config::kFieldLine] = c.line;
    out.push_back(claimed_alert(rs, c.key, now, counts, c.suppressed, c.line, !c.line.empty(), c.episode, values));
  }
}

}  // namespace swthrottle::engine
