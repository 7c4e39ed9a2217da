// Hand-built backtest Results for the HTML report's tests (the unit tests of
// the page's text and the screenshot test of its pixels): every part of the
// page has something to draw, with numbers a test can predict.
#pragma once

#include <cstdint>
#include <string>

#include "backtest/report.h"
#include "support/rule_fixtures.h"

namespace swthrottle::test {

// An alert rule "api-errors", threshold 20 per 5m, keyed, over 6 hours of
// minutes: a low wave with three spikes to 30, each of which alerted; a
// sweep of five candidates (10, 15, 20 current, 25, 30). With `alerting`
// false: the same counts under a `when` rule, which has no threshold, and
// no alert (its sweep, around 0.05, still has bars), so that nothing on its
// page is red.
inline backtest::Report sample_backtest(bool alerting = true) {
  using backtest::AlertMark;
  using backtest::Candidate;
  constexpr int64_t kMinute = 60'000;
  constexpr std::size_t kPoints = 360;

  backtest::Report r;
  r.inputs = {"/var/log/app/api.log", "/var/log/app/api.log.1"};
  r.rule_files = {"/etc/swthrottle/rules.toml"};
  r.lines = 120'000;
  r.matched = 5'400;
  r.first_ms = kT0;
  r.last_ms = kT0 + static_cast<int64_t>(kPoints) * kMinute - 1;

  backtest::RuleResult rule;
  rule.name = "api-errors";
  rule.kind = config::RuleKind::Alert;
  rule.window = "5m";
  rule.window_ms = 5 * kMinute;
  rule.bucket_ms = kMinute;
  rule.keyed = true;
  rule.keys = 42;
  rule.series.start_ms = kT0;
  rule.series.step_ms = kMinute;
  const std::size_t spikes[] = {60, 170, 300};
  for (std::size_t i = 0; i < kPoints; ++i) rule.series.max.push_back(4 + (i / 7) % 9);
  for (const std::size_t s : spikes) {
    for (std::size_t i = s; i < s + 8; ++i) rule.series.max[i] = 30;
  }
  rule.distribution = backtest::Distribution{.samples = 5'000, .max = 30, .p50 = 8, .p90 = 12, .p99 = 30};
  rule.top_keys = {{"203.0.113.9", 30, kT0 + 60 * kMinute, 900, 2},
                   {"198.51.100.7", 24, kT0 + 170 * kMinute, 700, 1},
                   {"192.0.2.33", 12, kT0 + 10 * kMinute, 300, 0}};
  rule.outcome.lines = 5'400;
  rule.outcome.events = 5'400;

  if (alerting) {
    rule.condition = "threshold = 20 per 5m";
    rule.threshold = 20;
    for (const std::size_t s : spikes) {
      rule.alerts.push_back(AlertMark{kT0 + static_cast<int64_t>(s) * kMinute + 20'000, "203.0.113.9", 20});
    }
    rule.outcome.alerts = rule.alerts.size();
    rule.outcome.resolved = rule.alerts.size();
    rule.outcome.suppressed = 40;
    rule.suggestion = "threshold 25 per 5m would keep all 3 alerts";
  } else {
    rule.condition = "when = error / request > 0.05 (window 5m)";
  }
  // The sweep: around the threshold, or around the number the `when` ends in.
  const uint64_t alerts_at[] = {9, 5, 3, 3, 0};
  const char* thresholds[] = {"10", "15", "20", "25", "30"};
  const char* ratios[] = {"0.01", "0.03", "0.05", "0.08", "0.1"};
  for (std::size_t i = 0; i < 5; ++i) {
    Candidate c;
    c.value = alerting ? thresholds[i] : ratios[i];
    c.number = std::stod(c.value);
    c.window = "5m";
    c.window_ms = 5 * kMinute;
    c.current = i == 2;
    c.outcome.alerts = alerting ? alerts_at[i] : (i < 2 ? 2 - i : 0);
    c.outcome.resolved = c.outcome.alerts;
    c.outcome.lines = 5'400;
    c.outcome.events = 5'400;
    rule.sweep.push_back(c);
  }
  r.rules.push_back(std::move(rule));
  return r;
}

}  // namespace swthrottle::test
