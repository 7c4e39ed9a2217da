#include "backtest/rule_diff.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace swthrottle::backtest {

namespace {

// One rule's alerts old against new, key by key.
RuleDiff diff_one(const std::string& name, const RuleResult* older, const RuleResult* newer) {
  RuleDiff d;
  d.rule = name;
  d.old_alerts = older ? older->outcome.alerts : 0;
  d.new_alerts = newer ? newer->outcome.alerts : 0;
  if (!older || !newer) {
    d.status = older ? "removed rule" : "new rule";
    const RuleResult& side = older ? *older : *newer;
    for (const AlertMark& m : side.alerts) {
      if (d.changes.size() >= kMaxMarks) break;
      d.changes.push_back(DiffChange{older ? DiffChange::Kind::Removed : DiffChange::Kind::Added, m.key,
                                     older ? m.t_ms : 0, older ? 0 : m.t_ms});
    }
    (older ? d.removed : d.added) = side.outcome.alerts;
    return d;
  }
  // Within a window or a cooldown of each other: the same episode.
  const int64_t near = std::max<int64_t>({1, newer->window_ms, newer->cooldown_ms});
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<int64_t>>> by_key;
  for (const AlertMark& m : older->alerts) by_key[m.key].first.push_back(m.t_ms);
  for (const AlertMark& m : newer->alerts) by_key[m.key].second.push_back(m.t_ms);
  for (auto& [key, times] : by_key) {
    auto& [o, n] = times;
    std::sort(o.begin(), o.end());
    std::sort(n.begin(), n.end());
    // In time order: an old and a new alert less than a window apart pair
    // up, unless the next alert after the earlier of the two is nearer to
    // the later (nearest first); otherwise the earlier has no partner.
    std::size_t i = 0, j = 0;
    auto nearer_next = [&] {
      if (o[i] < n[j]) return i + 1 < o.size() && std::llabs(o[i + 1] - n[j]) < n[j] - o[i];
      return j + 1 < n.size() && std::llabs(n[j + 1] - o[i]) < o[i] - n[j];
    };
    while (i < o.size() || j < n.size()) {
      if (i < o.size() && j < n.size() && std::llabs(o[i] - n[j]) < near && !nearer_next()) {
        if (o[i] == n[j]) {
          ++d.unchanged;
        } else {
          ++d.moved;
          d.changes.push_back(DiffChange{DiffChange::Kind::Moved, key, o[i], n[j]});
        }
        ++i;
        ++j;
      } else if (j == n.size() || (i < o.size() && o[i] < n[j])) {
        ++d.removed;
        d.changes.push_back(DiffChange{DiffChange::Kind::Removed, key, o[i], 0});
        ++i;
      } else {
        ++d.added;
        d.changes.push_back(DiffChange{DiffChange::Kind::Added, key, 0, n[j]});
        ++j;
      }
    }
  }
  auto when = [](const DiffChange& c) { return c.kind == DiffChange::Kind::Removed ? c.old_ms : c.new_ms; };
  std::stable_sort(d.changes.begin(), d.changes.end(),
                   [&](const DiffChange& a, const DiffChange& b) { return when(a) < when(b); });
  if (d.changes.size() > kMaxMarks) d.changes.resize(kMaxMarks);
  // Alerts past the marks kept (kMaxMarks) are counted, not paired.
  const bool changed = d.added + d.removed + d.moved > 0 || d.old_alerts != d.new_alerts;
  d.status = changed ? "changed" : "unchanged";
  return d;
}

}  // namespace

std::vector<RuleDiff> diff_rules(const std::vector<RuleResult>& older, const std::vector<RuleResult>& newer) {
  std::vector<RuleDiff> out;
  auto find = [](const std::vector<RuleResult>& side, const std::string& name) -> const RuleResult* {
    for (const RuleResult& r : side)
      if (r.name == name) return &r;
    return nullptr;
  };
  for (const RuleResult& n : newer) out.push_back(diff_one(n.name, find(older, n.name), &n));
  for (const RuleResult& o : older)
    if (!find(newer, o.name)) out.push_back(diff_one(o.name, &o, nullptr));
  return out;
}

}  // namespace swthrottle::backtest
