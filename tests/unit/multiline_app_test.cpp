// Multi-line events through the whole App (`multiline`, input/event_grouper.h):
// a throttle on an exception class passes one trace whole and suppresses
// another whole, keyed by a field of the first line; the records are the same
// read in batches, with -j 2, and followed while the file is written in
// pieces, where the last event comes out once the injected clock passes the
// idle time.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "app/app.h"
#include "app/load_generation.h"
#include "support/collecting_sink.h"
#include "support/fake_clock.h"
#include "support/loaded_generation.h"
#include "support/memory_file.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace {

namespace sw = swthrottle;
using sw::test::append_file;
using sw::test::CollectingSink;
using sw::test::contains;
using sw::test::FakeClock;
using sw::test::TempDir;

const char* const kRules = R"toml(
[settings]
time = "log"
timestamp = "rfc3339"

[[settings.input]]
path = "*.log"
multiline = "java"

[[rule]]
name = "npe"
kind = "throttle"
threshold = "1 per 1m"
key = "{thread}"
  [[rule.event]]
  name = "npe"
  # The thread is a field of the first line; the class is on the second.
  match = '^\S+ ERROR \[(?P<thread>\w+)\][^\n]*\njava\.lang\.NullPointerException'
)toml";

const std::string kStart = "2026-11-21T10:00:00Z INFO [main] start\n";
const std::string kPay1 =
    "2026-11-21T10:00:01Z ERROR [pay] charge failed\n"
    "java.lang.NullPointerException: card\n"
    "\tat c.e.Pay.charge(Pay.java:10)\n"
    "\t... 3 more\n";
const std::string kPay2 =
    "2026-11-21T10:00:02Z ERROR [pay] charge failed again\n"
    "java.lang.NullPointerException: card\n"
    "\tat c.e.Pay.charge(Pay.java:10)\n";
const std::string kShip =
    "2026-11-21T10:00:03Z ERROR [ship] label failed\n"
    "java.lang.NullPointerException: addr\n"
    "\tat c.e.Ship.label(Ship.java:5)\n";
const std::string kIo =
    "2026-11-21T10:00:04Z ERROR [pay] io\n"
    "java.io.IOException: Broken pipe\n"
    "\tat c.e.Pay.charge(Pay.java:11)\n";
const std::string kEnd = "2026-11-21T10:00:05Z INFO [main] end\n";
const std::string kLog = kStart + kPay1 + kPay2 + kShip + kIo + kEnd;

// By hand: pay's first NPE passes (whole), its second is suppressed (whole,
// none of its lines shows), ship's has a key of its own; the IOException and
// the INFO lines match nothing and pass with --passthrough, whole.
const std::string kWant = kStart + kPay1 + kShip + kIo + kEnd +
                          "swthrottle: summary npe key=pay suppressed=1 first=2026-11-21T10:00:02.000Z "
                          "last=2026-11-21T10:00:02.000Z window=1m time=2026-11-21T10:00:05.000Z\n";

using sw::test::loaded_generation;

std::string run_read(const std::string& rules, int threads) {
  sw::cli::Options o;
  o.rule_files = {rules};
  o.passthrough = true;
  o.threads = threads;
  CollectingSink sink;
  FakeClock clock;
  sw::app::App app(o, {}, loaded_generation(o), sink, clock);
  REQUIRE(app.start());
  CHECK(app.run({sw::app::InputSpec{"app.log", sw::test::memory_file(kLog), false}}) == 0);
  return sink.text();
}

}  // namespace

TEST_CASE("multiline app: a trace passes whole or is suppressed whole, keyed by its first line, -j 1 = -j 2") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  CHECK(run_read(rules, 1) == kWant);
  CHECK(run_read(rules, 2) == kWant);
}

TEST_CASE("multiline app: a followed file written in pieces gives the same records, the idle flush ends the last") {
  TempDir dir;
  sw::cli::Options o;
  o.rule_files = {dir.write("rules.toml", kRules)};
  o.passthrough = true;
  o.follow = true;
  o.from_start = true;
  const std::string log = dir.write("app.log", kStart + kPay1.substr(0, 60));
  CollectingSink sink;
  FakeClock clock;
  sw::app::App app(o, {}, loaded_generation(o), sink, clock);
  REQUIRE(app.start());
  int status = -1;
  std::thread run([&] { status = app.run({sw::app::InputSpec{log, -1, true}}); });
  // The injected clock stands still: no event is flushed for being idle, so
  // an event comes out exactly when the line after it arrives.
  REQUIRE(sw::test::poll_until([&] { return sink.text() == kStart; }));
  append_file(log, kPay1.substr(60));
  append_file(log, kPay2.substr(0, 10));  // the next event's first line, in two writes
  append_file(log, kPay2.substr(10) + kShip + kIo.substr(0, 50));
  REQUIRE(sw::test::poll_until([&] { return sink.text() == kStart + kPay1 + kShip; }));
  append_file(log, kIo.substr(50) + kEnd);
  REQUIRE(sw::test::poll_until([&] { return sink.text() == kStart + kPay1 + kShip + kIo; }));
  // "end" is pending until no line has come for a second of the clock.
  CHECK_FALSE(contains(sink.text(), kEnd));
  clock.advance(sw::input::EventGrouper::kIdleMs);
  REQUIRE(sw::test::poll_until([&] { return sink.text() == kStart + kPay1 + kShip + kIo + kEnd; }));
  app.request_stop();
  run.join();
  CHECK(status == 0);
  CHECK(sink.text() == kWant);
}
