// StampWatch (pipeline/stamp_watch.h): one report, and when, for an input
// whose lines give no timestamp under time = "log": after 1000 lines or at
// the end of a replay, also after a minute on the injected clock for a pipe,
// after 10 lines or a minute for a followed file.
#include "pipeline/stamp_watch.h"

#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "support/fake_clock.h"

namespace {

using swthrottle::pipeline::StampWatch;

struct Reports {
  std::vector<std::string> got;
  StampWatch watch(const std::string& name, uint64_t lines) {
    return StampWatch(
        name, [this](const std::string& m) { got.push_back(m); }, lines);
  }
};

TEST_CASE("stamp watch: K lines without a timestamp are reported once, with the first non-blank line") {
  Reports r;
  StampWatch w = r.watch("app.log", 3);
  w.line("", false);
  w.line("GET / 200", false);
  CHECK(r.got.empty());
  w.line("GET /b 200", false);  // the third: reported now, not at the end
  REQUIRE(r.got.size() == 1);
  CHECK(r.got[0] ==
        "app.log: no timestamp in the first 3 lines under time = \"log\": e.g. \"GET / 200\"; set timestamp in "
        "[settings] or a [[settings.input]] (swthrottle -r RULES --check app.log shows the forms that read it)");
  w.line("GET /c 200", false);
  w.end();
  CHECK(r.got.size() == 1);
}

TEST_CASE("stamp watch: a short input without a timestamp is reported at its end") {
  Reports r;
  StampWatch w = r.watch("-", 1000);
  w.line("one", false);
  w.line("two", false);
  CHECK(r.got.empty());
  w.end();
  REQUIRE(r.got.size() == 1);
  CHECK(r.got[0] ==
        "(standard input): no timestamp in its 2 lines under time = \"log\": e.g. \"one\"; set timestamp in "
        "[settings] or a [[settings.input]] (swthrottle -r RULES --check - shows the forms that read it)");
}

TEST_CASE("stamp watch: one timestamp ends the watch, no lines, no report") {
  Reports r;
  StampWatch a = r.watch("a.log", 2);
  a.line("no stamp", false);
  a.line("2026-01-01T00:00:00Z stamp", true);
  for (int i = 0; i < 5; ++i) a.line("trace", false);
  a.end();
  StampWatch b = r.watch("b.log", 2);
  b.end();
  CHECK(r.got.empty());
}

TEST_CASE("stamp watch: the sample is escaped and cut on a character boundary") {
  Reports r;
  StampWatch w = r.watch("x.log", 1);
  // 78 ASCII bytes, then "é" (2 bytes) ends at byte 80; the next "é" would cross it.
  const std::string line = "\x1b[31m" + std::string(73, 'a') + "\xc3\xa9\xc3\xa9tail";
  w.line(line, false);
  REQUIRE(r.got.size() == 1);
  CHECK(r.got[0] == "x.log: no timestamp in the first 1 lines under time = \"log\": e.g. \"\\u001b[31m" +
                        std::string(73, 'a') +
                        "\xc3\xa9...\"; set timestamp in [settings] or a [[settings.input]] (swthrottle -r RULES "
                        "--check x.log shows the "
                        "forms that read it)");
}

}  // namespace

namespace {

using swthrottle::test::FakeClock;

TEST_CASE("stamp watch: a followed file is reported after 10 lines, or a minute after its first line") {
  FakeClock clock;
  Reports r;
  StampWatch lines(
      "app.log", [&r](const std::string& m) { r.got.push_back(m); }, StampWatch::Pace::Followed, clock);
  for (int i = 0; i < 9; ++i) lines.line("GET / 200", false);
  CHECK(r.got.empty());
  lines.line("GET / 200", false);
  REQUIRE(r.got.size() == 1);
  CHECK(r.got[0].rfind("app.log: no timestamp in the first 10 lines under time = \"log\": e.g. \"GET / 200\"", 0) == 0);

  StampWatch quiet(
      "auth.log", [&r](const std::string& m) { r.got.push_back(m); }, StampWatch::Pace::Followed, clock);
  CHECK_FALSE(quiet.due(clock.steady_ms()));  // no line yet: nothing to say
  quiet.line("", false);                      // a blank line starts no minute
  clock.advance(StampWatch::kQuietMs);
  CHECK_FALSE(quiet.due(clock.steady_ms()));
  quiet.line("sshd[1]: Accepted publickey for root", false);
  quiet.line("sshd[2]: Accepted publickey for ann", false);
  clock.advance(StampWatch::kQuietMs - 1);
  CHECK_FALSE(quiet.due(clock.steady_ms()));
  clock.advance(1);
  CHECK(quiet.due(clock.steady_ms()));
  REQUIRE(r.got.size() == 2);
  CHECK(r.got[1] ==
        "auth.log: no timestamp in the 3 lines of its first minute under time = \"log\": e.g. \"sshd[1]: Accepted "
        "publickey for root\"; set timestamp in [settings] or a [[settings.input]] (swthrottle -r RULES --check "
        "auth.log shows the forms that read it)");
  // Once: not again by the timer, the tenth line or the end.
  clock.advance(StampWatch::kQuietMs);
  CHECK_FALSE(quiet.due(clock.steady_ms()));
  for (int i = 0; i < 10; ++i) quiet.line("more", false);
  quiet.end();
  CHECK(r.got.size() == 2);
}

TEST_CASE("stamp watch: a pipe has the minute and 1000 lines, a replay no minute, a timestamp ends both") {
  FakeClock clock;
  Reports r;
  auto report = [&r](const std::string& m) { r.got.push_back(m); };
  StampWatch pipe("-", report, StampWatch::Pace::Pipe, clock);
  StampWatch replay("old.log", report, StampWatch::Pace::Replay, clock);
  StampWatch stamped("new.log", report, StampWatch::Pace::Followed, clock);
  for (int i = 0; i < 10; ++i) {
    pipe.line("GET / 200", false);
    replay.line("GET / 200", false);
  }
  stamped.line("GET / 200", false);
  stamped.line("2026-11-21T10:00:00Z GET / 200", true);
  CHECK(r.got.empty());
  clock.advance(StampWatch::kQuietMs);
  CHECK(pipe.due(clock.steady_ms()));
  CHECK_FALSE(replay.due(clock.steady_ms()));
  CHECK_FALSE(stamped.due(clock.steady_ms()));
  REQUIRE(r.got.size() == 1);
  CHECK(r.got[0].rfind("(standard input): no timestamp in the 10 lines of its first minute", 0) == 0);
  replay.end();
  stamped.end();
  REQUIRE(r.got.size() == 2);
  CHECK(r.got[1].rfind("old.log: no timestamp in its 10 lines under", 0) == 0);
}

TEST_CASE("stamp watch: the timer and the decider at once give one report at most") {
  // A stamped line races the timer's minute: either the report comes (the
  // minute passed first) or it does not, never twice.
  for (int round = 0; round < 200; ++round) {
    FakeClock clock;
    std::atomic<int> reports{0};
    StampWatch w(
        "app.log", [&reports](const std::string&) { ++reports; }, StampWatch::Pace::Followed, clock);
    w.line("GET / 200", false);
    clock.advance(StampWatch::kQuietMs);
    std::thread timer([&] {
      for (int i = 0; i < 3; ++i) (void)w.due(clock.steady_ms());
    });
    for (int i = 0; i < 8; ++i) w.line("GET / 200", false);
    w.line("2026-11-21T10:00:00Z GET / 200", true);
    for (int i = 0; i < 5; ++i) w.line("GET / 200", false);
    timer.join();
    w.end();
    CHECK(reports.load() <= 1);
    // The tenth line comes after the stamp, so only the timer can have reported.
    if (reports.load() == 1) CHECK_FALSE(w.due(clock.steady_ms()));
  }
}

}  // namespace
