// The text report of `swthrottle backtest` (man page: BACKTEST): per rule,
// its figures, the distribution of its window count, its top keys, a
// timeline of the count with the threshold line and the alerts marked, and
// with a sweep a table and a bar chart of alerts per candidate, then the
// rule diff. Readable at 80 columns; colour (ANSI) only when asked.
#pragma once

#include <string>

#include "backtest/report.h"

namespace swthrottle::backtest {

struct TextStyle {
  int width = 80;      // columns (at least 60)
  bool color = false;  // ANSI colours: only on a tty, never with NO_COLOR (the caller decides)
};

std::string render_text(const Report& result, const TextStyle& style);

}  // namespace swthrottle::backtest
