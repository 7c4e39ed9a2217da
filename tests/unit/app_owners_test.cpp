// The owners the App wires together (exec_actions.h, deliveries.h,
// state_keeper.h, fleet_connection.h, run_metrics.h), each on its own: what
// it does without its option, and the logic it has of its own (its part of
// the exit status, a refused start, what its stats and snapshot say).
#include <doctest/doctest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "app/deliveries.h"
#include "app/exec_actions.h"
#include "app/fleet_connection.h"
#include "app/run_metrics.h"
#include "app/state_keeper.h"
#include "input/follow.h"
#include "pipeline/batch.h"
#include "support/captured_stderr.h"
#include "support/fake_clock.h"
#include "support/loaded_generation.h"
#include "support/temp_dir.h"

namespace {

namespace sw = swthrottle;
using sw::test::CapturedStderr;
using sw::test::FakeClock;
using sw::test::TempDir;

using sw::test::loaded_generation;

const char* const kAlertRule = R"toml(
[settings]
time = "log"
[[rule]]
name = "burst"
kind = "alert"
threshold = "2 per 10s"
  [[rule.event]]
  name = "fail"
  match = 'FAIL'
)toml";

// A run's command line with one alert rule, loaded; each owner starts from it.
struct OneRule {
  TempDir dir;
  FakeClock clock;
  sw::cli::Options o;
  std::unique_ptr<sw::pipeline::Generation> g;
  OneRule() {
    o.rule_files = {dir.write("rules.toml", kAlertRule)};
    g = loaded_generation(o);
  }
  const sw::config::Rule& rule() const { return g->rules->rules[0]; }
};

sw::engine::Record alert_of(const sw::config::Rule& rule) {
  sw::engine::Record r;
  r.type = sw::engine::RecordType::Alert;
  r.rule = &rule;
  r.count = 2;
  r.counts = {2};
  return r;
}

}  // namespace

TEST_CASE("ExecActions: none without --exec or a rule's exec, a bad --exec is refused") {
  OneRule run;
  auto& [dir, clock, o, g] = run;
  auto none = sw::app::ExecActions::start(o, *g->rules, clock);
  REQUIRE(none.ok());
  CHECK_FALSE(none->running());
  CHECK_FALSE(none->stats().has_value());
  none->submit({alert_of(g->rules->rules[0])});  // nothing to run it: nothing happens
  CHECK_FALSE(none->lost_actions());

  o.exec = "notify 'unclosed";
  auto bad = sw::app::ExecActions::start(o, *g->rules, clock);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().str().rfind("--exec: ", 0) == 0);
}

TEST_CASE("ExecActions: lines are not actions, an action after a stop is not run, and that is exit 3's") {
  OneRule run;
  auto& [dir, clock, o, g] = run;
  o.exec = "/bin/true";
  auto exec = sw::app::ExecActions::start(o, *g->rules, clock);
  REQUIRE(exec.ok());
  REQUIRE(exec->running());
  sw::engine::Record line;
  line.rule = &g->rules->rules[0];  // a line a rule passed: still not an action
  exec->submit({line});
  CHECK(exec->stats()->submitted == 0);
  CHECK_FALSE(exec->lost_actions());

  CapturedStderr err(dir.path() + "/stderr");
  exec->stop(SIGTERM);
  exec->submit({alert_of(g->rules->rules[0])});
  exec->finish();
  CHECK(exec->stats()->not_run == 1);
  CHECK(exec->lost_actions());
  CHECK(err.text().find("stopped by SIGTERM") != std::string::npos);
}

TEST_CASE("Deliveries: none without a destination, a record neither delivered nor kept is lost (exit 3)") {
  OneRule run;
  auto& [dir, clock, o, g] = run;
  g->rules->settings.delivery.drain_ms = 0;  // no wait at the end (a rules file cannot say 0)
  auto none = sw::app::Deliveries::start(o, *g->rules, "", {}, clock);
  REQUIRE(none.ok());
  CHECK(none->stats().destinations.empty());
  CHECK_FALSE(none->stats().outbox.has_value());
  none->finish();
  CHECK_FALSE(none->lost_records());

  // Nothing listens on port 1: the record waits for a retry the fake clock
  // never reaches, and the drain of 0 s ends with it still queued.
  o.webhooks = {"http://127.0.0.1:1/hook?token=secret"};
  std::vector<std::string> said;
  auto d = sw::app::Deliveries::start(
      o, *g->rules, "", [&said](const std::string& m) { said.push_back(m); }, clock);
  REQUIRE(d.ok());
  d->submit({alert_of(g->rules->rules[0])});
  const sw::delivery::DeliveryStats s = d->stats();
  REQUIRE(s.destinations.size() == 1);
  CHECK(s.destinations[0].queued == 1);
  CHECK(s.destinations[0].label.find("secret") == std::string::npos);  // the label never holds the URL's secrets
  CHECK_FALSE(s.outbox.has_value());                                   // no --state, no outbox
  CHECK_FALSE(d->lost_records());                                      // not yet: the run has not ended
  d->finish();  // its workers are joined: `said` is this thread's to read
  CHECK(d->lost_records());
  // The failed attempt may be reported too, before the end: whether the
  // worker got to it first depends on the scheduling (it did under TSan).
  const auto lost = std::find_if(said.begin(), said.end(), [](const std::string& m) {
    return m.find("1 record not delivered") != std::string::npos;
  });
  REQUIRE(lost != said.end());
  CHECK(lost->find("lost: no --state (exit 3)") != std::string::npos);
  for (const std::string& m : said) CHECK(m.find("secret") == std::string::npos);
}

TEST_CASE("StateKeeper: inactive without --state, saves counted, a held lock is exit 4, a failed last save exit 2") {
  OneRule run;
  auto& [dir, clock, o, g] = run;
  std::atomic<int64_t> last_log_ms{-1};
  {
    sw::app::StateKeeper none(o, clock);
    CHECK_FALSE(none.active());
    CHECK(none.open(*g, last_log_ms) == sw::app::StateKeeper::Opened::Loaded);
    CHECK(none.save(*g, 5));
    none.finish(*g, 5);
    CHECK_FALSE(none.final_save_failed());
    CHECK(none.stats().saves == 0);
  }
  CapturedStderr err(dir.path() + "/stderr");
  o.state_file = dir.path() + "/state.json";
  o.state_wait_ms = 0;
  {
    sw::app::StateKeeper first(o, clock);
    REQUIRE(first.open(*g, last_log_ms) == sw::app::StateKeeper::Opened::Loaded);
    CHECK(first.save(*g, 1'795'255'200'000));
    CHECK(first.stats().saves == 1);
    {
      sw::app::StateKeeper second(o, clock);  // another run while the first holds the lock
      CHECK(second.open(*g, last_log_ms) == sw::app::StateKeeper::Opened::Busy);
      CHECK(err.text().find("nothing was read (exit 4)") != std::string::npos);
    }
    first.finish(*g, 1'795'255'200'000);
    CHECK_FALSE(first.final_save_failed());
    CHECK(first.stats().saves == 2);
  }  // the lock is released, as at the end of a run

  // Saved: the newest log time comes back at the next open.
  sw::app::StateKeeper next(o, clock);
  std::atomic<int64_t> loaded{-1};
  REQUIRE(next.open(*loaded_generation(o), loaded) == sw::app::StateKeeper::Opened::Loaded);
  CHECK(loaded == 1'795'255'200'000);

  o.state_file = dir.path() + "/gone/state.json";  // a directory that is not there
  sw::app::StateKeeper broken(o, clock);
  CHECK(broken.open(*g, last_log_ms) == sw::app::StateKeeper::Opened::Loaded);  // said, and the run goes on
  broken.finish(*g, 0);
  CHECK(broken.final_save_failed());
  CHECK(broken.stats().failed_saves == 1);
  CHECK(err.text().find("the state of this run was not saved (exit 2)") != std::string::npos);
}

TEST_CASE("FleetConnection: nothing without fleet rules, a reload cannot move [fleet] redis") {
  OneRule run;
  auto& [dir, clock, o, g] = run;
  sw::app::FleetConnection none(clock);
  std::string why;
  CHECK(none.attach(*g, &why));
  CHECK_FALSE(none.connected());
  CHECK_FALSE(none.stats().has_value());
  int writes = 0;
  none.write_claimed_alerts({g.get()}, [&writes](const std::vector<sw::engine::Record>&) { ++writes; });
  CHECK(writes == 0);
  none.flush();
  none.finish();

  const auto fleet_rules = [](const std::string& redis) {
    return "[fleet]\nredis = \"" + redis +
           "\"\n[[rule]]\nname = \"page\"\nkind = \"throttle\"\nthreshold = \"3 per 10s\"\nfleet = \"exact\"\n"
           "[[rule.event]]\nname = \"e\"\nmatch = 'ERROR'\n";
  };
  CapturedStderr err(dir.path() + "/stderr");  // the client says it cannot reach Redis
  o.rule_files = {dir.write("fleet.toml", fleet_rules("unix:" + dir.path() + "/no.sock"))};
  auto first = loaded_generation(o);
  sw::app::FleetConnection fleet(clock);
  REQUIRE(fleet.attach(*first, &why));
  CHECK(fleet.connected());
  CHECK(first->fleet != nullptr);
  REQUIRE(fleet.stats().has_value());
  CHECK(fleet.stats()->degraded_now);  // nothing listens there: degraded, not an error

  o.rule_files = {dir.write("moved.toml", fleet_rules("unix:" + dir.path() + "/other.sock"))};
  auto moved = loaded_generation(o);
  CHECK_FALSE(fleet.attach(*moved, &why));
  CHECK(why == "[fleet] redis and timeout changed; they take effect at a restart");
  CHECK(moved->fleet == nullptr);
  first.reset();  // its link goes before the client stops
  fleet.finish();
  fleet.finish();  // idempotent
}

TEST_CASE("RunMetrics: a snapshot of the App's parts, the inputs' progress and the reloads") {
  TempDir dir;
  FakeClock clock;
  sw::cli::Options o;
  sw::app::RunMetrics metrics(o, clock, [](sw::metrics::Snapshot& s) { s.counts.lines = 7; });
  CHECK_FALSE(metrics.snapshot().ready);
  CHECK(metrics.snapshot().inputs.empty());
  metrics.start({sw::app::InputSpec{"a.log"}, sw::app::InputSpec{"b.log"}, sw::app::InputSpec{"a.log"}});
  sw::metrics::Snapshot s = metrics.snapshot();
  CHECK(s.ready);
  CHECK(s.counts.lines == 7);  // the App's part
  CHECK(s.started_ms == clock.wall_ms());
  REQUIRE(s.inputs.size() == 2);  // one meter per input, however often it is named
  CHECK(s.inputs[0].input == "a.log");
  CHECK_FALSE(s.inputs[0].newest_log_ms.has_value());

  {
    CapturedStderr err(dir.path() + "/stderr");
    metrics.no_timestamp("b.log", "input b.log: no timestamp");
    CHECK(err.text().find("no timestamp") != std::string::npos);
  }
  CHECK(metrics.snapshot().inputs[1].no_timestamp);
  clock.advance(1'000);
  metrics.progressed("a.log", 3, sw::pipeline::kNoStamp);
  metrics.progressed("b.log", 2, 1'795'255'100'000);
  metrics.progressed("b.log", 1, 1'795'255'000'000);  // older: the newest stays
  metrics.progressed("nowhere.log", 9, sw::pipeline::kNoStamp);
  s = metrics.snapshot();
  CHECK(s.inputs[0].lines == 3);
  CHECK(s.inputs[0].last_progress_ms == clock.wall_ms());
  CHECK(s.inputs[1].lines == 3);
  CHECK(s.inputs[1].newest_log_ms == 1'795'255'100'000);
  CHECK_FALSE(s.inputs[1].no_timestamp);  // a stamp since clears it

  metrics.count_reload(true);
  metrics.count_reload(false);
  metrics.count_reload(false);
  s = metrics.snapshot();
  CHECK(s.reloads == 1);
  CHECK(s.reload_failures == 2);
  metrics.finish();
}

TEST_CASE("RunMetrics: the files a --follow pattern matched are metered as the pattern") {
  TempDir dir;
  FakeClock clock;
  sw::cli::Options o;
  sw::app::RunMetrics metrics(o, clock, [](sw::metrics::Snapshot&) {});
  sw::app::InputSpec pattern{"logs/*.log"};
  pattern.follow = pattern.glob = true;
  metrics.start({pattern, sw::app::InputSpec{"logs/own.log"}});
  metrics.adopt("logs/a.log", "logs/*.log");
  metrics.adopt("logs/b.log", "logs/*.log");
  metrics.adopt("logs/own.log", "logs/*.log");  // named on its own too: stays its own
  metrics.adopt("other/c.log", "other/*.log");  // no such pattern: not metered
  auto input = [&](const std::string& name) {
    for (const sw::metrics::InputState& in : metrics.snapshot().inputs)
      if (in.input == name) return in;
    FAIL("no input " << name);
    return sw::metrics::InputState{};
  };

  clock.advance(1'000);
  metrics.progressed("logs/a.log", 2, 1'795'255'000'000);
  metrics.progressed("logs/b.log", 3, 1'795'255'100'000);
  metrics.progressed("logs/own.log", 4, sw::pipeline::kNoStamp);
  metrics.progressed("other/c.log", 5, sw::pipeline::kNoStamp);
  REQUIRE(metrics.snapshot().inputs.size() == 2);                 // one series per input given, none per file
  CHECK(input("logs/*.log").lines == 5);                          // the sum
  CHECK(input("logs/*.log").newest_log_ms == 1'795'255'100'000);  // the newest of any
  CHECK(input("logs/*.log").last_progress_ms == clock.wall_ms());
  CHECK(input("logs/own.log").lines == 4);

  // Bytes behind: the sum over the files followed now (neither read yet: all of each).
  dir.write("logs-a", std::string(10, 'x'));
  dir.write("logs-b", std::string(20, 'x'));
  sw::input::Follower fa(dir.file("logs-a"), {}, clock);
  sw::input::Follower fb(dir.file("logs-b"), {}, clock);
  CHECK_FALSE(input("logs/*.log").bytes_behind.has_value());
  metrics.follow("logs/a.log", &fa);
  metrics.follow("logs/b.log", &fb);
  CHECK(input("logs/*.log").bytes_behind == 30);
  metrics.unfollow("logs/a.log", &fa);
  CHECK(input("logs/*.log").bytes_behind == 20);
  metrics.unfollow("logs/b.log", &fb);

  // No timestamp: 1 while any file of it is reported and gave none since; a
  // stamp from another file does not clear it, letting that file go does.
  {
    CapturedStderr err(dir.path() + "/stderr");
    metrics.no_timestamp("logs/a.log", "logs/a.log: no timestamp");
    metrics.no_timestamp("logs/b.log", "logs/b.log: no timestamp");
  }
  CHECK(input("logs/*.log").no_timestamp);
  metrics.progressed("logs/b.log", 1, 1'795'255'200'000);
  CHECK(input("logs/*.log").no_timestamp);  // a.log is still without
  metrics.progressed("logs/a.log", 1, sw::pipeline::kNoStamp);
  CHECK(input("logs/*.log").no_timestamp);
  // a.log let go of: it no longer speaks for the pattern, nor counts.
  metrics.release("logs/a.log");
  CHECK_FALSE(input("logs/*.log").no_timestamp);
  metrics.progressed("logs/a.log", 7, sw::pipeline::kNoStamp);
  CHECK(input("logs/*.log").lines == 7);  // 5, then one from each file before the release
  metrics.finish();
}
