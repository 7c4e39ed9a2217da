// The command line of `swthrottle backtest` (man page: BACKTEST) -> what
// to replay and how to report it. Pure: tested with argv arrays.
#pragma once

#include <optional>
#include <string>

#include "backtest/backtest.h"

namespace swthrottle::backtest {

struct CommandOptions {
  BacktestOptions backtest;
  bool json = false;           // --format json
  std::string html;            // --html FILE ("": none)
  int width = 0;               // --width (0: the terminal's, else 80)
  std::string color = "auto";  // --color auto|always|never
};

struct ParsedCommand {
  std::optional<CommandOptions> options;  // run with these
  std::string text;                       // --help text, or the usage error
  int exit_status = 0;                    // when !options
};

// argv[0] is "backtest".
ParsedCommand parse_backtest_options(int argc, const char* const* argv);

// --target "3/1d", "1 per 12h" -> alerts per duration.
std::optional<std::pair<uint64_t, int64_t>> parse_target(const std::string& text);

}  // namespace swthrottle::backtest
