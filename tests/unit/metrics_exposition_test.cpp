// The Prometheus text and the JSON of a Snapshot, and /healthz's verdict.
// The exact texts are written out by hand from exposition.h's table.
#include <doctest/doctest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "metrics/exposition.h"
#include "metrics/health.h"
#include "metrics/snapshot.h"
#include "support/process.h"

using swthrottle::delivery::DestinationStats;
using swthrottle::delivery::OutboxStats;
using swthrottle::metrics::FleetState;
using swthrottle::metrics::health_of;
using swthrottle::metrics::InputState;
using swthrottle::metrics::prometheus_text;
using swthrottle::metrics::RuleCounters;
using swthrottle::metrics::Snapshot;
using swthrottle::metrics::stats_json;
using swthrottle::output::ExecStats;

namespace {

constexpr int64_t kNow = 1'764'130'505'123;  // 2025-11-26T04:15:05.123Z

FleetState degraded_fleet(bool degraded) {
  FleetState f;
  f.counts.degraded_now = degraded;
  return f;
}

// No rule, input, destination, exec, outbox or fleet: only the families
// that are always there.
Snapshot bare() {
  Snapshot s;
  s.wall_ms = kNow;
  s.started_ms = kNow - 60'000;
  s.ready = true;
  s.counts.lines = 10;
  s.counts.matched = 4;
  s.counts.written = 3;
  s.reloads = 1;
  return s;
}

// Every family has a sample: for promtool and the JSON.
Snapshot full() {
  Snapshot s = bare();
  s.counts.truncated = 1;
  s.counts.untimed = 2;
  s.counts.no_timestamp = 2;
  s.counts.untrusted = 1;
  s.counts.invalid_json = 1;
  s.counts.json_repaired = 3;
  s.counts.cut = 1;
  s.reload_failures = 1;
  RuleCounters a;
  a.rule = "ssh-brute";
  a.kind = "alert";
  a.counts.lines = 7;
  a.counts.events = 7;
  a.counts.alerts = 2;
  a.counts.resolved = 1;
  a.counts.keys = 3;
  a.keys_now = 2;
  a.counts.evictions = 1;
  a.counts.late = 1;
  a.counts.untimed = 1;
  RuleCounters t;
  t.rule = "noisy";
  t.kind = "throttle";
  t.counts.lines = 9;
  t.counts.passed = 3;
  t.counts.suppressed = 6;
  t.counts.summaries = 1;
  s.rules = {a, t};
  InputState f;
  f.input = "/var/log/auth.log";
  f.lines = 10;
  f.bytes_behind = 4096;
  f.newest_log_ms = kNow - 2'500;
  f.last_progress_ms = kNow - 1'000;
  InputState in;
  in.input = "-";
  s.inputs = {f, in};
  ExecStats x;
  x.started = 2;
  x.succeeded = 1;
  x.failed_attempts = 1;
  x.timed_out = 1;
  x.gave_up = 1;
  x.dropped = 7;
  x.not_run = 3;
  x.queued = 5;
  s.exec = x;
  DestinationStats d;
  d.label = "webhook http://127.0.0.1:9/hook";
  d.queued = 3;
  d.delivered = 2;
  d.attempts = 4;
  d.failed_attempts = 2;
  d.pending = 1;
  d.circuit_open = true;
  s.delivery.destinations = {d};
  OutboxStats o;
  o.pending = 1;
  s.delivery.outbox = o;
  FleetState fleet;
  fleet.counts.degraded_now = true;
  fleet.counts.asked = 5;
  fleet.counts.answered = 4;
  fleet.counts.unanswered = 1;
  fleet.counts.evicted = 42742;
  fleet.counts.failovers = 1;
  fleet.counts.unconfirmed = 17;
  s.fleet = fleet;
  return s;
}

constexpr const char* kBareText =
    "# HELP swthrottle_ready 1 once the rules are loaded and the inputs open, else 0.\n"
    "# TYPE swthrottle_ready gauge\n"
    "swthrottle_ready 1\n"
    "# HELP swthrottle_start_time_seconds When the process started, in seconds since the Unix epoch.\n"
    "# TYPE swthrottle_start_time_seconds gauge\n"
    "swthrottle_start_time_seconds 1764130445.123\n"
    "# HELP swthrottle_reloads_total Reloads of the rules (SIGHUP) that took effect.\n"
    "# TYPE swthrottle_reloads_total counter\n"
    "swthrottle_reloads_total 1\n"
    "# HELP swthrottle_reload_failures_total Reloads that failed, the old rules kept.\n"
    "# TYPE swthrottle_reload_failures_total counter\n"
    "swthrottle_reload_failures_total 0\n"
    "# HELP swthrottle_lines_read_total Lines read from all inputs.\n"
    "# TYPE swthrottle_lines_read_total counter\n"
    "swthrottle_lines_read_total 10\n"
    "# HELP swthrottle_lines_matched_total Lines that matched a rule.\n"
    "# TYPE swthrottle_lines_matched_total counter\n"
    "swthrottle_lines_matched_total 4\n"
    "# HELP swthrottle_lines_written_total Lines written to the output.\n"
    "# TYPE swthrottle_lines_written_total counter\n"
    "swthrottle_lines_written_total 3\n"
    "# HELP swthrottle_lines_truncated_total Lines cut at the line length limit.\n"
    "# TYPE swthrottle_lines_truncated_total counter\n"
    "swthrottle_lines_truncated_total 0\n"
    "# HELP swthrottle_lines_untimed_total Lines decided without a time of their own.\n"
    "# TYPE swthrottle_lines_untimed_total counter\n"
    "swthrottle_lines_untimed_total 0\n"
    "# HELP swthrottle_lines_no_timestamp_total Lines in which no timestamp was found.\n"
    "# TYPE swthrottle_lines_no_timestamp_total counter\n"
    "swthrottle_lines_no_timestamp_total 0\n"
    "# HELP swthrottle_lines_untrusted_total Lines whose timestamp was not trusted (too far from the others).\n"
    "# TYPE swthrottle_lines_untrusted_total counter\n"
    "swthrottle_lines_untrusted_total 0\n"
    "# HELP swthrottle_lines_invalid_json_total Lines of a JSON input that were not valid JSON.\n"
    "# TYPE swthrottle_lines_invalid_json_total counter\n"
    "swthrottle_lines_invalid_json_total 0\n"
    "# HELP swthrottle_lines_json_repaired_total Lines of a JSON input read leniently: bytes or escapes in a string "
    "that JSON does not allow.\n"
    "# TYPE swthrottle_lines_json_repaired_total counter\n"
    "swthrottle_lines_json_repaired_total 0\n"
    "# HELP swthrottle_events_cut_total Multi-line events cut at a size or line cap.\n"
    "# TYPE swthrottle_events_cut_total counter\n"
    "swthrottle_events_cut_total 0\n";

}  // namespace

TEST_CASE("metrics: prometheus_text: a bare snapshot has only the families that are always there, in order") {
  CHECK(prometheus_text(bare()) == kBareText);
}

TEST_CASE("metrics: prometheus_text: a rule and an input, labels escaped, the lag computed") {
  Snapshot s = bare();
  RuleCounters r;
  r.rule = "a\"b\\c\nd";  // a quote, a backslash and a line feed
  r.kind = "alert";
  r.counts.alerts = 7;
  r.keys_now = 2;
  s.rules = {r};
  InputState in;
  in.input = "/logs/\xff.log";  // not UTF-8: repaired to U+FFFD
  in.lines = 5;
  in.newest_log_ms = kNow - 1'500;
  s.inputs = {in};
  const std::string text = prometheus_text(s);

  CHECK(text.find(kBareText) == 0);
  const std::string rest = text.substr(std::string(kBareText).size());
  const std::string labels = "{rule=\"a\\\"b\\\\c\\nd\",kind=\"alert\"}";
  CHECK(rest.find("# HELP swthrottle_rule_alerts_total Alerts the rule raised.\n"
                  "# TYPE swthrottle_rule_alerts_total counter\n"
                  "swthrottle_rule_alerts_total" +
                  labels + " 7\n") != std::string::npos);
  CHECK(rest.find("# TYPE swthrottle_rule_keys gauge\nswthrottle_rule_keys" + labels + " 2\n") != std::string::npos);
  // Families in the table's order: lines, events, ..., evictions, then the inputs.
  CHECK(rest.find("swthrottle_rule_lines_total") < rest.find("swthrottle_rule_alerts_total"));
  CHECK(rest.find("swthrottle_rule_evictions_total") < rest.find("swthrottle_input_lines_total"));

  CHECK(rest.find("swthrottle_input_lines_total{input=\"/logs/\xEF\xBF\xBD.log\"} 5\n") != std::string::npos);
  CHECK(rest.find("# TYPE swthrottle_input_log_time_lag_seconds gauge\n"
                  "swthrottle_input_log_time_lag_seconds{input=\"/logs/\xEF\xBF\xBD.log\"} 1.5\n") !=
        std::string::npos);
  // Absent figures: no sample, and no HELP or TYPE either.
  CHECK(rest.find("swthrottle_input_behind_bytes") == std::string::npos);
  CHECK(rest.find("swthrottle_input_last_progress_timestamp_seconds") == std::string::npos);
  CHECK(rest.find("swthrottle_exec_") == std::string::npos);
  CHECK(rest.find("swthrottle_delivery_") == std::string::npos);
  CHECK(rest.find("swthrottle_outbox_") == std::string::npos);
  CHECK(rest.find("swthrottle_fleet_") == std::string::npos);
}

TEST_CASE("metrics: prometheus_text: seconds are exact decimals of the milliseconds") {
  Snapshot s = bare();
  InputState in;
  in.input = "x";
  in.newest_log_ms = kNow + 250;  // a stamp from the future: the lag is negative
  in.last_progress_ms = kNow;
  s.inputs = {in};
  const std::string text = prometheus_text(s);
  CHECK(text.find("swthrottle_input_log_time_lag_seconds{input=\"x\"} -0.25\n") != std::string::npos);
  CHECK(text.find("swthrottle_input_last_progress_timestamp_seconds{input=\"x\"} 1764130505.123\n") !=
        std::string::npos);
  s.started_ms = 2'000;
  CHECK(prometheus_text(s).find("swthrottle_start_time_seconds 2\n") != std::string::npos);
}

TEST_CASE("metrics: swthrottle_input_no_timestamp is 0 or 1 for every input, in the JSON stats too") {
  Snapshot s = bare();
  InputState quiet;
  quiet.input = "auth.log";
  quiet.no_timestamp = true;
  InputState stamped;
  stamped.input = "app.log";
  s.inputs = {quiet, stamped};
  const std::string text = prometheus_text(s);
  CHECK(text.find("# TYPE swthrottle_input_no_timestamp gauge\nswthrottle_input_no_timestamp{input=\"auth.log\"} "
                  "1\nswthrottle_input_no_timestamp{input=\"app.log\"} 0\n") != std::string::npos);
  const auto j = nlohmann::ordered_json::parse(stats_json(s));
  CHECK(j["inputs"][0]["no_timestamp"] == true);
  CHECK(j["inputs"][1]["no_timestamp"] == false);
}

TEST_CASE("metrics: prometheus_text: exec, delivery, outbox and fleet when present") {
  const std::string text = prometheus_text(full());
  CHECK(text.find("swthrottle_exec_gave_up_total 1\n") != std::string::npos);
  CHECK(text.find("# TYPE swthrottle_exec_dropped_total counter\nswthrottle_exec_dropped_total 7\n") !=
        std::string::npos);
  CHECK(text.find("# TYPE swthrottle_exec_not_run_total counter\nswthrottle_exec_not_run_total 3\n") !=
        std::string::npos);
  CHECK(text.find("# TYPE swthrottle_exec_queued gauge\nswthrottle_exec_queued 5\n") != std::string::npos);
  CHECK(text.find("swthrottle_delivery_circuit_open{destination=\"webhook http://127.0.0.1:9/hook\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("swthrottle_delivery_pending{destination=\"webhook http://127.0.0.1:9/hook\"} 1\n") !=
        std::string::npos);
  CHECK(text.find("swthrottle_outbox_pending 1\n") != std::string::npos);
  CHECK(text.find("swthrottle_fleet_degraded 1\n") != std::string::npos);
  CHECK(text.find("# TYPE swthrottle_fleet_evicted_keys_total counter\nswthrottle_fleet_evicted_keys_total 42742\n") !=
        std::string::npos);
  CHECK(text.find("swthrottle_fleet_failovers_total 1\n") != std::string::npos);
  CHECK(text.find("swthrottle_fleet_unconfirmed_total 17\n") != std::string::npos);
  CHECK(text.find("swthrottle_input_behind_bytes{input=\"/var/log/auth.log\"} 4096\n") != std::string::npos);
  CHECK(text.find("swthrottle_rule_suppressed_total{rule=\"noisy\",kind=\"throttle\"} 6\n") != std::string::npos);
  // The input without a log time or progress has its lines only.
  CHECK(text.find("swthrottle_input_lines_total{input=\"-\"} 0\n") != std::string::npos);
  CHECK(text.find("swthrottle_input_log_time_lag_seconds{input=\"-\"}") == std::string::npos);
}

TEST_CASE("metrics: prometheus_text: promtool check metrics accepts a full snapshot") {
  // Not skipped when promtool is missing: run_process fails to exec it and
  // the exit status is not 0.
  Snapshot s = full();
  s.rules[0].rule = "quote\" backslash\\ newline\n";
  const swthrottle::test::RunResult r =
      swthrottle::test::run_process({"/usr/bin/promtool", "check", "metrics"}, prometheus_text(s));
  INFO("promtool stdout: " << r.out);
  INFO("promtool stderr: " << r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_status == 0);
  CHECK(r.out.empty());  // no lint complaint either
}

TEST_CASE("metrics: stats_json: one JSON object with the same figures") {
  const std::string text = stats_json(full());
  CHECK(text.find('\n') == std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(text);
  CHECK(j["time"] == "2025-11-26T04:15:05.123Z");
  CHECK(j["started"] == "2025-11-26T04:14:05.123Z");
  CHECK(j["ready"] == true);
  CHECK(j["lines"]["read"] == 10);
  CHECK(j["lines"]["invalid_json"] == 1);
  CHECK(j["lines"]["json_repaired"] == 3);
  CHECK(j["events_cut"] == 1);
  REQUIRE(j["rules"].size() == 2);
  CHECK(j["rules"][0]["rule"] == "ssh-brute");
  CHECK(j["rules"][0]["alerts"] == 2);
  CHECK(j["rules"][0]["keys"] == 3);
  CHECK(j["rules"][0]["keys_now"] == 2);
  CHECK(j["rules"][1]["suppressed"] == 6);
  REQUIRE(j["inputs"].size() == 2);
  CHECK(j["inputs"][0]["bytes_behind"] == 4096);
  CHECK(j["inputs"][0]["log_time_lag_seconds"] == 2.5);
  CHECK(j["inputs"][0]["last_progress"] == "2025-11-26T04:15:04.123Z");
  CHECK_FALSE(j["inputs"][1].contains("bytes_behind"));
  CHECK_FALSE(j["inputs"][1].contains("log_time_lag_seconds"));
  CHECK(j["inputs"][1]["last_progress"].is_null());
  CHECK(j["exec"]["timed_out"] == 1);
  CHECK(j["exec"]["dropped"] == 7);
  CHECK(j["exec"]["not_run"] == 3);
  CHECK(j["exec"]["queued"] == 5);
  REQUIRE(j["destinations"].size() == 1);
  CHECK(j["destinations"][0]["circuit_open"] == true);
  CHECK(j["outbox"]["pending"] == 1);
  CHECK(j["fleet"]["degraded"] == true);
  CHECK(j["fleet"]["unanswered"] == 1);
  CHECK(j["fleet"]["evicted"] == 42742);
  CHECK(j["fleet"]["failovers"] == 1);
  CHECK(j["fleet"]["unconfirmed"] == 17);

  const nlohmann::json b = nlohmann::json::parse(stats_json(bare()));
  CHECK_FALSE(b.contains("exec"));
  CHECK_FALSE(b.contains("outbox"));
  CHECK_FALSE(b.contains("fleet"));
  CHECK(b["rules"].empty());
  CHECK(b["destinations"].empty());
}

TEST_CASE("metrics: stats_json: invalid UTF-8 in a name is repaired, not thrown") {
  Snapshot s = bare();
  RuleCounters r;
  r.rule = "bad\xC3";
  r.kind = "alert";
  s.rules = {r};
  const nlohmann::json j = nlohmann::json::parse(stats_json(s));
  CHECK(j["rules"][0]["rule"] == "bad\xEF\xBF\xBD");
}

TEST_CASE("metrics: health_of: ready, stalled inputs and a degraded fleet") {
  constexpr int64_t kStall = 30'000;
  struct Row {
    const char* what;
    bool ready;
    std::optional<uint64_t> behind;
    int64_t progress_ago;  // -1: never
    bool fleet, degraded;
    bool ok;
    const char* problem;  // a part of the one problem, "" when ok
  };
  const Row rows[] = {
      {"all well", true, std::nullopt, 1'000, false, false, true, ""},
      {"not ready", false, std::nullopt, 1'000, false, false, false, "not ready"},
      {"behind, recent progress", true, 4096, 29'000, false, false, true, ""},
      {"behind, stalled", true, 4096, 31'000, false, false, false, "bytes waiting and no line decided for 31 s"},
      {"behind at the limit", true, 4096, 30'000, false, false, true, ""},
      {"caught up, idle for long", true, 0, 600'000, false, false, true, ""},
      {"not followed, idle for long", true, std::nullopt, 600'000, false, false, true, ""},
      {"behind, never decided, started long ago", true, 10, -1, false, false, false, "since the start, 60 s"},
      {"fleet fine", true, std::nullopt, 1'000, true, false, true, ""},
      {"fleet degraded", true, std::nullopt, 1'000, true, true, false, "fleet degraded"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.what);
    Snapshot s = bare();
    s.ready = row.ready;
    InputState in;
    in.input = "/var/log/app.log";
    in.bytes_behind = row.behind;
    in.last_progress_ms = row.progress_ago < 0 ? 0 : kNow - row.progress_ago;
    s.inputs = {in};
    if (row.fleet) s.fleet = degraded_fleet(row.degraded);
    const auto h = health_of(s, kStall);
    CHECK(h.ok == row.ok);
    if (row.ok) {
      CHECK(h.problems.empty());
    } else {
      REQUIRE(h.problems.size() == 1);
      CHECK(h.problems[0].find(row.problem) != std::string::npos);
      CHECK(h.problems[0].find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("metrics: health_of: every problem at once, one line each") {
  Snapshot s = bare();
  s.ready = false;
  InputState in;
  in.input = "two\nlines";
  in.bytes_behind = 1;
  in.last_progress_ms = kNow - 90'000;
  s.inputs = {in};
  s.fleet = degraded_fleet(true);
  const auto h = health_of(s, 1'500);
  CHECK_FALSE(h.ok);
  REQUIRE(h.problems.size() == 3);
  for (const std::string& p : h.problems) CHECK(p.find('\n') == std::string::npos);
  CHECK(h.problems[1] == "input two\\nlines: 1 bytes waiting and no line decided for 90 s (stall limit 1500 ms)");
}
