#include "backtest/backtest.h"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "app/app.h"
#include "app/inputs.h"
#include "app/load_generation.h"
#include "backtest/alert_tally.h"
#include "backtest/count_profile.h"
#include "backtest/rule_diff.h"
#include "backtest/suggestion.h"
#include "config/duration.h"
#include "util/clock.h"

namespace swthrottle::backtest {

namespace {

Outcome outcome_of(const engine::RuleStats& s) {
  Outcome o;
  o.lines = s.lines.get();
  o.events = s.events.get();
  o.alerts = s.alerts.get();
  o.resolved = s.resolveds.get();
  o.passed = s.passed.get();
  o.suppressed = s.suppressed.get();
  o.summaries = s.summaries.get();
  o.late = s.late.get();
  return o;
}

// One replay of the history with `rules_files`: the plan's results filled in.
Result<Report> replay(const BacktestOptions& options, const std::vector<std::string>& rules_files,
                      const SweepRequest& sweep, bool older) {
  cli::Options run = options.run;
  run.rule_files = rules_files;
  run.exec.clear();
  run.state_file.clear();
  run.follow = false;
  run.stats = false;
  run.explain = false;
  run.passthrough = false;
  run.exit_code = false;
  auto gen = app::load_generation(run);
  if (!gen) return gen.error();
  if ((*gen)->rules->settings.time != config::TimeSource::Log) {
    return Error{"", 0, 0,
                 "a backtest needs log time: set time = \"log\" in [settings] (with a timestamp that the history's "
                 "lines carry), or pass --time log"};
  }
  auto plan = plan_sweep(std::move(*(*gen)->rules), options.only, sweep, /*lenient=*/older);
  if (!plan) return plan.error();
  pipeline::Generation& g = **gen;
  g.rules = std::make_unique<config::RuleSet>(std::move(plan->rules));
  g.engine = std::make_unique<engine::Engine>(*g.rules, engine::EngineOptions{});
  engine::Engine& engine = *g.engine;
  CountProfile profile(*plan);
  engine.observe(&profile);
  AlertTally tally(*g.rules);

  auto inputs = app::open_inputs(run);
  if (!inputs) return inputs.error();
  Report out;
  out.inputs = run.inputs.empty() ? std::vector<std::string>{"-"} : run.inputs;
  out.rule_files = rules_files;
  {
    app::App app(run, app::AppOptions{}, std::move(*gen), tally, system_clock());
    if (!app.start()) return Error{"", 0, 0, "input error"};
    if (app.run(std::move(*inputs)) != 0) return Error{"", 0, 0, "input error"};

    const engine::GlobalStats& gs = engine.stats();
    out.lines = gs.lines.get();
    out.matched = gs.matched.get();
    out.untimed = gs.untimed.get();
    out.untrusted = gs.untrusted.get();
    out.first_ms = profile.first_ms();
    out.last_ms = engine.now_ms();
    out.rules = std::move(plan->results);
    for (std::size_t r = 0; r < plan->slots.size(); ++r) {
      const PlanSlot& s = plan->slots[r];
      if (s.result == PlanSlot::kNone) continue;
      RuleResult& rr = out.rules[s.result];
      switch (s.role) {
        case PlanSlot::Role::Rule:
          rr.outcome = outcome_of(engine.rule_stats(r));
          rr.keys = engine.rule_stats(r).keys.get();
          rr.alerts = tally.take(r);
          break;
        case PlanSlot::Role::Candidate: {
          Candidate& c = rr.sweep[s.candidate];
          c.outcome = outcome_of(engine.rule_stats(r));
          c.alerts = tally.take(r);
          break;
        }
        case PlanSlot::Role::Counter: break;
      }
    }
    for (RuleResult& rr : out.rules) {
      for (Candidate& c : rr.sweep) {
        if (!c.current) continue;
        c.outcome = rr.outcome;
        c.alerts = rr.alerts;
      }
    }
  }
  profile.fill(out.rules, options.top);
  // Top keys: their alerts, from the alerts kept; a throttle's, its summaries.
  for (std::size_t i = 0; i < out.rules.size(); ++i) {
    RuleResult& rr = out.rules[i];
    for (KeyPeak& k : rr.top_keys) {
      k.alerts = rr.kind == config::RuleKind::Throttle
                     ? tally.summaries(plan->result_rule[i], k.key)
                     : static_cast<uint64_t>(std::count_if(rr.alerts.begin(), rr.alerts.end(),
                                                           [&](const AlertMark& m) { return m.key == k.key; }));
    }
  }
  return out;
}

}  // namespace

Result<Report> run_backtest(const BacktestOptions& options) {
  if (!options.against.empty() &&
      (options.run.inputs.empty() || std::count(options.run.inputs.begin(), options.run.inputs.end(), "-") > 0))
    return Error{"", 0, 0, "--against replays the history twice, once per rule set: give it files, not standard input"};
  auto now = replay(options, options.run.rule_files, options.sweep, false);
  if (!now) return now;
  const int64_t span = now->first_ms >= 0 && now->last_ms > now->first_ms ? now->last_ms - now->first_ms : 0;
  const uint64_t budget = alert_budget(options.target_alerts, options.target_ms, span);
  const std::string target =
      fmt::format("{} per {}", options.target_alerts, config::format_duration(options.target_ms));
  for (RuleResult& rr : now->rules) rr.suggestion = suggest(rr, budget, span, target);
  if (!options.against.empty()) {
    auto before = replay(options, options.against, SweepRequest{}, true);
    if (!before) return before.error();
    now->diff = diff_rules(before->rules, now->rules);
    std::string joined;
    for (const std::string& f : options.against) joined += (joined.empty() ? "" : ", ") + f;
    now->against = joined;
  }
  return now;
}

}  // namespace swthrottle::backtest
