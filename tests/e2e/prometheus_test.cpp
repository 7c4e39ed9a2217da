// A real Prometheus scrapes a MetricsServer (and the binary's
// --metrics-listen): the names, labels and values of
// prometheus_text() survive Prometheus's own parser, and a query finds them.
#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "metrics/metrics_server.h"
#include "support/process.h"
#include "support/prometheus_server.h"
#include "support/temp_dir.h"

using swthrottle::metrics::MetricsServer;
using swthrottle::metrics::RuleCounters;
using swthrottle::metrics::Snapshot;
using namespace std::chrono_literals;

TEST_CASE(
    "prometheus: a real Prometheus scrapes /metrics: swthrottle_rule_alerts_total comes back with its rule label") {
  Snapshot s;
  s.started_ms = 1'764'130'000'000;
  s.wall_ms = s.started_ms + 5'000;
  s.ready = true;
  RuleCounters r;
  r.rule = "ssh \"brute\"";  // an escaped quote must come back as a quote
  r.kind = "alert";
  r.counts.alerts = 7;
  s.rules = {r};
  auto started = MetricsServer::start(
      "127.0.0.1:0", [s] { return s; }, 30'000);
  if (!started) FAIL("MetricsServer::start: " << started.error().str());
  const std::unique_ptr<MetricsServer> server = std::move(*started);

  swthrottle::test::PrometheusServer prometheus("127.0.0.1:" + std::to_string(server->port()));

  // Bounded retries on the condition "the query has a result": the first
  // scrape comes within a scrape interval (1 s) of the start.
  nlohmann::json result;
  const bool found = swthrottle::test::poll_until(
      [&] {
        const nlohmann::json reply = nlohmann::json::parse(prometheus.query("swthrottle_rule_alerts_total"));
        if (reply.value("status", "") != "success") return false;
        result = reply["data"]["result"];
        return !result.empty();
      },
      20s);
  INFO("prometheus log: " << prometheus.log_tail());
  REQUIRE(found);
  REQUIRE(result.size() == 1);
  MESSAGE("Prometheus returned: " << result.dump());
  CHECK(result[0]["metric"]["__name__"] == "swthrottle_rule_alerts_total");
  CHECK(result[0]["metric"]["rule"] == "ssh \"brute\"");
  CHECK(result[0]["metric"]["kind"] == "alert");
  CHECK(result[0]["metric"]["job"] == "swthrottle");
  CHECK(result[0]["value"][1] == "7");

  // The target is up: Prometheus parsed the whole page, not only this family.
  const nlohmann::json up = nlohmann::json::parse(prometheus.query("up{job=\"swthrottle\"}"));
  REQUIRE(up["data"]["result"].size() == 1);
  CHECK(up["data"]["result"][0]["value"][1] == "1");
}

TEST_CASE("prometheus: a real Prometheus scrapes the binary's --metrics-listen and finds its rule's alerts") {
  const int port = swthrottle::test::free_port();
  swthrottle::test::TempDir dir;
  const std::string rules = dir.write(
      "rules.toml",
      "[settings]\ntime = \"log\"\ntimezone = \"UTC\"\n\n[[rule]]\nname = \"login-failures\"\nkind = \"alert\"\n"
      "threshold = \"3 per 1m\"\nkey = \"{user}\"\n  [[rule.event]]\n  name = \"failed\"\n"
      "  match = 'login failed user=(?P<user>\\w+)'\n");
  std::string log;
  for (int s = 0; s < 4; ++s) log += "2026-11-20T10:00:0" + std::to_string(s) + "Z login failed user=alice\n";
  const std::string path = dir.write("app.log", log);
  swthrottle::test::Process p =
      swthrottle::test::Process::spawn({SWTHROTTLE_BINARY, "-r", rules, "--follow", "--from-start", "--metrics-listen",
                                        "127.0.0.1:" + std::to_string(port), path});
  swthrottle::test::PrometheusServer prometheus("127.0.0.1:" + std::to_string(port));
  nlohmann::json result;
  const bool found = swthrottle::test::poll_until(
      [&] {
        const nlohmann::json reply =
            nlohmann::json::parse(prometheus.query("swthrottle_rule_alerts_total{rule=\"login-failures\"}"));
        if (reply.value("status", "") != "success") return false;
        result = reply["data"]["result"];
        return !result.empty() && result[0]["value"][1] == "1";
      },
      20s);
  INFO("prometheus log: " << prometheus.log_tail());
  REQUIRE(found);
  CHECK(result[0]["metric"]["kind"] == "alert");
  const nlohmann::json lines = nlohmann::json::parse(prometheus.query("swthrottle_input_lines_total"));
  REQUIRE(lines["data"]["result"].size() == 1);
  CHECK(lines["data"]["result"][0]["value"][1] == "4");
  p.send_signal(SIGTERM);
  CHECK(p.wait().exit_status == 0);
}
