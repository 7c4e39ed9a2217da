#include "backtest/suggestion.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "backtest/terminal_text.h"

namespace swthrottle::backtest {

uint64_t alert_budget(uint64_t per, int64_t duration_ms, int64_t span_ms) {
  if (duration_ms <= 0 || span_ms <= 0) return std::max<uint64_t>(1, per);
  const long double allowed =
      static_cast<long double>(per) * static_cast<long double>(span_ms) / static_cast<long double>(duration_ms);
  return std::max<uint64_t>(1, static_cast<uint64_t>(allowed));
}

namespace {

// "Y = 12" (per the window, when the sweep has several), or "0.05" of a `when`.
std::string value_text(const RuleResult& rule, const Candidate& c, bool windows) {
  std::string v = rule.threshold ? fmt::format("Y = {}", c.value) : fmt::format("{}", c.value);
  if (windows) v += fmt::format(" per {}", c.window);
  return v;
}

std::string times(uint64_t n) { return n == 1 ? "once" : fmt::format("{} times", n); }

}  // namespace

std::string suggest(const RuleResult& rule, uint64_t budget, int64_t span_ms, const std::string& target_text) {
  if (rule.sweep.empty() || rule.kind != config::RuleKind::Alert) return "";
  const auto current = std::find_if(rule.sweep.begin(), rule.sweep.end(), [](const Candidate& c) { return c.current; });
  if (current == rule.sweep.end()) return "";
  const bool windows = std::any_of(rule.sweep.begin(), rule.sweep.end(),
                                   [&](const Candidate& c) { return c.window_ms != current->window_ms; });
  // The smallest value within the budget; among equal values, the window
  // nearest the rule's own.
  const Candidate* best = nullptr;
  for (const Candidate& c : rule.sweep) {
    if (c.outcome.alerts > budget) continue;
    auto distance = [&](const Candidate& x) { return std::llabs(x.window_ms - current->window_ms); };
    if (best == nullptr || c.number < best->number || (c.number == best->number && distance(c) < distance(*best)))
      best = &c;
  }
  const std::string over = fmt::format("over these {}", span_text(span_ms));
  const std::string goal = fmt::format("target: at most {} ({})", budget, target_text);
  if (best == nullptr) {
    const Candidate* fewest = &rule.sweep.front();
    for (const Candidate& c : rule.sweep)
      if (c.outcome.alerts < fewest->outcome.alerts) fewest = &c;
    return fmt::format("no candidate stays within the target; the fewest: {} fired {} {} ({})",
                       value_text(rule, *fewest, windows), times(fewest->outcome.alerts), over, goal);
  }
  if (best->current) {
    return fmt::format("the current {} fired {} {}, within the target ({})", value_text(rule, *current, windows),
                       times(current->outcome.alerts), over, goal);
  }
  if (current->outcome.alerts <= budget) {
    // Within the target already: a smaller value would be more sensitive
    // and stay within it too; said, not pressed.
    return fmt::format("the current {} fired {} {}, within the target ({}); {}, more sensitive, would have too ({})",
                       value_text(rule, *current, windows), times(current->outcome.alerts), over, goal,
                       value_text(rule, *best, windows), times(best->outcome.alerts));
  }
  return fmt::format("{} would have fired {} {}; the current {} fired {} ({})", value_text(rule, *best, windows),
                     times(best->outcome.alerts), over, value_text(rule, *current, windows),
                     times(current->outcome.alerts), goal);
}

}  // namespace swthrottle::backtest
