// `swthrottle backtest ...`: main() hands over when argv[1] is "backtest".
#pragma once

namespace swthrottle::backtest {

// argv[0] is "backtest". Returns the exit status: 0, or 2 (usage, rules,
// input error; the message is on stderr).
int backtest_main(int argc, const char* const* argv);

}  // namespace swthrottle::backtest
