// AlertTally: the RecordSink of a backtest. Nothing is written: the alert
// records of every rule of the plan are kept as marks (time, key, count),
// at most kMaxMarks per rule, for the timeline and the rule diff, and the
// summary records of throttles are counted per key, for the top keys. The
// rules' totals come from the engine's --stats counters.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backtest/report.h"
#include "config/rules.h"
#include "output/sink.h"

namespace swthrottle::backtest {

class AlertTally final : public output::RecordSink {
 public:
  // `rules`: the engine's, to know a record's rule by its address.
  explicit AlertTally(const config::RuleSet& rules)
      : rules_(rules), marks_(rules.rules.size()), summaries_(rules.rules.size()) {}

  bool write(std::span<const engine::Record> records, std::string_view explain = {}) override;
  bool closed() override { return false; }
  bool failed() override { return false; }
  bool wrote_alert() override;

  // After the run: rule `r`'s alerts, in the order they were decided.
  std::vector<AlertMark> take(std::size_t r);
  // After the run: the summary records of rule `r` (a throttle) for `key`.
  uint64_t summaries(std::size_t r, std::string_view key);

 private:
  const config::RuleSet& rules_;
  std::mutex mu_;
  std::vector<std::vector<AlertMark>> marks_;  // by rule
  // By rule, summary records per key: only keys that had one (a throttle's
  // keys are bounded by its max_keys; the engine evicts beyond).
  std::vector<std::unordered_map<std::string, uint64_t>> summaries_;
  bool alert_ = false;
};

}  // namespace swthrottle::backtest
