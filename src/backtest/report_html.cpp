#include "backtest/report_html.h"
namespace swthrottle::backtest {
std::string render_html(const Report&) { return "<html></html>\n"; }
}  // namespace swthrottle::backtest
