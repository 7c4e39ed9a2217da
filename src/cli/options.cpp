#include "cli/options.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/whole_number.h"
#include "config/duration.h"
#include "config/http_url.h"
#include "util/suggest.h"

namespace swthrottle::cli {

namespace {

// The names of `values` (their to_string()), for CLI::IsMember.
template <typename E>
std::vector<std::string> names_of(std::initializer_list<E> values) {
  std::vector<std::string> names;
  for (E e : values) names.emplace_back(to_string(e));
  return names;
}

// The value named `name`; CLI::IsMember(names_of(values)) has checked that one is.
template <typename E>
E value_named(const std::string& name, std::initializer_list<E> values) {
  for (E e : values)
    if (to_string(e) == name) return e;
  return *values.begin();
}

// "unknown option --folow (did you mean --follow?)": the first argument
// CLI11 could not place, with the closest long option name.
std::string unknown_option(const CLI::App& app, const std::string& arg) {
  std::string m = "unknown option " + arg;
  if (!arg.starts_with("--")) return m;
  const std::string name = arg.substr(0, arg.find('='));
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options())
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
  names.emplace_back("--help");
  names.emplace_back("--version");
  if (std::string best = closest_match(name, names); !best.empty()) m += " (did you mean " + best + "?)";
  return m;
}

// What --help and the checks need of options read as text first.
struct RawOptions {
  std::string time, mode, format = "text", max_line = "1M", state_wait = "1m", stats_format = "text";
  CLI::Option* exec = nullptr;
};

void describe_program(CLI::App& app) {
  app.name("swthrottle");
  app.description(
      "swthrottle: match log lines into events with RE2, count them in sliding windows,\n"
      "and raise an alert once a count passes \"Y per X\", or thin a flood out to at most Y per X.");
  app.set_version_flag("--version", std::string("swthrottle ") + SWTHROTTLE_VERSION);
  app.get_formatter()->column_width(30);
  app.footer(
      "Exit status: 0 done; 1 with --exit-code when an alert was written; 2 usage, rules,\n"
      "  input or output error, or the --state save at exit failed;\n"
      "  3 an exec command gave up after its retries; 4 the --state lock stayed taken by\n"
      "  another run for --state-wait, or SIGINT/SIGTERM while waiting.\n"
      "  When several apply: 2, then 3, then 1. The same after SIGINT/SIGTERM.\n"
      "Signals: INT, TERM: write pending summaries (with --state: save them), exit as above;\n"
      "  HUP: reload the rules files; USR1: print the statistics to stderr and go on.\n"
      "Examples:\n"
      "  tail -F /var/log/app.log | swthrottle -r rules.toml\n"
      "  swthrottle -r rules.toml --time log --format json app.log > records.json\n"
      "  swthrottle backtest -r rules.toml --sweep auto app.log   (thresholds from history: backtest --help)\n"
      "See swthrottle(1) for the rules file format.");
}

// The options, group by group, in the order --help lists them.
void add_input_options(CLI::App& app, Options& o, RawOptions& raw) {
  app.add_option("FILE", o.inputs, "Log files to read (none or \"-\": standard input)")
      ->type_name("FILE ...")
      ->group("Input");
  app.add_flag("-f,--follow", o.follow,
               "Keep reading files as they grow, like tail -F; a quoted glob also follows files created later")
      ->group("Input");
  app.add_flag("--from-start", o.from_start, "With --follow: read existing content first")->group("Input");
  app.add_option("--input", o.input,
                 "How lines are read, over the rules' format; journal: journalctl -o json\n"
                 "(time from __REALTIME_TIMESTAMP, byte-array fields as bytes);\n"
                 "cri, docker: container logs (the envelope's time and stream)")
      ->type_name("text|json|auto|journal|cri|docker")
      ->check(CLI::IsMember({"text", "json", "auto", "journal", "cri", "docker"}).description(""))
      ->group("Input");
  app.add_option("--max-line", raw.max_line, "Cut longer lines for matching (default 1M)")
      ->type_name("SIZE")
      ->group("Input");
  app.add_option("-j,--threads", o.threads, "Matching threads, 0 to 1024 (default 0: all cores)")
      ->type_name("N")
      ->check(whole_number(0, 1024))
      ->group("Input");
}

void add_rule_options(CLI::App& app, Options& o, RawOptions& raw) {
  app.add_option("-r,--rule", o.rule_files,
                 "Rules file (TOML), or a directory: its *.toml files in name order; repeat -r for several")
      ->type_name("FILE")
      ->required()
      ->allow_extra_args(false)
      ->group("Rules");
  app.add_flag("--check", o.check,
               "Validate the rules, print a summary, exit 0 (2 when invalid); with FILEs, also what the timestamp\n"
               "setting reads of their first 1000 lines (exit 2 when none, with time = log)")
      ->group("Rules");
  app.add_option("--time", raw.time,
                 "Time source, overrides [settings]; default: log for replayed files whose\n"
                 "first lines carry timestamps, else arrival (stdin, --follow)")
      ->type_name("arrival|log")
      ->check(CLI::IsMember(names_of({config::TimeSource::Arrival, config::TimeSource::Log})).description(""))
      ->group("Rules");
  app.add_option("--mode", raw.mode, "Window mode for rules without their own")
      ->type_name("accurate|efficient")
      ->check(CLI::IsMember(names_of({config::Mode::Accurate, config::Mode::Efficient})).description(""))
      ->group("Rules");
}

void add_output_options(CLI::App& app, Options& o, RawOptions& raw) {
  app.add_option("--format", raw.format, "Output format (default text)")
      ->type_name("text|json")
      ->check(CLI::IsMember(names_of({output::Format::Text, output::Format::Json})).description(""))
      ->group("Output");
  app.add_flag("--passthrough", o.passthrough, "Write every line unless a throttle rule suppressed it")
      ->group("Output");
  app.add_flag("--explain", o.explain, "For every matching line: events, captures, key, counts, decision")
      ->group("Output");
  app.add_flag("--stats", o.stats, "Print per-rule statistics to stderr at exit")->group("Output");
  app.add_option("--stats-format", raw.stats_format, "--stats and SIGUSR1 as text (default) or one JSON object")
      ->type_name("text|json")
      ->check(CLI::IsMember({"text", "json"}).description(""))
      ->group("Output");
  app.add_flag("--exit-code", o.exit_code, "Exit 1 if any alert was written")->group("Output");
  app.add_option("--metrics-file", o.metrics_file,
                 "Write Prometheus metrics to FILE every few seconds and at exit (node_exporter's textfile "
                 "collector)")
      ->type_name("FILE")
      ->group("Output");
  app.add_option("--metrics-listen", o.metrics_listen, "Serve /metrics and /healthz over HTTP on ADDR:PORT")
      ->type_name("ADDR:PORT")
      ->group("Output");
}

void add_action_options(CLI::App& app, Options& o, RawOptions& raw) {
  raw.exec = app.add_option("--exec", o.exec, "Run CMD once per record")->type_name("CMD")->group("Actions");
  app.add_option(
         "--exec-jobs", o.exec_jobs,
         "Commands at once, " + std::to_string(kMinExecJobs) + " to " + std::to_string(kMaxExecJobs) + " (default 4)")
      ->type_name("N")
      // A number of any size passes: the range is said below, as it always was.
      ->check(whole_number(INT32_MIN, INT32_MAX))
      ->group("Actions");
  app.add_option("--exec-timeout", o.exec_timeout, "Kill a command after DUR (default 30s)")
      ->type_name("DUR")
      ->group("Actions");
  app.add_option("--webhook", o.webhooks,
                 "POST every alert, resolved and summary record (JSON) to URL, retried until delivered;\n"
                 "repeat for several")
      ->type_name("URL")
      ->allow_extra_args(false)
      ->group("Actions");
  app.add_option("--alertmanager", o.alertmanagers,
                 "Send alerts and resolves to the Alertmanager at URL (/api/v2/alerts); repeat for an HA pair")
      ->type_name("URL")
      ->allow_extra_args(false)
      ->group("Actions");
}

void add_state_options(CLI::App& app, Options& o, RawOptions& raw) {
  app.add_option("--state", o.state_file, "Load windows at start, save them at exit")
      ->type_name("FILE")
      ->group("State");
  app.add_option("--state-interval", o.state_interval, "With --state: also save every DUR while running (default 5s)")
      ->type_name("DUR")
      ->group("State");
  app.add_option("--state-wait", raw.state_wait,
                 "With --state: wait DUR for another run's lock, then exit 4 (default 1m; 0, forever)")
      ->type_name("DUR")
      ->group("State");
}

void add_fleet_options(CLI::App& app, Options& o) {
  app.add_option("--fleet-redis", o.fleet_redis, "The fleet's Redis, over [fleet] redis")
      ->type_name("URL")
      ->group("Fleet");
  app.add_option("--fleet-namespace", o.fleet_namespace, "Fleet namespace, over [fleet] (a replay: its own)")
      ->type_name("NAME")
      ->group("Fleet");
  app.add_option("--fleet-host", o.fleet_host, "This host's name in the fleet (default: the host name)")
      ->type_name("NAME")
      ->group("Fleet");
}

// The values CLI11 cannot check, into `o`: "" or the error to print.
std::string take_values(Options& o, const RawOptions& raw) {
  if (!raw.time.empty()) o.time = value_named(raw.time, {config::TimeSource::Arrival, config::TimeSource::Log});
  if (!raw.mode.empty()) o.mode = value_named(raw.mode, {config::Mode::Accurate, config::Mode::Efficient});
  o.format = value_named(raw.format, {output::Format::Text, output::Format::Json});
  o.stats_json = raw.stats_format == "json";
  auto size = parse_size(raw.max_line);
  if (!size) {
    return "swthrottle: --max-line: invalid size \"" + raw.max_line + "\" (e.g. 4096, 64K, 1M)\n";
  }
  o.max_line = *size;
  for (const auto* urls : {&o.webhooks, &o.alertmanagers}) {
    for (const std::string& u : *urls) {
      if (std::string why = config::http_url_problem(u); !why.empty()) {
        return std::string("swthrottle: ") + (urls == &o.webhooks ? "--webhook" : "--alertmanager") + ": " + why + "\n";
      }
    }
  }
  // Each job is a thread (output/exec_pool.h): 100000 of them ran the
  // process out of threads. More than a few hundred commands at once is
  // rather a fork bomb than a throughput.
  if (o.exec_jobs < kMinExecJobs || o.exec_jobs > kMaxExecJobs) {
    return "swthrottle: --exec-jobs " + std::to_string(o.exec_jobs) + ": must be " + std::to_string(kMinExecJobs) +
           " to " + std::to_string(kMaxExecJobs) + "\n";
  }
  // An empty command is as much an error as one of blanks (which
  // output::split_command() rejects at start), not a --exec left out.
  if (raw.exec->count() > 0 && o.exec.find_first_not_of(" \t\n") == std::string::npos) {
    return "swthrottle: --exec: empty command\n";
  }
  if (auto d = config::parse_duration(o.exec_timeout); !d) {
    return "swthrottle: --exec-timeout: " + d.error().what + "\n";
  }
  if (auto d = config::parse_duration(o.state_interval); !d) {
    return "swthrottle: --state-interval: " + d.error().what + "\n";
  }
  if (auto w = parse_state_wait(raw.state_wait); !w) {
    return "swthrottle: --state-wait: invalid duration \"" + raw.state_wait + "\" (e.g. 0, 200ms, 1m, forever)\n";
  } else {
    o.state_wait_ms = *w;
  }
  return {};
}

}  // namespace

std::string subcommand_meant(std::string_view arg) {
  if (arg.empty() || arg.front() == '-') return {};
  const std::vector<std::string> names(std::begin(kSubcommands), std::end(kSubcommands));
  const std::string best = closest_match(arg, names);
  return best == arg ? std::string() : best;
}

std::optional<int64_t> parse_state_wait(const std::string& text) {
  if (text == "0") return 0;
  if (text == "forever") return -1;
  auto d = config::parse_duration(text);
  if (!d) return std::nullopt;
  return *d;
}

std::optional<std::size_t> parse_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 15) return std::nullopt;
  std::size_t n = std::stoull(text.substr(0, digits));
  const std::string unit = text.substr(digits);
  std::size_t mul = 1;
  if (unit == "" || unit == "B") mul = 1;
  else if (unit == "K" || unit == "k" || unit == "KiB") mul = std::size_t{1} << 10;
  else if (unit == "M" || unit == "MiB") mul = std::size_t{1} << 20;
  else if (unit == "G" || unit == "GiB") mul = std::size_t{1} << 30;
  else return std::nullopt;
  if (n == 0) return std::nullopt;
  return n * mul;
}

Parsed parse_options(int argc, const char* const* argv) {
  Options o;
  RawOptions raw;
  CLI::App app;
  describe_program(app);
  add_input_options(app, o, raw);
  add_rule_options(app, o, raw);
  add_output_options(app, o, raw);
  add_action_options(app, o, raw);
  add_state_options(app, o, raw);
  add_fleet_options(app, o);

  Parsed p;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    p.text = app.help();
    return p;
  } catch (const CLI::CallForVersion&) {
    p.text = std::string("swthrottle ") + SWTHROTTLE_VERSION + "\n";
    return p;
  } catch (const CLI::ParseError& e) {
    // An unknown option first: it may be why a required one looks missing.
    const std::vector<std::string> extra = app.remaining();
    const std::string what = !extra.empty() && extra[0].starts_with("-") ? unknown_option(app, extra[0]) : e.what();
    p.text = "swthrottle: " + what + "\nTry 'swthrottle --help' for more information.\n";
    p.exit_status = 2;
    return p;
  }
  if (std::string error = take_values(o, raw); !error.empty()) {
    p.text = error;
    p.exit_status = 2;
    return p;
  }
  p.options = std::move(o);
  return p;
}

}  // namespace swthrottle::cli
