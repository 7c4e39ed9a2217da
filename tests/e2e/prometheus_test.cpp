// A real Prometheus scrapes a MetricsServer: the names, labels and values of
// prometheus_text() survive Prometheus's own parser, and a query finds them.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "metrics/metrics_server.h"
#include "support/process.h"
#include "support/prometheus_server.h"

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
  r.alerts = 7;
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
