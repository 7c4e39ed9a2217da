// App (app/app.h): the lifecycle of a run, driven through its seams: inputs
// on real descriptors, records into a collecting sink, and an injected clock
// that alone decides when the timer saves --state or ticks arrival time.
#include "app/app.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "app/load_generation.h"
#include "support/captured_stderr.h"
#include "support/collecting_sink.h"
#include "support/fake_clock.h"
#include "support/loaded_generation.h"
#include "support/memory_file.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace {

namespace sw = swthrottle;
using sw::test::CollectingSink;
using sw::test::FakeClock;
using sw::test::TempDir;

using sw::test::loaded_generation;

const char* const kLogRules = R"toml(
[settings]
time = "log"
[[rule]]
name = "burst"
kind = "alert"
threshold = "2 per 10s"
  [[rule.event]]
  name = "fail"
  match = 'FAIL (?P<who>\w+)'
)toml";

const std::string kTwoFails = "2026-11-21T10:00:01Z FAIL ann\n2026-11-21T10:00:02Z FAIL bob\n";
const std::string kAlert =
    "swthrottle: alert burst count=2 threshold=2 window=10s suppressed=0 time=2026-11-21T10:00:02.000Z: "
    "2026-11-21T10:00:02Z FAIL bob\n";

TEST_CASE("app: a run decides its input into the sink, --exit-code makes an alert exit 1") {
  TempDir dir;
  for (bool exit_code : {false, true}) {
    CAPTURE(exit_code);
    sw::cli::Options o;
    o.rule_files = {dir.write("rules.toml", kLogRules)};
    o.exit_code = exit_code;
    CollectingSink sink;
    FakeClock clock;
    sw::app::App app(o, {}, loaded_generation(o), sink, clock);
    REQUIRE(app.start());
    const int status = app.run({sw::app::InputSpec{"a.log", sw::test::memory_file(kTwoFails), false}});
    CHECK(status == (exit_code ? 1 : 0));
    CHECK(sink.text() == kAlert);
  }
}

TEST_CASE("app: with several inputs each is decided in its own order, and the run finishes once") {
  TempDir dir;
  sw::cli::Options o;
  o.rule_files = {dir.write("rules.toml", R"toml(
[settings]
time = "log"
[[rule]]
name = "flood"
kind = "throttle"
threshold = "1 per 1m"
key = "{src}"
  [[rule.event]]
  name = "e"
  match = 'ERR (?P<src>\w+)'
)toml")};
  CollectingSink sink;
  FakeClock clock;
  sw::app::App app(o, {}, loaded_generation(o), sink, clock);
  REQUIRE(app.start());
  // Each input its own key: no race between the two deciders changes what passes.
  const int status = app.run({sw::app::InputSpec{"a.log",
                                                 sw::test::memory_file("2026-11-21T10:00:01Z ERR a\n"
                                                                       "2026-11-21T10:00:02Z ERR a\n"),
                                                 false},
                              sw::app::InputSpec{"b.log",
                                                 sw::test::memory_file("2026-11-21T10:00:01Z ERR b\n"
                                                                       "2026-11-21T10:00:03Z ERR b\n"),
                                                 false}});
  CHECK(status == 0);
  const std::string out = sink.text();
  CHECK(out.find("2026-11-21T10:00:01Z ERR a\n") != std::string::npos);
  CHECK(out.find("2026-11-21T10:00:01Z ERR b\n") != std::string::npos);
  // The summaries of the end of input, once each.
  CHECK(out.find("swthrottle: summary flood key=a suppressed=1 ") != std::string::npos);
  CHECK(out.find("swthrottle: summary flood key=b suppressed=1 ") != std::string::npos);
  CHECK(std::count(out.begin(), out.end(), '\n') == 4);
}

TEST_CASE("app: a closed output ends the run quietly, exit 0") {
  TempDir dir;
  sw::cli::Options o;
  o.rule_files = {dir.write("rules.toml", kLogRules)};
  o.exit_code = true;
  CollectingSink sink;
  sink.close();
  FakeClock clock;
  sw::app::App app(o, {}, loaded_generation(o), sink, clock);
  REQUIRE(app.start());
  CHECK(app.run({sw::app::InputSpec{"a.log", sw::test::memory_file(kTwoFails), false}}) == 0);
  CHECK(sink.text().empty());
}

TEST_CASE("app: --state is saved by the timer when the injected clock says the interval has passed") {
  TempDir dir;
  sw::cli::Options o;
  o.rule_files = {dir.write("rules.toml", kLogRules)};
  o.state_file = dir.file("state.json");
  sw::app::AppOptions ao;
  ao.state_save_every_ms = 60'000;
  CollectingSink sink;
  FakeClock clock;
  sw::app::App app(o, ao, loaded_generation(o), sink, clock);
  REQUIRE(app.start());
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  int status = -1;
  std::thread run([&] { status = app.run({sw::app::InputSpec{"-", pipe_fds[0], false}}); });
  REQUIRE(::write(pipe_fds[1], kTwoFails.data(), kTwoFails.size()) == static_cast<ssize_t>(kTwoFails.size()));
  CHECK(sw::test::poll_until([&] { return sink.text() == kAlert; }));
  // The clock has not moved: however long the timer runs, no save is due.
  CHECK(::access(o.state_file.c_str(), F_OK) != 0);
  clock.advance(60'000);
  CHECK(sw::test::poll_until([&] { return ::access(o.state_file.c_str(), F_OK) == 0; }));
  CHECK(sw::test::read_file(o.state_file).find("\"burst\"") != std::string::npos);
  ::close(pipe_fds[1]);
  run.join();
  CHECK(status == 0);
}

TEST_CASE("app: under arrival time the timer resolves an alert once the injected clock passes the window") {
  TempDir dir;
  sw::cli::Options o;
  o.rule_files = {dir.write("rules.toml", R"toml(
[settings]
time = "arrival"
[[rule]]
name = "burst"
kind = "alert"
threshold = "2 per 2s"
buckets = 2
resolve = true
  [[rule.event]]
  name = "fail"
  match = 'FAIL'
)toml")};
  CollectingSink sink;
  FakeClock clock;  // 2026-11-21T10:00:00.000Z
  sw::app::App app(o, {}, loaded_generation(o), sink, clock);
  REQUIRE(app.start());
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  std::thread run([&] { (void)app.run({sw::app::InputSpec{"-", pipe_fds[0], false}}); });
  const std::string two = "FAIL 1\nFAIL 2\n";
  REQUIRE(::write(pipe_fds[1], two.data(), two.size()) == static_cast<ssize_t>(two.size()));
  const std::string alert =
      "swthrottle: alert burst count=2 threshold=2 window=2s suppressed=0 time=2026-11-21T10:00:00.000Z: FAIL 2\n";
  CHECK(sw::test::poll_until([&] { return sink.text() == alert; }));
  // No line comes: the timer ticks at the boundary the clock reaches, and
  // the events (bucket 10:00:00-01) have left the window of 10:00:02-03.
  clock.advance(2'000);
  CHECK(sw::test::poll_until([&] {
    return sink.text() == alert +
                              "swthrottle: resolved burst count=0 threshold=2 window=2s "
                              "time=2026-11-21T10:00:02.000Z\n";
  }));
  ::close(pipe_fds[1]);
  run.join();
}

TEST_CASE("app: a quiet followed log under log time gets its resolve once its time has moved on") {
  TempDir dir;
  sw::cli::Options o;
  o.rule_files = {dir.write("rules.toml", R"toml(
[settings]
time = "log"
quiet_after = "5s"
[[rule]]
name = "burst"
kind = "alert"
threshold = "2 per 10s"
resolve = true
  [[rule.event]]
  name = "fail"
  match = 'FAIL (?P<who>\w+)'
)toml")};
  o.follow = true;
  o.from_start = true;
  const std::string log = dir.write("app.log", kTwoFails);
  CollectingSink sink;
  FakeClock clock;
  auto first = loaded_generation(o);
  const sw::engine::Engine& engine = *first->engine;  // the run's engine: no reload here
  sw::app::App app(o, {}, std::move(first), sink, clock);
  REQUIRE(app.start());
  int status = -1;
  std::thread run([&] { status = app.run({sw::app::InputSpec{log, -1, true}}); });
  REQUIRE(sw::test::poll_until([&] { return sink.text() == kAlert; }));
  // No line comes. The log's time moves on with the injected clock from
  // 10:00:02, 5 s behind it, from when the follower found nothing more: the
  // steps below pass that moment whenever it was, and the record is the same
  // (the boundary at which the window no longer held two events).
  const std::string resolved =
      "swthrottle: resolved burst count=1 threshold=2 window=10s time=2026-11-21T10:00:11.000Z\n";
  // Once the log's time moves, each step waits until the engine's "now" has
  // taken it (the timer checks every boundary it passes): a slow timer must
  // not see two steps at once, or the resolve comes a second late.
  const auto now_ms = [&] { return engine.now_ms(); };
  bool seen = false;
  bool moving = false;
  int64_t last_now = now_ms();
  for (int step = 0; step < 60 && !seen; ++step) {
    clock.advance(1'000);
    const auto grew = [&] { return sink.text().size() > kAlert.size(); };
    if (moving) (void)sw::test::poll_until([&] { return grew() || now_ms() >= last_now + 1'000; });
    seen = sw::test::poll_until(grew, std::chrono::milliseconds(moving ? 50 : 200));
    const int64_t now = now_ms();
    moving = moving || now > last_now;
    last_now = now;
  }
  CHECK(sink.text() == kAlert + resolved);
  // A line that comes later is decided at its own time, as before.
  const std::string more = "2026-11-21T10:00:40Z FAIL cy\n2026-11-21T10:00:41Z FAIL dan\n";
  const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, more.data(), more.size()) == static_cast<ssize_t>(more.size()));
  ::close(fd);
  CHECK(sw::test::poll_until([&] {
    return sink.text() == kAlert + resolved +
                              "swthrottle: alert burst count=2 threshold=2 window=10s suppressed=0 "
                              "time=2026-11-21T10:00:41.000Z: 2026-11-21T10:00:41Z FAIL dan\n";
  }));
  app.request_stop();
  run.join();
  CHECK(status == 0);
}

TEST_CASE("app: files that are not followed, under log time, are decided in the order merged by time") {
  TempDir dir;
  sw::cli::Options o;
  o.rule_files = {dir.write("rules.toml", kLogRules)};
  for (bool closed : {false, true}) {
    CAPTURE(closed);
    CollectingSink sink;
    if (closed) sink.close();
    FakeClock clock;
    sw::app::App app(o, {}, loaded_generation(o), sink, clock);
    REQUIRE(app.start());
    // b's line comes between a's two in time: the second FAIL of the window
    // is b's, whichever input is read first. A closed output ends the run
    // quietly, exit 0.
    const int status =
        app.run({sw::app::InputSpec{"a.log",
                                    sw::test::memory_file("2026-11-21T10:00:01Z FAIL ann\n"
                                                          "2026-11-21T10:00:09Z FAIL cid\n"),
                                    false},
                 sw::app::InputSpec{"b.log", sw::test::memory_file("2026-11-21T10:00:02Z FAIL bob\n"), false}});
    CHECK(status == 0);
    CHECK(sink.text() == (closed ? "" : kAlert));
  }
}

// Runs the rules over `input` with --state at `state`; the records.
std::string run_with_state(TempDir& dir, const std::string& rules, const std::string& state, const std::string& input) {
  sw::cli::Options o;
  o.rule_files = {dir.write("rules.toml", rules)};
  o.state_file = state;
  CollectingSink sink;
  FakeClock clock;  // 2026-11-21T10:00:00.000Z
  sw::app::App app(o, {}, loaded_generation(o), sink, clock);
  REQUIRE(app.start());
  CHECK(app.run({sw::app::InputSpec{"a.log", sw::test::memory_file(input), false}}) == 0);
  return sink.text();
}

TEST_CASE("app: --state saves only trusted times") {
  TempDir dir;
  const std::string state = dir.file("state.json");
  CHECK(run_with_state(dir, kLogRules, state,
                       "2026-11-21T10:00:01Z FAIL ann\n2099-01-01T00:00:00Z INFO broken clock\n"
                       "2026-11-21T10:00:02Z FAIL bob\n") == kAlert);
  const std::string saved = sw::test::read_file(state);
  CHECK(saved.find("\"now_ms\":1795255202000,\"last_log_ms\":1795255202000,") != std::string::npos);
}

TEST_CASE("app: a --state saved ahead of the wall clock is clamped to it at load") {
  TempDir dir;
  const std::string state = dir.file("state.json");
  // An older run that trusted every stamp saved 2099.
  const std::string trusting = std::string(kLogRules).replace(std::string(kLogRules).find("time = \"log\""), 12,
                                                              "time = \"log\"\nmax_future = \"off\"");
  CHECK(run_with_state(dir, trusting, state, "2099-01-01T00:00:00Z FAIL x\n").empty());
  REQUIRE(sw::test::read_file(state).find("\"now_ms\":4070908800000,") != std::string::npos);
  // Clamped to 10:00:00Z: the lines of today are not late.
  CHECK(run_with_state(dir, kLogRules, state, kTwoFails) == kAlert);
  CHECK(sw::test::read_file(state).find("\"now_ms\":1795255202000,\"last_log_ms\":1795255202000,") !=
        std::string::npos);
}

TEST_CASE("app: a live pipe without timestamps under log time is reported after a minute on the injected clock") {
  // A quiet log read through a pipe (`tail -F auth.log | swthrottle`):
  // two lines, then nothing. The report may not wait for more lines.
  TempDir dir;
  sw::cli::Options o;
  o.rule_files = {dir.write("rules.toml", kLogRules)};
  o.passthrough = true;
  o.metrics_file = dir.file("swthrottle.prom");
  CollectingSink sink;
  FakeClock clock;
  sw::app::App app(o, {}, loaded_generation(o), sink, clock);
  REQUIRE(app.start());
  sw::test::CapturedStderr err(dir.file("stderr"));
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  int status = -1;
  std::thread run([&] { status = app.run({sw::app::InputSpec{"-", pipe_fds[0], false}}); });
  const std::string two = "sshd[1]: Accepted publickey for root\nsshd[2]: FAIL ann\n";
  REQUIRE(::write(pipe_fds[1], two.data(), two.size()) == static_cast<ssize_t>(two.size()));
  REQUIRE(sw::test::poll_until([&] { return sink.text() == two; }));  // decided: the minute runs from here
  CHECK(err.text().empty());
  const std::string report =
      "swthrottle: (standard input): no timestamp in the 2 lines of its first minute under time = \"log\": e.g. "
      "\"sshd[1]: Accepted publickey for root\"; set timestamp in [settings] or a [[settings.input]] (swthrottle -r "
      "RULES --check - shows the forms that read it)\n";
  // Exactly when within the minute is StampWatch's (stamp_watch_test.cpp);
  // here, that the timer reports it with no line to notice it by.
  clock.advance(60'000);
  CHECK(sw::test::poll_until([&] { return err.text() == report; }));
  ::close(pipe_fds[1]);
  run.join();
  CHECK(status == 0);
  CHECK(err.text() == report);  // once: not again at the end of the input
  const std::string metrics = sw::test::read_file(o.metrics_file);
  CHECK(metrics.find("swthrottle_input_no_timestamp{input=\"-\"} 1\n") != std::string::npos);
}

}  // namespace
