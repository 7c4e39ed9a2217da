#include "backtest/report_text.h"
namespace swthrottle::backtest {
std::string render_text(const Report&, const TextStyle&) { return "text report: not yet\n"; }
}  // namespace swthrottle::backtest
