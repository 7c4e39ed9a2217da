#include "backtest/backtest_command.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backtest/backtest_options.h"
#include "backtest/report_html.h"
#include "backtest/report_json.h"
#include "backtest/report_text.h"
#include "util/atomic_file.h"
#include "util/stderr.h"
#include "util/write_all.h"

namespace swthrottle::backtest {

namespace {

// The terminal's columns when stdout is one, else $COLUMNS, else 80.
int terminal_width() {
  winsize ws{};
  if (::isatty(1) && ::ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 60) return ws.ws_col;
  if (const char* c = std::getenv("COLUMNS")) {
    const int n = std::atoi(c);
    if (n >= 60 && n <= 400) return n;
  }
  return 80;
}

// auto: only on a terminal, and never with NO_COLOR set (to anything but "").
bool want_color(const std::string& when) {
  if (when == "always") return true;
  if (when == "never") return false;
  const char* no = std::getenv("NO_COLOR");
  return ::isatty(1) && (no == nullptr || *no == '\0');
}

}  // namespace

int backtest_main(int argc, const char* const* argv) {
  ParsedCommand parsed = parse_backtest_options(argc, argv);
  if (!parsed.options) {
    std::fputs(parsed.text.c_str(), parsed.exit_status == 0 ? stdout : stderr);
    return parsed.exit_status;
  }
  const CommandOptions& o = *parsed.options;
  auto result = run_backtest(o.backtest);
  if (!result) {
    // An input's own error was printed while it was read.
    if (result.error().what != "input error") print_message(result.error().str());
    return 2;
  }
  if (!o.html.empty()) {
    if (const int err = replace_file_atomically(o.html, render_html(*result), 0644)) {
      print_message(o.html + ": " + std::strerror(err));
      return 2;
    }
  }
  const std::string text =
      o.json ? render_json(*result)
             : render_text(*result, TextStyle{o.width > 0 ? o.width : terminal_width(), want_color(o.color)});
  if (write_all(1, text) != 0) {
    print_message("standard output: cannot write the report");
    return 2;
  }
  return 0;
}

}  // namespace swthrottle::backtest
