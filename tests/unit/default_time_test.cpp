// The default time (app/default_time.h): log time for replayed files whose
// first lines carry timestamps, arrival time for live inputs and for files
// without them; and load_generation, where --time and [settings] time win
// and a reload keeps the first generation's choice.
#include "app/default_time.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "app/load_generation.h"
#include "support/compress.h"
#include "support/container_log.h"
#include "support/temp_dir.h"

namespace {

namespace sw = swthrottle;
using sw::config::TimeSource;
using sw::test::TempDir;

constexpr int64_t kWallMs = 1'795'255'200'000;  // 2026-11-21T10:00:00Z

const char* const kRule = R"toml(
[[rule]]
name = "errors"
kind = "alert"
threshold = "3 per 1h"
  [[rule.event]]
  name = "error"
  match = 'ERROR'
)toml";

sw::config::Settings settings(const std::string& toml = "") {
  auto rules = sw::config::parse_rules(toml + kRule, "rules.toml");
  REQUIRE_MESSAGE(rules.ok(), (rules.ok() ? std::string() : rules.error().str()));
  return rules->settings;
}

sw::app::DefaultTime choose(const std::vector<std::string>& inputs, bool follow = false,
                            const sw::config::Settings& s = settings()) {
  return sw::app::default_time(s, inputs, follow, 1 << 20, kWallMs);
}

// `n` lines; line i carries a stamp when stamped(i).
template <typename Stamped>
std::string lines(int n, Stamped stamped) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += stamped(i) ? "2026-11-21T09:0" + std::to_string(i % 10) + ":00Z ERROR disk full\n" : "ERROR disk full\n";
  return out;
}

const std::string kStamped = "2026-11-21T09:00:00Z ERROR a\n2026-11-21T09:30:00Z ERROR b\n2026-11-21T10:00:00Z ok\n";
const std::string kPlain = "GET / 200\nGET /a 200\nERROR b\n";

TEST_CASE("default time: a replayed file whose first lines carry timestamps is log time, one without, arrival") {
  TempDir dir;
  const std::string stamped = dir.write("stamped.log", kStamped);
  const std::string plain = dir.write("plain.log", kPlain);
  const sw::app::DefaultTime log = choose({stamped});
  CHECK(log.time == TimeSource::Log);
  CHECK(log.why.empty());
  const sw::app::DefaultTime arrival = choose({plain});
  CHECK(arrival.time == TimeSource::Arrival);
  CHECK(arrival.why == plain + " has a timestamp in only 0 of its first 3 lines");
  // Time is one setting for the run: every replayed file must carry them.
  CHECK(choose({stamped, plain}).why == arrival.why);
  CHECK(choose({stamped, stamped}).time == TimeSource::Log);
}

TEST_CASE("default time: standard input, a followed file and a FIFO are live: arrival time, nothing read") {
  TempDir dir;
  const std::string stamped = dir.write("stamped.log", kStamped);
  const std::string fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  struct Case {
    std::vector<std::string> inputs;
    bool follow;
    std::string why;
  };
  const Case cases[] = {
      {{}, false, "standard input is read as it comes"},
      {{"-"}, false, "standard input is read as it comes"},
      {{stamped, "-"}, false, "standard input is read as it comes"},
      {{stamped}, true, stamped + " is followed"},
      // Opening a FIFO would wait for a writer, reading it would take its
      // lines: neither happens (the test would hang).
      {{stamped, fifo}, false, fifo + " is not a regular file"},
      {{dir.path()}, false, dir.path() + " is not a regular file"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.why);
    const sw::app::DefaultTime d = choose(c.inputs, c.follow);
    CHECK(d.time == TimeSource::Arrival);
    CHECK(d.why == c.why);
  }
}

TEST_CASE("default time: at least half of the first 10 non-blank lines, and nothing after them") {
  TempDir dir;
  struct Case {
    const char* what;
    std::string text;
    uint32_t lines, stamped;
    TimeSource time;
  };
  const Case cases[] = {
      {"5 of 10", lines(10, [](int i) { return i % 2 == 0; }), 10, 5, TimeSource::Log},
      {"4 of 10", lines(10, [](int i) { return i < 4; }), 10, 4, TimeSource::Arrival},
      {"the first of one", lines(1, [](int) { return true; }), 1, 1, TimeSource::Log},
      {"1 of 3", lines(3, [](int i) { return i == 2; }), 3, 1, TimeSource::Arrival},
      {"blank lines do not count", "\n  \n" + lines(2, [](int i) { return i == 0; }) + "\r\n\t\n", 2, 1,
       TimeSource::Log},
      {"only the first 10", lines(10, [](int) { return false; }) + lines(100, [](int) { return true; }), 10, 0,
       TimeSource::Arrival},
      {"stamps after the first 10 do not help either way", lines(10, [](int) { return true; }) + kPlain, 10, 10,
       TimeSource::Log},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const std::string path = dir.write("app.log", c.text);
    const sw::pipeline::StampSample s = sw::app::sample_file(settings(), path, 1 << 20, kWallMs);
    CHECK(s.lines == c.lines);
    CHECK(s.stamped == c.stamped);
    CHECK(choose({path}).time == c.time);
  }
}

TEST_CASE("default time: a compressed file is read decompressed, an empty one has no say") {
  TempDir dir;
  const std::string gz = dir.write("app.log.1.gz", sw::test::gzip_bytes(kStamped));
  const std::string zst = dir.write("app.log.2.zst", sw::test::zstd_bytes(kStamped));
  const std::string empty = dir.write("empty.log", "");
  const std::string blank = dir.write("blank.log", "\n\n");
  const std::string plain = dir.write("plain.log", kPlain);
  CHECK(choose({zst, gz}).time == TimeSource::Log);
  CHECK(choose({empty, gz, blank}).time == TimeSource::Log);
  // Nothing to decide by either way: log time, under which a replay of
  // nothing moves nothing (with --state, the saved windows stay as they are).
  CHECK(choose({empty}).time == TimeSource::Log);
  CHECK(choose({empty, plain}).time == TimeSource::Arrival);
}

TEST_CASE("default time: each input is read as the run reads it: its own timestamp, multiline, envelope") {
  TempDir dir;
  // A form auto does not read, which an input's own setting does.
  const std::string dotted = dir.write("app.dotted", "21.11.2026 09:00 ERROR a\n21.11.2026 09:10 ERROR b\n");
  CHECK(choose({dotted}).time == TimeSource::Arrival);
  const sw::config::Settings own = settings(R"toml(
[[settings.input]]
path = "*.dotted"
timestamp = "%d.%m.%Y %H:%M"
)toml");
  CHECK(choose({dotted}, false, own).time == TimeSource::Log);

  // Stack traces: 2 of 10 lines have a stamp, 2 of 2 events do.
  std::string java;
  for (int i = 0; i < 2; ++i)
    java +=
        "2026-11-21T09:00:0" + std::to_string(i) +
        "Z ERROR failed\njava.io.IOException: x\n\tat a.B.c(B.java:1)\n\tat a.B.d(B.java:2)\n\tat a.B.e(B.java:3)\n";
  const std::string trace = dir.write("trace.log", java);
  CHECK(choose({trace}).time == TimeSource::Arrival);
  CHECK(choose({trace}, false, settings("[settings]\nmultiline = \"java\"\n")).time == TimeSource::Log);

  // A container runtime's log: the envelope's time, whatever the payload's
  // own stamp setting reads.
  const std::string cri = dir.write("0.log", sw::test::cri_record("stderr", "ERROR no stamp", kWallMs - 60'000) +
                                                 sw::test::cri_record("stdout", "ok", kWallMs - 30'000));
  CHECK(choose({cri}, false, settings("[settings]\ntimestamp = \"syslog\"\n")).time == TimeSource::Log);
  CHECK(choose({cri}, false, settings("[settings]\ntimestamp = \"syslog\"\nformat = \"text\"\n")).time ==
        TimeSource::Arrival);
}

std::unique_ptr<sw::pipeline::Generation> load(const sw::cli::Options& o,
                                               const sw::pipeline::Generation* previous = nullptr) {
  auto g = sw::app::load_generation(o, previous);
  REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().str()));
  return std::move(*g);
}

TEST_CASE("default time: --time and [settings] time win, a reload keeps the default the run started with") {
  TempDir dir;
  const std::string stamped = dir.write("stamped.log", kStamped);
  sw::cli::Options o;
  o.rule_files = {dir.write("rules.toml", kRule)};
  o.inputs = {stamped};
  auto first = load(o);
  CHECK(first->rules->settings.time == TimeSource::Log);
  CHECK_FALSE(first->rules->settings.time_set);
  CHECK(first->logtime.has_value());
  CHECK(first->arrival_by_default.empty());

  o.inputs.clear();  // standard input
  auto live = load(o);
  CHECK(live->rules->settings.time == TimeSource::Arrival);
  CHECK(live->arrival_by_default == "standard input is read as it comes");
  CHECK_FALSE(live->logtime.has_value());

  o.inputs = {stamped};
  o.time = TimeSource::Arrival;
  auto flag = load(o);
  CHECK(flag->rules->settings.time == TimeSource::Arrival);
  CHECK(flag->rules->settings.time_set);
  CHECK(flag->arrival_by_default.empty());  // a choice: no notice
  o.time.reset();
  o.rule_files = {dir.write("arrival.toml", std::string("[settings]\ntime = \"arrival\"\n") + kRule)};
  auto set = load(o);
  CHECK(set->rules->settings.time == TimeSource::Arrival);
  CHECK(set->rules->settings.time_set);
  CHECK(set->arrival_by_default.empty());
  o.inputs.clear();
  o.rule_files = {dir.write("log.toml", std::string("[settings]\ntime = \"log\"\n") + kRule)};
  CHECK(load(o)->rules->settings.time == TimeSource::Log);  // standard input, as set

  // SIGHUP: the files are not read again; the run keeps its time even if
  // they no longer start with timestamps, unless the new rules set one.
  o.rule_files = {dir.write("rules.toml", kRule)};
  o.inputs = {stamped};
  dir.write("stamped.log", kPlain);
  CHECK(load(o)->rules->settings.time == TimeSource::Arrival);  // a new run would choose arrival
  auto reloaded = load(o, first.get());
  CHECK(reloaded->rules->settings.time == TimeSource::Log);
  CHECK(reloaded->logtime.has_value());
  auto arrival_later = load(o, live.get());
  CHECK(arrival_later->arrival_by_default == "standard input is read as it comes");
  o.rule_files = {dir.write("arrival.toml", std::string("[settings]\ntime = \"arrival\"\n") + kRule)};
  CHECK(load(o, first.get())->rules->settings.time == TimeSource::Arrival);
}

}  // namespace
