#include "backtest/backtest_options.h"

#include <CLI/CLI.hpp>

#include "cli/whole_number.h"
#include "config/duration.h"

namespace swthrottle::backtest {

using cli::whole_number;

std::optional<std::pair<uint64_t, int64_t>> parse_target(const std::string& text) {
  auto t = config::parse_threshold(text);  // the same "N per DUR" / "N/DUR" as a threshold
  if (!t) return std::nullopt;
  return std::make_pair(t->count, t->window_ms);
}

ParsedCommand parse_backtest_options(int argc, const char* const* argv) {
  CommandOptions o;
  cli::Options& run = o.backtest.run;
  CLI::App app{
      "swthrottle backtest: replay history through the real engine and report, per rule, what it matched,\n"
      "how high its window count went, and the alerts it would have raised; try other thresholds and\n"
      "windows in the same pass (--sweep), or compare old rules with new ones (--against).",
      "swthrottle backtest"};
  app.get_formatter()->column_width(30);
  app.footer(
      "Needs time = \"log\" (or --time log): with log time a replay decides every line as the live run\n"
      "  that read it would have. Runs no exec actions and asks no fleet (fleet rules count on their own).\n"
      "Exit status: 0 done; 2 usage, rules or input error.\n"
      "Examples:\n"
      "  swthrottle backtest -r rules.toml /var/log/auth.log.1 /var/log/auth.log\n"
      "  swthrottle backtest -r rules.toml --sweep 5,10,20,50 --sweep-window 1m,5m auth.log\n"
      "  swthrottle backtest -r new.toml --against old.toml --format json auth.log\n"
      "See swthrottle(1), BACKTEST.");
  std::string format = "text", time, mode, max_line = "1M", sweep, sweep_window, target = "1/1d";
  int top = 5;
  app.add_option("FILE", run.inputs, "History files (none or \"-\": standard input)")->type_name("FILE ...");
  app.add_option("-r,--rule", run.rule_files,
                 "Rules file (TOML), or a directory: its *.toml files in name order; repeat -r for several")
      ->type_name("FILE")
      ->required()
      ->allow_extra_args(false);
  app.add_option("--only", o.backtest.only, "Report only this rule; repeat for several")
      ->type_name("NAME")
      ->allow_extra_args(false);
  app.add_option("--sweep", sweep, "Thresholds to try: 5,10,20,50, a range 5..50 (ten values), or auto")
      ->type_name("LIST");
  app.add_option("--sweep-window", sweep_window, "Windows to try, each with every threshold: 30s,1m,5m")
      ->type_name("LIST");
  app.add_option("--target", target, "The suggestion's alert budget (default 1/1d: one alert a day)")
      ->type_name("N/DUR");
  app.add_option("--against", o.backtest.against, "Old rules file: what changes if the new ones are deployed")
      ->type_name("FILE")
      ->allow_extra_args(false);
  app.add_option("--format", format, "Report format (default text)")
      ->type_name("text|json")
      ->check(CLI::IsMember({"text", "json"}).description(""));
  app.add_option("--html", o.html, "Also write a self-contained HTML report to FILE")->type_name("FILE");
  app.add_option("--top", top, "Keys in each top list (default 5)")->type_name("N")->check(whole_number(0, 1000));
  app.add_option("--width", o.width, "Columns of the text report (default: the terminal's, else 80)")
      ->type_name("N")
      ->check(whole_number(60, 400));
  app.add_option("--color", o.color, "Colour: auto (a terminal, and NO_COLOR unset), always, never")
      ->type_name("WHEN")
      ->check(CLI::IsMember({"auto", "always", "never"}).description(""));
  app.add_option("--time", time, "Time source, over [settings] (a backtest needs log)")
      ->type_name("log")
      ->check(CLI::IsMember({"log", "arrival"}).description(""));
  app.add_option("--mode", mode, "Window mode for rules without their own")
      ->type_name("accurate|efficient")
      ->check(CLI::IsMember({"accurate", "efficient"}).description(""));
  app.add_option("--input", run.input, "How lines are read, over the rules' format")
      ->type_name("text|json|auto|journal")
      ->check(CLI::IsMember({"text", "json", "auto", "journal"}).description(""));
  app.add_option("--max-line", max_line, "Cut longer lines for matching (default 1M)")->type_name("SIZE");
  app.add_option("-j,--threads", run.threads, "Matching threads, 0 to 1024 (default 0: all cores)")
      ->type_name("N")
      ->check(whole_number(0, 1024));

  ParsedCommand p;
  auto usage = [&](const std::string& what) {
    p.text = "swthrottle backtest: " + what + "\nTry 'swthrottle backtest --help' for more information.\n";
    p.exit_status = 2;
    return p;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    p.text = app.help();
    return p;
  } catch (const CLI::ParseError& e) {
    return usage(e.what());
  }
  if (time == "arrival") return usage("--time arrival: a backtest replays history by the time its lines carry (log)");
  if (!time.empty()) run.time = config::TimeSource::Log;
  if (mode == "accurate") run.mode = config::Mode::Accurate;
  if (mode == "efficient") run.mode = config::Mode::Efficient;
  auto size = cli::parse_size(max_line);
  if (!size) return usage("--max-line: invalid size \"" + max_line + "\" (e.g. 4096, 64K, 1M)");
  run.max_line = *size;
  auto sw = parse_sweep(sweep, sweep_window);
  if (!sw) return usage(sw.error().what);
  o.backtest.sweep = std::move(*sw);
  auto tg = parse_target(target);
  if (!tg) return usage("--target: \"" + target + "\" is not N/DURATION (e.g. 1/1d, 3 per 12h)");
  o.backtest.target_alerts = tg->first;
  o.backtest.target_ms = tg->second;
  o.backtest.top = static_cast<std::size_t>(top);
  o.json = format == "json";
  p.options = std::move(o);
  return p;
}

}  // namespace swthrottle::backtest
