// run_backtest: `swthrottle backtest` (man page: BACKTEST). The history is
// replayed once through the real App, deciders and engine, with the rules
// of a SweepPlan (the loaded rules and their candidate copies), no actions,
// no fleet, nothing written; what each rule and candidate did is read back
// from the engine's counters, the alert records (AlertTally) and the window
// counts (CountProfile). With log time, a replay decides every line as the
// live run that read it would have.
#pragma once

#include <string>
#include <vector>

#include "backtest/report.h"
#include "backtest/sweep_plan.h"
#include "cli/options.h"
#include "util/result.h"

namespace swthrottle::backtest {

struct BacktestOptions {
  cli::Options run;               // rule files, inputs, --time, --mode, --input, -j, --max-line
  std::vector<std::string> only;  // rules to report (empty: all)
  SweepRequest sweep;
  std::vector<std::string> against;  // old rules files: a second replay, and the rule diff
  std::size_t top = 5;               // keys in each top list
  uint64_t target_alerts = 1;        // the suggestion's budget: this many alerts ...
  int64_t target_ms = 86'400'000;    // ... per this much log time
};

// Error: the rules or an input could not be used (the message says which);
// an input that fails while being read was reported on stderr already, and
// gives an Error whose `what` is "input error".
Result<Report> run_backtest(const BacktestOptions& options);

}  // namespace swthrottle::backtest
