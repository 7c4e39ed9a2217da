// What the fleet tests that run several swthrottle processes, the "hosts",
// share: their logs, their rules file, running them to their end or
// feeding them over time, and reading their --stats.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace swthrottle::test::fleet {

// Lines of one host: n lines of `what`, stamped from second `from` on, 10 ms
// apart (n=0, n=1, ... after it, from `first` on).
inline std::string host_log(int n, const std::string& what, int from = 0, int first = 0) {
  std::string log;
  char stamp[64];
  for (int i = first; i < first + n; ++i) {
    const int ms = from * 1000 + i * 10;
    std::snprintf(stamp, sizeof stamp, "2026-11-25T%02d:%02d:%02d.%03dZ", 10 + ms / 3'600'000, ms / 60000 % 60,
                  ms / 1000 % 60, ms % 1000);
    log += std::string(stamp) + " " + what + " n=" + std::to_string(i) + "\n";
  }
  return log;
}

// A rules file with time = "log" and a [fleet] on `redis_url`, namespace "test".
inline std::string rules_file(const TempDir& dir, const std::string& redis_url, const std::string& rules,
                              const std::string& fleet_extra = "") {
  return dir.write("rules.toml", "[settings]\ntime = \"log\"\n\n[fleet]\nredis = \"" + redis_url +
                                     "\"\nnamespace = \"test\"\n" + fleet_extra + "\n" + rules);
}

// One swthrottle per host, all on `rules`, --stats, --fleet-host hN.
inline std::vector<Process> spawn_hosts(std::size_t n, const std::string& rules,
                                        const std::vector<std::string>& extra = {}, const EnvAdditions& env = {}) {
  std::vector<Process> hosts;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::string> argv{SWTHROTTLE_BINARY, "-r", rules, "--stats", "--fleet-host", "h" + std::to_string(i)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    hosts.push_back(Process::spawn(argv, env));
  }
  return hosts;
}

// Closes every host's stdin and waits for all; each must exit 0.
inline std::vector<RunResult> finish_hosts(std::vector<Process>& hosts) {
  for (auto& h : hosts) h.close_stdin();
  std::vector<RunResult> results;
  for (auto& h : hosts) {
    results.push_back(h.wait());
    REQUIRE_MESSAGE(results.back().exit_status == 0, results.back().err);
  }
  return results;
}

// Runs one swthrottle per log at once, all against `rules`, and waits for all.
inline std::vector<RunResult> run_hosts(const std::string& rules, const std::vector<std::string>& logs,
                                        const std::vector<std::string>& extra = {}) {
  std::vector<Process> hosts = spawn_hosts(logs.size(), rules, extra);
  for (std::size_t i = 0; i < logs.size(); ++i) REQUIRE(hosts[i].write_stdin(logs[i]));
  return finish_hosts(hosts);
}

inline int count_lines(const std::string& s, const std::string& needle) {
  int n = 0;
  for (std::size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

// A number after `name ` in a stats line that starts with `prefix`.
inline uint64_t stat(const std::string& err, const std::string& prefix, const std::string& name) {
  const auto line_at = err.find(prefix);
  REQUIRE_MESSAGE(line_at != std::string::npos, err);
  const std::string line = err.substr(line_at, err.find('\n', line_at) - line_at);
  std::smatch m;
  REQUIRE_MESSAGE(std::regex_search(line, m, std::regex(" " + name + " (\\d+)")), line);
  return std::stoull(m[1]);
}

}  // namespace swthrottle::test::fleet
