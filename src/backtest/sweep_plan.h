// SweepPlan: the one rule set a backtest runs (man page: BACKTEST). The
// rules as loaded, then, for every rule swept, a candidate copy per other
// threshold (and window), and for every throttle selected a counting copy.
// Copies are matched as the rule they copy (config::Rule::matched_as), so
// the history is read and matched once and each candidate is decided by
// the real engine, as a run with that threshold would decide it: rules do
// not see each other's windows.
//
// The backtest runs no actions and asks no fleet: `exec` and `fleet` are
// dropped from every rule (a fleet rule is backtested as host-local).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backtest/report.h"
#include "config/rules.h"
#include "util/result.h"

namespace swthrottle::backtest {

// What --sweep and --sweep-window ask for.
struct SweepRequest {
  std::vector<std::string> values;                       // thresholds as written ("12", "0.05")
  bool automatic = false;                                // --sweep auto: a ladder around each rule's own value
  std::vector<std::pair<int64_t, std::string>> windows;  // ms, as written; empty: each rule's own
  bool any() const { return automatic || !values.empty() || !windows.empty(); }
};

// --sweep: "5,10,20,50", "5..50" (ten values from 5 to 50, evenly spaced,
// whole numbers when both ends are), or "auto"; --sweep-window: "30s,1m,5m".
// Either may be empty. Errors name the item and its column (1-based).
Result<SweepRequest> parse_sweep(std::string_view values, std::string_view windows);

// The number a `when` compares with, when it is a comparison `EXPR >= N`,
// `EXPR > N`, or (a condition of silence) `EXPR < N` or `EXPR <= N`, alone or
// followed by guards joined with `and` that are comparisons too
// (`error / request > 0.05 and request >= 100`, the form the man page
// recommends): prefix is the text up to and including the operator, guard
// the rest, kept as written. No `or` or `not` anywhere.
// nullopt: not a `when` a sweep can vary.
struct WhenThreshold {
  std::string prefix;  // "error / request >"
  std::string number;  // "0.05"
  std::string guard;   // "and request >= 100", or ""

  // The condition with `value` in place of the number.
  std::string with(std::string_view value) const {
    std::string out = prefix + " " + std::string(value);
    if (!guard.empty()) out += " " + guard;
    return out;
  }
};
std::optional<WhenThreshold> when_threshold(std::string_view when);

// The factor of a spike condition: the one number N written as
// "N * previous(e)", "previous(e) * N" or "previous(e) / N" in a `when`
// (error >= 3 * previous(error) and error >= 20). A candidate's condition
// is prefix + value + suffix. nullopt: no such number, or more than one.
struct SpikeFactor {
  std::string prefix;  // "error >= "
  std::string number;  // "3"
  std::string suffix;  // " * previous(error) and error >= 20"
};
std::optional<SpikeFactor> spike_factor(std::string_view when);

// What an engine rule of the plan reports into.
struct PlanSlot {
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t result = kNone;  // index into Report::rules; kNone: a rule not selected
  enum class Role { Rule, Candidate, Counter } role = Role::Rule;
  uint32_t candidate = 0;  // Role::Candidate: index into RuleResult::sweep
};

struct SweepPlan {
  config::RuleSet rules;              // the loaded rules, then the copies
  std::vector<PlanSlot> slots;        // by rule index of `rules`
  std::vector<RuleResult> results;    // the selected rules, their sweeps' candidates listed (no figures yet)
  std::vector<uint32_t> result_rule;  // by result: its rule's index in `rules`
};

// `only`: the rules to backtest by name (empty: all; a name no rule has
// is an error unless `lenient`, as for the old rules of a diff). Fails on a
// window that does not divide into a rule's buckets, or a value a rule
// cannot take.
Result<SweepPlan> plan_sweep(config::RuleSet rules, const std::vector<std::string>& only, const SweepRequest& sweep,
                             bool lenient = false);

}  // namespace swthrottle::backtest
