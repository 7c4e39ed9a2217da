// The HTML report of `swthrottle backtest --html FILE`: one self-contained
// page (inline CSS and SVG, no script, nothing fetched) to attach to a
// ticket: per rule, the timeline of the window count with the threshold and
// the alerts, the sweep's alerts per candidate, the top keys, and the rule
// diff.
#pragma once

#include <string>

#include "backtest/report.h"

namespace swthrottle::backtest {

std::string render_html(const Report& result);

}  // namespace swthrottle::backtest
