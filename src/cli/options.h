// The command line (DESIGN.md §6) -> an Options value. Pure: tested with argv arrays.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/rules.h"
#include "output/writer.h"

namespace swthrottle::cli {

struct Options {
  std::vector<std::string> rule_files;
  std::vector<std::string> inputs;  // empty: standard input; "-" is standard input too
  bool follow = false;
  bool from_start = false;
  std::optional<config::TimeSource> time;
  std::optional<config::Mode> mode;
  // --input: "text", "json" or "auto" overrides every input's `format`;
  // "journal" is json with timestamp = { field = "__REALTIME_TIMESTAMP" }
  // and byte-array fields read as bytes. "": as the rules say.
  std::string input;
  output::Format format = output::Format::Text;
  bool passthrough = false;
  std::string exec;
  int exec_jobs = 4;
  std::string exec_timeout = "30s";
  std::string state_file;
  std::string state_interval = "5s";  // --state saves this often while running
  int64_t state_wait_ms = 60000;      // --state-wait: for another run's lock; 0: not at all, -1: no bound
  int threads = 0;                    // 0: all cores
  bool check = false;
  bool explain = false;
  bool stats = false;
  bool stats_json = false;  // --stats-format json: --stats and SIGUSR1 as one JSON object
  bool exit_code = false;
  std::size_t max_line = 1 << 20;
  // Over [fleet]'s redis, namespace and host ("": as the rules say).
  std::string fleet_redis;
  std::string fleet_namespace;
  std::string fleet_host;
  // --webhook, --alertmanager: every rule's records go there too (DELIVERY).
  std::vector<std::string> webhooks;
  std::vector<std::string> alertmanagers;
  // Metrics (METRICS): a file for node_exporter's textfile collector, and
  // an HTTP listener for /metrics and /healthz ("": none).
  std::string metrics_file;
  std::string metrics_listen;
};

// What parsing the command line asks for.
struct Parsed {
  std::optional<Options> options;  // run with these
  std::string text;                // --help / --version text, or the usage error
  int exit_status = 0;             // when !options: exit with this after printing text
};

Parsed parse_options(int argc, const char* const* argv);

// The subcommands argv[1] may name ("backtest", "help"), as git has them.
inline constexpr const char* kSubcommands[] = {"backtest", "help"};

// The subcommand that a first argument which is neither an option nor one
// of them was likely meant to be ("backtst" -> "backtest"), or "". The
// caller asks only about a name no file has: a file of that name is input.
std::string subcommand_meant(std::string_view arg);

// Exit statuses (DESIGN.md §6).
inline constexpr int kExitAlert = 1;       // --exit-code and an alert was written
inline constexpr int kExitError = 2;       // usage, rules, input or output error, or the last --state save failed
inline constexpr int kExitExecGaveUp = 3;  // an exec command failed after its retries
inline constexpr int kExitStateBusy = 4;   // --state: another run kept the lock past --state-wait

// --exec-jobs: commands running at once, one thread each.
inline constexpr int kMinExecJobs = 1;
inline constexpr int kMaxExecJobs = 256;

// --state-wait: "0" (do not wait), "forever" (-1) or a duration -> ms.
std::optional<int64_t> parse_state_wait(const std::string& text);

// "1M", "64K", "512", "2G" -> bytes. nullopt when malformed or zero.
std::optional<std::size_t> parse_size(const std::string& text);

}  // namespace swthrottle::cli
