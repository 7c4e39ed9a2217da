// The text of --stats from a Snapshot (metrics/stats_text.h): each module's
// line is there exactly when the snapshot holds that module, and a figure
// only some rules or runs have is on their lines alone. The expected lines
// are written out by hand from the formats the e2e tests also read.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "metrics/exposition.h"
#include "metrics/snapshot.h"
#include "metrics/stats_text.h"

using swthrottle::metrics::FleetState;
using swthrottle::metrics::RuleCounters;
using swthrottle::metrics::Snapshot;
using swthrottle::metrics::stats_text;

namespace {

Snapshot lines_only() {
  Snapshot s;
  s.counts.lines = 10;
  s.counts.matched = 4;
  s.counts.written = 3;
  s.counts.truncated = 1;
  s.counts.untimed = 2;
  s.counts.untrusted = 5;
  return s;
}

constexpr const char* kLinesLine = "swthrottle: stats: lines 10 matched 4 written 3 truncated 1 untimed 2 untrusted 5";

}  // namespace

TEST_CASE("stats_text: no rule and no module: the lines line alone") {
  CHECK(stats_text(lines_only()) == std::string(kLinesLine) + "\n");
}

TEST_CASE("stats_text: invalid_json, json_repaired and cut only when there are some (cut: with multiline)") {
  Snapshot s = lines_only();
  s.counts.invalid_json = 2;
  s.counts.json_repaired = 1;
  s.counts.cut = 0;
  CHECK(stats_text(s) == std::string(kLinesLine) + " invalid_json 2 json_repaired 1\n");
  s.groups_events = true;
  CHECK(stats_text(s) == std::string(kLinesLine) + " invalid_json 2 json_repaired 1 cut 0\n");
}

TEST_CASE("stats_text: a throttle and an alert rule, the figures of `new`, `forget` and fleet on theirs alone") {
  Snapshot s = lines_only();
  RuleCounters t;
  t.rule = "noisy";
  t.kind = "throttle";
  t.counts.lines = 9;
  t.counts.passed = 3;
  t.counts.suppressed = 6;
  t.counts.summaries = 1;
  t.counts.keys = 7;  // created: the text shows the keys there are now
  t.keys_now = 2;
  RuleCounters a;
  a.rule = "ssh";
  a.kind = "alert";
  a.counts.lines = 5;
  a.counts.events = 5;
  a.counts.alerts = 1;
  a.counts.resolved = 1;
  a.counts.evictions = 4;
  a.counts.learned = 8;
  a.counts.forgotten = 3;
  a.counts.fleet_local = 2;
  a.counts.fleet_late = 1;
  a.keys_now = 1;
  s.rules = {t, a};
  const std::string head = std::string(kLinesLine) + "\n" +
                           "swthrottle: stats: rule noisy: lines 9 passed 3 suppressed 6 summaries 1 late 0 untimed 0 "
                           "keys 2 evicted 0\n";
  const std::string alert =
      "swthrottle: stats: rule ssh: lines 5 events 5 alerts 1 resolved 1 suppressed 0 late 0 "
      "untimed 0 keys 1 evicted 4";
  CHECK(stats_text(s) == head + alert + "\n");
  s.rules[1].values_now = 6;
  s.rules[1].forgets_keys = true;
  s.rules[1].fleet = true;
  CHECK(stats_text(s) == head + alert + " learned 8 values 6 forgotten 3 fleet_local 2 fleet_late 1\n");
}

TEST_CASE("stats_text: fleet, exec, delivery and outbox lines when present, in that order") {
  Snapshot s = lines_only();
  FleetState f;
  f.redis = "redis://127.0.0.1:6379";
  f.namespace_name = "sw";
  f.host = "web1";
  f.counts.asked = 5;
  f.counts.answered = 4;
  f.counts.unanswered = 1;
  f.counts.degraded_now = true;
  s.fleet = f;
  swthrottle::output::ExecStats x;
  x.started = 3;
  x.succeeded = 2;
  x.retried = 1;
  x.gave_up = 1;
  x.not_run = 4;
  s.exec = x;
  swthrottle::delivery::DestinationStats d;
  d.label = "hook";
  d.queued = 2;
  d.delivered = 1;
  d.attempts = 3;
  d.failed_attempts = 2;
  d.pending = 1;
  d.circuit_open = true;
  s.delivery.destinations = {d};
  swthrottle::delivery::OutboxStats o;
  o.added = 2;
  o.recovered = 1;
  o.pending = 1;
  s.delivery.outbox = o;
  CHECK(stats_text(s) ==
        std::string(kLinesLine) + "\n" +
            "swthrottle: stats: fleet: redis redis://127.0.0.1:6379 namespace sw host web1 state degraded asked 5 "
            "answered 4 unanswered 1 timeouts 0 errors 0 degraded 0 reconnects 0 reloads 0 resets 0 evicted 0 "
            "failovers 0 unconfirmed 0 flushes 0 late_flushed 0 dropped 0 local_alerts 0 duplicates 0\n"
            "swthrottle: stats: exec: started 3 succeeded 2 retried 1 timed out 0 gave up 1 dropped 0 not run 4\n"
            "swthrottle: stats: delivery: hook: queued 2 delivered 1 attempts 3 failed 2 dead_letters 0 reposts 0 "
            "pending 1 circuit open\n"
            "swthrottle: stats: outbox: added 2 delivered 0 dead_letters 0 dropped 0 recovered 1 pending 1\n");
}

TEST_CASE("stats_text: an outbox with records of an earlier run and no destination now still has its line") {
  Snapshot s = lines_only();
  swthrottle::delivery::OutboxStats o;
  o.recovered = 3;
  o.pending = 3;
  o.unrecorded = 1;
  s.delivery.outbox = o;
  CHECK(stats_text(s) ==
        std::string(kLinesLine) + "\n" +
            "swthrottle: stats: outbox: added 0 delivered 0 dead_letters 0 dropped 0 recovered 3 pending 3 "
            "unrecorded 1\n");
}

TEST_CASE("stats_text, stats_json, prometheus_text: one snapshot, the same figure in each") {
  Snapshot s = lines_only();
  swthrottle::output::ExecStats x;
  x.started = 17;
  s.exec = x;
  CHECK(stats_text(s).find("exec: started 17 ") != std::string::npos);
  CHECK(nlohmann::json::parse(swthrottle::metrics::stats_json(s))["exec"]["started"] == 17);
  CHECK(swthrottle::metrics::prometheus_text(s).find("\nswthrottle_exec_started_total 17\n") != std::string::npos);
  s.exec.reset();
  CHECK(stats_text(s).find("exec:") == std::string::npos);
  CHECK_FALSE(nlohmann::json::parse(swthrottle::metrics::stats_json(s)).contains("exec"));
  CHECK(swthrottle::metrics::prometheus_text(s).find("swthrottle_exec_") == std::string::npos);
}
