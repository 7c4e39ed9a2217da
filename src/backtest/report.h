// Report: what `swthrottle backtest` found over a history, rule by rule (man
// page: BACKTEST). Plain data: the backtest (backtest/backtest.h) fills it
// from one real run of the engine; the reports (text, JSON, HTML) only read
// it. Every list here is bounded (see the limits below), so a report of a
// 2M-line log with 10^5 keys stays small.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/rules.h"

namespace swthrottle::backtest {

// At most this many alert marks per rule and candidate are kept (for the
// timeline and the diff); Outcome::alerts counts all of them.
inline constexpr std::size_t kMaxMarks = 10'000;
// At most this many points in a rule's count series (merged pairwise, by
// their maximum, when a longer history would need more).
inline constexpr std::size_t kMaxSeries = 2048;

// What a rule (or one candidate of a sweep) did over the history: the
// figures `--stats` would print for it, and its records counted by type.
struct Outcome {
  uint64_t lines = 0;       // lines the rule matched (not ignored)
  uint64_t events = 0;      // alert rules: matched events counted in windows
  uint64_t alerts = 0;      // alert records (episodes started)
  uint64_t resolved = 0;    // resolved records
  uint64_t passed = 0;      // throttle: lines passed
  uint64_t suppressed = 0;  // throttle: lines suppressed; alert: lines that held while inside a cooldown
  uint64_t summaries = 0;   // throttle: summary records
  uint64_t late = 0;        // lines older than the window (not counted)
};

// One alert record, for the timeline and the diff.
struct AlertMark {
  int64_t t_ms = 0;  // its time (log time)
  std::string key;   // "" for a rule without `key`
  uint64_t count = 0;
};

// A distribution of window counts: the count of a key's window at the close
// of every bucket in which that key had an event (an alert can only fire on
// an event, so quiet buckets say nothing about the threshold). Percentiles
// are nearest-rank, exact.
struct Distribution {
  uint64_t samples = 0;  // 0: no event was counted
  uint64_t max = 0;
  uint64_t p50 = 0;
  uint64_t p90 = 0;
  uint64_t p99 = 0;
};

// A key of a keyed rule, with its highest window count.
struct KeyPeak {
  std::string key;
  uint64_t peak = 0;      // highest window count this key reached
  int64_t peak_t_ms = 0;  // when it first reached it
  uint64_t events = 0;    // events counted for it (throttle: lines)
  uint64_t alerts = 0;    // alert records for it (throttle: summaries)
};

// The highest window count (of any key) per step of log time, from the
// first counted event to the last: the timeline's data.
struct Series {
  int64_t start_ms = 0;
  int64_t step_ms = 0;        // one bucket of the rule, doubled as needed to fit kMaxSeries
  std::vector<uint64_t> max;  // max[i]: the highest count in [start + i*step, start + (i+1)*step)
};

// One candidate of a sweep: the rule with another threshold (and window).
struct Candidate {
  std::string value;   // the threshold as written: "12" (Y), or the number a `when` ends in ("0.05")
  double number = 0;   // the same, as a number (for ordering and charts)
  std::string window;  // "1m": the window as written (the rule's own unless --sweep-window)
  int64_t window_ms = 0;
  bool current = false;  // the rule's own threshold and window
  Outcome outcome;
  std::vector<AlertMark> alerts;  // in time order, at most kMaxMarks
};

struct RuleResult {
  std::string name;
  config::RuleKind kind = config::RuleKind::Alert;
  std::string condition;  // "threshold = 5 per 1m", or "when = error >= 3 (window 1m)"
  std::string window;     // "1m"
  int64_t window_ms = 0;
  int64_t bucket_ms = 0;
  int64_t cooldown_ms = 0;            // alert rules
  std::optional<uint64_t> threshold;  // Y, for a rule with `threshold`
  bool keyed = false;
  uint64_t keys = 0;              // distinct keys seen (keyed rules)
  Outcome outcome;                // the rule as it is written
  std::vector<AlertMark> alerts;  // its alerts, in time order (at most kMaxMarks)
  Distribution distribution;
  std::vector<KeyPeak> top_keys;  // keyed rules: the keys with the highest peaks, highest first (--top)
  Series series;
  // The sweep, in increasing threshold (then window) order; the rule's own
  // value is among them (current = true). Empty when the rule was not swept.
  std::vector<Candidate> sweep;
  std::string not_swept;   // why a selected rule could not be swept ("" when it was, or was not asked)
  std::string suggestion;  // one line, or "" (alert rules with a sweep; method in the man page)
};

// Rule diff (--against OLD): one rule's alerts under the old rules against
// the new, key by key. An old and a new alert of the same rule and key pair
// up when they are less than the new rule's window or cooldown (the longer)
// apart, in time order: the same episode, raised at the same time
// (unchanged) or not (moved); the rest are removed (old only) or added (new
// only).
struct DiffChange {
  enum class Kind { Added, Removed, Moved };
  Kind kind = Kind::Added;
  std::string key;
  int64_t old_ms = 0;  // Removed, Moved
  int64_t new_ms = 0;  // Added, Moved
};

struct RuleDiff {
  std::string rule;
  std::string status;  // "changed", "unchanged", "new rule", "removed rule"
  uint64_t old_alerts = 0;
  uint64_t new_alerts = 0;
  uint64_t unchanged = 0;
  uint64_t added = 0;
  uint64_t removed = 0;
  uint64_t moved = 0;
  std::vector<DiffChange> changes;  // in time order, at most kMaxMarks
};

struct Report {
  std::vector<std::string> inputs;  // as given ("-": standard input)
  std::vector<std::string> rule_files;
  uint64_t lines = 0;
  uint64_t matched = 0;  // lines any rule matched
  uint64_t untimed = 0;  // lines decided without a timestamp (see --stats)
  uint64_t untrusted = 0;
  int64_t first_ms = -1;  // the oldest and newest log time seen (-1: none)
  int64_t last_ms = -1;
  std::vector<RuleResult> rules;  // in rule order (the selected rules only)
  std::string against;            // --against's files, joined by ", " ("": no diff)
  std::vector<RuleDiff> diff;     // with --against: every rule of either side, in new-rule order
};

}  // namespace swthrottle::backtest
