// The JSON report of `swthrottle backtest --format json` (man page:
// BACKTEST, "JSON"): one object, for scripts. Times are RFC 3339 in UTC,
// counts are numbers, and every list is as bounded as result.h says.
#pragma once

#include <string>

#include "backtest/report.h"

namespace swthrottle::backtest {

std::string render_json(const Report& result);  // one line, then "\n"

}  // namespace swthrottle::backtest
