// Metrics and systemd end to end (man page: METRICS, SYSTEMD): the real
// binary's --metrics-file (checked by promtool), --stats in JSON, and what
// it tells a notify socket: READY, STATUS, RELOADING, STOPPING, and watchdog
// pings that stop while a decider is stuck with lines waiting.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/http_receiver.h"
#include "support/notify_socket.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/test_daemon.h"

namespace {

using swthrottle::test::append_file;
using swthrottle::test::HttpReceiver;
using swthrottle::test::NotifySocket;
using swthrottle::test::Process;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;
using json = nlohmann::json;
using namespace std::chrono_literals;

const std::string kBinary = SWTHROTTLE_BINARY;

std::string rules_text(const std::string& extra = "") {
  return "[settings]\ntime = \"log\"\ntimezone = \"UTC\"\n" + extra +
         "\n[[rule]]\nname = \"login-failures\"\nkind = \"alert\"\nthreshold = \"3 per 1m\"\nkey = \"{user}\"\n"
         "  [[rule.event]]\n  name = \"failed\"\n  match = 'login failed user=(?P<user>\\w+)'\n";
}

std::string failures(const std::string& user, int minute, int n = 4) {
  std::string log;
  for (int s = 0; s < n; ++s)
    log += "2026-11-20T10:" + std::string(minute < 10 ? "0" : "") + std::to_string(minute) + ":0" + std::to_string(s) +
           "Z login failed user=" + user + "\n";
  return log;
}

// The messages on the socket until `pred` holds for one (returned), at most `within`.
std::optional<std::string> until(NotifySocket& s, const std::function<bool(const std::string&)>& pred,
                                 std::vector<std::string>& seen, std::chrono::milliseconds within = 15s) {
  const auto end = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < end) {
    auto m = s.receive(200ms);
    if (!m) continue;
    seen.push_back(*m);
    if (pred(*m)) return m;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("metrics: --metrics-file holds the run's figures at exit, and promtool accepts it") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text());
  const std::string log = dir.write("app.log", failures("alice", 0) + failures("bob", 2, 2));
  const std::string prom = dir.file("swthrottle.prom");
  RunResult r = swthrottle::test::run_swthrottle({"-r", rules, "--metrics-file", prom, log});
  CHECK(r.exit_status == 0);
  const std::string text = swthrottle::test::read_file(prom);
  CHECK(text.find("swthrottle_lines_read_total 6\n") != std::string::npos);
  CHECK(text.find("swthrottle_rule_alerts_total{rule=\"login-failures\",kind=\"alert\"} 1\n") != std::string::npos);
  CHECK(text.find("swthrottle_rule_keys_created_total{rule=\"login-failures\",kind=\"alert\"} 2\n") !=
        std::string::npos);
  CHECK(text.find("swthrottle_input_lines_total{input=\"" + log + "\"} 6\n") != std::string::npos);
  CHECK(text.find("swthrottle_ready 1\n") != std::string::npos);
  // No fleet, no delivery: their families are left out.
  CHECK(text.find("swthrottle_fleet_") == std::string::npos);
  CHECK(text.find("swthrottle_delivery_") == std::string::npos);
  RunResult check = swthrottle::test::run_process({"/usr/bin/promtool", "check", "metrics"}, text);
  CHECK_MESSAGE(check.exit_status == 0, check.out << check.err);
}

TEST_CASE("metrics: --stats-format json prints one JSON object on stderr, apart from the records") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text());
  const std::string log = dir.write("app.log", failures("alice", 0));
  RunResult r =
      swthrottle::test::run_swthrottle({"-r", rules, "--format", "json", "--stats", "--stats-format", "json", log});
  CHECK(r.exit_status == 0);
  // stdout: the records only.
  CHECK(json::parse(r.out.substr(0, r.out.find('\n')))["type"] == "alert");
  const json stats = json::parse(r.err);
  CHECK(stats["lines"]["read"] == 4);
  REQUIRE(stats["rules"].is_array());
  CHECK(stats["rules"][0]["rule"] == "login-failures");
  CHECK(stats["rules"][0]["alerts"] == 1);
}

TEST_CASE("systemd: READY, STATUS and watchdog pings, RELOADING and READY around SIGHUP, then STOPPING") {
  NotifySocket sock;
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text());
  const std::string log = dir.write("app.log", failures("alice", 0));
  Process p = Process::spawn({kBinary, "-r", rules, "--follow", "--from-start", log},
                             {{"NOTIFY_SOCKET", sock.path()}, {"WATCHDOG_USEC", "1000000"}});
  std::vector<std::string> seen;
  REQUIRE(until(
      sock, [](const std::string& m) { return m == "READY=1"; }, seen));
  REQUIRE(until(
      sock, [](const std::string& m) { return m.starts_with("STATUS="); }, seen));
  REQUIRE(until(
      sock, [](const std::string& m) { return m == "WATCHDOG=1"; }, seen));
  // An idle log is healthy: the pings go on.
  REQUIRE(until(
      sock, [](const std::string& m) { return m == "WATCHDOG=1"; }, seen, 3s));
  p.send_signal(SIGHUP);
  REQUIRE(until(
      sock, [](const std::string& m) { return m.starts_with("RELOADING=1\nMONOTONIC_USEC="); }, seen));
  REQUIRE(until(
      sock, [](const std::string& m) { return m == "READY=1"; }, seen));
  p.send_signal(SIGTERM);
  REQUIRE(until(
      sock, [](const std::string& m) { return m == "STOPPING=1"; }, seen));
  CHECK(p.wait().exit_status == 0);
  // The first message of all was READY=1.
  CHECK(seen.front() == "READY=1");
}

TEST_CASE("systemd: a decider stuck with lines waiting stops the watchdog pings") {
  // The decider blocks on a full outbox (one record at most) while the
  // receiver is down: lines appended after that wait, unread.
  HttpReceiver hook;
  hook.stop();
  NotifySocket sock;
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text("\n[delivery]\noutbox_max = 1\ndrain = \"1s\"\n"));
  const std::string log = dir.write("app.log", failures("alice", 0));
  Process p = Process::spawn({kBinary, "-r", rules, "--follow", "--from-start", "--state", dir.file("state.json"),
                              "--webhook", hook.url("/hook"), log},
                             {{"NOTIFY_SOCKET", sock.path()}, {"WATCHDOG_USEC", "1000000"}});
  std::vector<std::string> seen;
  REQUIRE(until(
      sock, [](const std::string& m) { return m == "WATCHDOG=1"; }, seen));
  // A second alert: its record finds the outbox full, and the decider waits.
  append_file(log, failures("bob", 2));
  // Within a watchdog interval of the stall the pings stop: none for 2.5 s,
  // while lines keep coming that nobody reads.
  bool stopped = false;
  const auto end = std::chrono::steady_clock::now() + 15s;
  auto last_ping = std::chrono::steady_clock::now();
  int minute = 4;
  while (std::chrono::steady_clock::now() < end) {
    if (minute < 58) append_file(log, failures("carol", minute++, 1));
    auto m = sock.receive(200ms);
    if (m && *m == "WATCHDOG=1") last_ping = std::chrono::steady_clock::now();
    if (std::chrono::steady_clock::now() - last_ping > 2500ms) {
      stopped = true;
      break;
    }
  }
  CHECK(stopped);
  // SIGTERM still ends it: a stop does not wait for room.
  p.send_signal(SIGTERM);
  const RunResult r = p.wait(30s);
  CHECK(!r.timed_out);
}

TEST_CASE("metrics: --metrics-listen serves /metrics and /healthz while following, with the input's lag") {
  const int port = swthrottle::test::free_port();
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text());
  const std::string log = dir.write("app.log", failures("alice", 0));
  Process p = Process::spawn(
      {kBinary, "-r", rules, "--follow", "--from-start", "--metrics-listen", "127.0.0.1:" + std::to_string(port), log});
  std::string body;
  REQUIRE(swthrottle::test::poll_until(
      [&] {
        try {
          const auto r = swthrottle::test::http_get(port, "/metrics");
          body = r.body;
          return r.status == 200 &&
                 body.find("swthrottle_input_lines_total{input=\"" + log + "\"} 4") != std::string::npos;
        } catch (const std::exception&) {
          return false;
        }
      },
      15s));
  CHECK(body.find("swthrottle_rule_alerts_total{rule=\"login-failures\",kind=\"alert\"} 1") != std::string::npos);
  // The stamps are of 2026-11-20: the log is days behind the wall clock.
  CHECK(body.find("swthrottle_input_log_time_lag_seconds{input=\"" + log + "\"} ") != std::string::npos);
  CHECK(body.find("swthrottle_input_behind_bytes{input=\"" + log + "\"} 0") != std::string::npos);
  const auto health = swthrottle::test::http_get(port, "/healthz");
  CHECK(health.status == 200);
  p.send_signal(SIGTERM);
  CHECK(p.wait().exit_status == 0);
}
