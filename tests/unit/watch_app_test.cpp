// Watched rules through the App (man page: SILENCE AND SEQUENCES): a
// followed log under time = "log", driven by a FakeClock, against a replay
// of the same file. Silence is reported while nothing is written, by the
// timer, once the log's time has moved on with the clock (quiet_after), and
// the records are those of the replay, where the next line crosses the same
// boundaries: each check is dated at its boundary, whoever crosses it.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
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
using sw::test::CollectingSink;
using sw::test::FakeClock;
using sw::test::TempDir;

using sw::test::loaded_generation;

// window 1m: 10 buckets of 6 s; 10:00:00 is a bucket start.
const char* const kRules = R"toml(
[settings]
time = "log"
quiet_after = "5s"
[[rule]]
name = "heartbeat"
kind = "alert"
window = "1m"
when = "hb < 1"
key = "{host}"
resolve = true
  [[rule.event]]
  name = "hb"
  match = 'heartbeat from (?P<host>\w+)'
)toml";

constexpr int64_t kT0 = 1'795'255'200'000;  // 2026-11-21T10:00:00.000Z, the FakeClock's wall time

std::string stamp(int64_t s) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "2026-11-21T10:%02d:%02dZ", static_cast<int>(s / 60), static_cast<int>(s % 60));
  return buf;
}

// The lines of second s: a beats every 5 s up to 100 s, b up to 25 s, a
// worker logs every 3 s up to 100 s; then nothing until a's beat at 220 s.
std::string lines_at(int64_t s) {
  std::string out;
  if (s % 5 == 0 && s <= 100) out += stamp(s) + " heartbeat from a\n";
  if (s % 5 == 0 && s < 30) out += stamp(s) + " heartbeat from b\n";
  if (s % 3 == 0 && s <= 100) out += stamp(s) + " worker: job done\n";
  if (s == 220) out += stamp(s) + " heartbeat from a\n";
  return out;
}

void append(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  ::close(fd);
}

}  // namespace

TEST_CASE("watch app: a followed log's silence is reported by the timer, with the records of a replay") {
  TempDir dir;
  sw::cli::Options o;
  o.rule_files = {dir.write("rules.toml", kRules)};
  o.follow = true;
  o.from_start = true;
  const std::string log = dir.write("agents.log", "");
  CollectingSink sink;
  FakeClock clock;  // 10:00:00.000Z
  auto first = loaded_generation(o);
  const sw::engine::Engine& engine = *first->engine;
  sw::app::App app(o, {}, std::move(first), sink, clock);
  REQUIRE(app.start());
  int status = -1;
  std::thread run([&] { status = app.run({sw::app::InputSpec{log, -1, true}}); });
  // b's last beat, 25 s, is in bucket 4; it leaves the window at bucket 14,
  // 10:01:24, crossed by a's lines. a's last, 100 s (bucket 16), leaves at
  // bucket 26, 10:02:36: no line crosses it, the clock does.
  const std::string b_alert =
      "swthrottle: alert heartbeat key=b count=0 when=\"hb < 1\" window=1m suppressed=0 "
      "time=2026-11-21T10:01:24.000Z\n";
  const std::string a_alert =
      "swthrottle: alert heartbeat key=a count=0 when=\"hb < 1\" window=1m suppressed=0 "
      "time=2026-11-21T10:02:36.000Z\n";
  for (int64_t s = 0; s <= 220; ++s) {
    CAPTURE(s);
    const std::string text = lines_at(s);
    if (!text.empty()) {
      append(log, text);
      // Decided before the clock moves on: a line is never behind the log's quiet time.
      REQUIRE(sw::test::poll_until([&] { return engine.now_ms() >= kT0 + s * 1000; }));
    }
    if (s == 200) {
      // Nothing was written for 100 s: the timer found a's silence.
      CHECK(sw::test::poll_until([&] { return sink.text() == b_alert + a_alert; }));
    }
    clock.advance(1'000);
  }
  const std::string resolved =
      "swthrottle: resolved heartbeat key=a count=1 when=\"hb < 1\" window=1m time=2026-11-21T10:03:40.000Z\n";
  CHECK(sw::test::poll_until([&] { return sink.text() == b_alert + a_alert + resolved; }));
  app.request_stop();
  run.join();
  CHECK(status == 0);
  const std::string live = sink.text();

  // The same file, replayed: the same records.
  sw::cli::Options replay = o;
  replay.follow = false;
  replay.from_start = false;
  CollectingSink replay_sink;
  FakeClock replay_clock(kT0 + 300'000);  // later than the log, as a replay's wall clock is
  sw::app::App again(replay, {}, loaded_generation(replay), replay_sink, replay_clock);
  REQUIRE(again.start());
  CHECK(again.run({sw::app::InputSpec{"agents.log", sw::test::memory_file(sw::test::read_file(log)), false}}) == 0);
  CHECK(replay_sink.text() == live);
}
