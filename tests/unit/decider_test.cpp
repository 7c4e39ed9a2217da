// Decider (pipeline/decider.h): every source feeds one per-line path, so a
// followed file (take), a batch read on the decider's thread (take_read) and
// batches matched by -j workers (take_matched, ParallelMatch) give the
// records of a plain reference: each line matched, stamped and offered to
// the engine on its own, with no folding of quiet lines and no batches.
#include "pipeline/decider.h"
#include "cli/explain.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <random>
#include <shared_mutex>
#include <string>
#include <vector>

#include "output/writer.h"
#include "pipeline/parallel_match.h"
#include "support/collecting_sink.h"
#include "support/fake_clock.h"
#include "support/memory_file.h"
#include "support/scoped_tz.h"
#include "support/seed.h"

namespace {

namespace sw = swthrottle;
using sw::pipeline::Batch;
using sw::pipeline::Decider;
using sw::pipeline::Generation;

std::unique_ptr<Generation> make_generation(std::string_view toml, bool passthrough = false, bool explain = false) {
  auto rules = sw::config::parse_rules(toml, "rules.toml");
  REQUIRE_MESSAGE(rules.ok(), (rules.ok() ? std::string() : rules.error().str()));
  auto g = std::make_unique<Generation>();
  g->rules = std::make_unique<sw::config::RuleSet>(std::move(*rules));
  const auto& s = g->rules->settings;
  if (s.time == sw::config::TimeSource::Log) {
    auto lt = sw::match::LogTime::make(s.timestamp, s.timezone, s.year);
    REQUIRE(lt.ok());
    g->logtime.emplace(std::move(*lt));
  }
  g->engine = std::make_unique<sw::engine::Engine>(*g->rules, sw::engine::EngineOptions{passthrough, explain});
  return g;
}

// A host with one generation at a time, a fake clock and a sink that keeps
// the records as text.
class FakeHost final : public sw::pipeline::DeciderHost {
 public:
  explicit FakeHost(std::string_view toml, bool passthrough = false) : passthrough_(passthrough) {
    gens_.push_back(make_generation(toml, passthrough));
    current_ = gens_.back().get();
  }

  Generation* current() override { return current_.load(); }
  swthrottle::pipeline::OrderLock& order() override { return order_; }
  const std::atomic<bool>& stopping() override { return stop; }
  void emit(const std::vector<sw::engine::Record>& records, const sw::engine::ExplainedLine* explain) override {
    if (!sink.write(records, explain ? sw::cli::explain_line(*explain) : std::string())) stop = true;
  }
  void fail(const std::string& message) override { failures.push_back(message); }
  void warn(const std::string& message) override { warnings.push_back(message); }
  void saw_log_time(int64_t newest_ms) override { newest = std::max(newest, newest_ms); }
  const sw::Clock& clock() override { return clock_; }
  int64_t arrival_ms() override { return clock_.wall_ms(); }

  // SIGHUP, as the app does it: the new engine adopts the old one's windows.
  void reload(std::string_view toml) {
    std::unique_lock lock(order_);
    auto next = make_generation(toml, passthrough_);
    std::vector<sw::engine::Record> flushed;
    (void)next->engine->adopt(*current_.load()->engine, flushed);
    sink.write(flushed);
    current_ = next.get();
    gens_.push_back(std::move(next));
  }

  sw::test::FakeClock clock_;
  sw::test::CollectingSink sink;
  std::atomic<bool> stop{false};
  std::vector<std::string> failures;
  std::vector<std::string> warnings;
  int64_t newest = INT64_MIN;

 private:
  bool passthrough_;
  std::vector<std::unique_ptr<Generation>> gens_;
  std::atomic<Generation*> current_{nullptr};
  swthrottle::pipeline::OrderLock order_;
};

// The reference: each line on its own, straight into a fresh engine.
std::string reference(std::string_view toml, const std::vector<std::string>& lines, bool passthrough = false) {
  auto g = make_generation(toml, passthrough);
  auto m = sw::match::Matcher::make(*g->rules, false, /*prefilter=*/false);
  REQUIRE(m.ok());
  sw::match::MatchResult mr;
  std::vector<sw::engine::Record> out;
  std::string text;
  int64_t last = INT64_MIN;
  for (const std::string& line : lines) {
    m->match(line, mr);
    sw::engine::LineEvent ev;
    ev.text = line;
    if (auto t = g->logtime->parse(line, 0)) last = *t;
    ev.timed = last != INT64_MIN;
    ev.t_ms = ev.timed ? last : 0;
    g->engine->offer(ev, mr, out);
    for (const auto& r : out) sw::output::render(text, r, sw::output::Format::Text);
  }
  g->engine->finish(out);
  for (const auto& r : out) sw::output::render(text, r, sw::output::Format::Text);
  return text;
}

std::string finish(FakeHost& host) {
  std::vector<sw::engine::Record> out;
  host.current()->engine->finish(out);
  host.sink.write(out);
  return host.sink.text();
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

const char* const kRules = R"toml(
[settings]
time = "log"

[[rule]]
name = "flood"
kind = "throttle"
threshold = "3 per 10s"
key = "{svc}"
  [[rule.event]]
  name = "err"
  match = 'ERROR svc=(?P<svc>\w+)'

[[rule]]
name = "burst"
kind = "alert"
threshold = "4 per 5s"
cooldown = "20s"
resolve = true
mode = "accurate"
  [[rule.event]]
  name = "fail"
  match = 'FAIL'
)toml";

// Seeded: stamped lines seconds apart with most lines matching nothing,
// lines without a stamp (a trace), a stamp that goes back (late), and a
// first line with no stamp at all (untimed).
std::vector<std::string> make_log(uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> lines{"starting up, no stamp yet ERROR svc=boot"};
  int64_t t = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const uint64_t r = rng() % 100;
    t += static_cast<int64_t>(rng() % 1500);
    const int64_t shown = r < 3 ? std::max<int64_t>(0, t - 30'000) : t;  // 3 %: late
    char stamp[64];
    std::snprintf(stamp, sizeof stamp, "2026-11-21T10:%02lld:%02lld.%03lldZ",
                  static_cast<long long>(shown / 60000 % 60), static_cast<long long>(shown / 1000 % 60),
                  static_cast<long long>(shown % 1000));
    if (r < 10) lines.push_back(std::string("    at frame ") + std::to_string(i));  // no stamp: takes the last one
    else if (r < 30) lines.push_back(std::string(stamp) + " ERROR svc=" + (rng() % 2 ? "pay" : "auth") + " boom");
    else if (r < 40) lines.push_back(std::string(stamp) + " FAIL login");
    else lines.push_back(std::string(stamp) + " INFO all fine " + std::to_string(i));
  }
  return lines;
}

// The wall clock of a run over make_log(): its stamps run about 40 minutes
// past the FakeClock's wall time, and none may look like the future.
constexpr int64_t kLogSpan = 3'600'000;

TEST_CASE("decider: take, take_read, take_matched and -j give the reference's records") {
  const uint64_t seed = sw::test::base_seed(20261125);
  CAPTURE(seed);
  const std::vector<std::string> lines = make_log(seed, 3000);
  for (bool passthrough : {false, true}) {
    CAPTURE(passthrough);
    const std::string expected = reference(kRules, lines, passthrough);
    REQUIRE(expected.find("swthrottle: alert burst") != std::string::npos);
    REQUIRE(expected.find("swthrottle: resolved burst") != std::string::npos);
    REQUIRE(expected.find("swthrottle: summary flood key=pay") != std::string::npos);

    {  // line by line, as from a followed file
      FakeHost host(kRules, passthrough);
      host.clock_.advance(kLogSpan);
      Decider d("f.log", host, Decider::Options{passthrough, false, true}, INT64_MIN);
      REQUIRE(d.ready());
      for (const auto& l : lines) REQUIRE(d.take(sw::input::Line{l, false}));
      CHECK(finish(host) == expected);
      CHECK(host.failures.empty());
    }
    for (std::size_t buffer : {std::size_t{4096}, std::size_t{1} << 18}) {  // many batches, or few
      CAPTURE(buffer);
      FakeHost host(kRules, passthrough);
      host.clock_.advance(kLogSpan);
      Decider d("f.log", host, Decider::Options{passthrough, false, true}, INT64_MIN);
      const int fd = sw::test::memory_file(joined(lines));
      sw::input::LineReader reader(fd, 1 << 20, buffer);
      Batch b;
      int batches = 0;
      for (;;) {
        b.fill(reader, false);
        ++batches;
        if (!d.take_read(b) || b.last) break;
      }
      ::close(fd);
      CHECK(finish(host) == expected);
      if (buffer == 4096) CHECK(batches > 10);
    }
    for (int workers : {1, 3}) {  // -j
      CAPTURE(workers);
      FakeHost host(kRules, passthrough);
      host.clock_.advance(kLogSpan);
      Decider d("f.log", host, Decider::Options{passthrough, false, true}, INT64_MIN);
      const int fd = sw::test::memory_file(joined(lines));
      auto pipe = sw::pipeline::ParallelMatch::start(
          fd, {1 << 20, workers, true, {}, false, {}}, [&host] { return host.current(); }, host.clock_);
      while (Batch* b = pipe->next()) {
        const bool go = d.take_matched(*b);
        pipe->release(b);
        REQUIRE(go);
      }
      CHECK(pipe->error().empty());
      pipe->stop();
      ::close(fd);
      CHECK(finish(host) == expected);
    }
  }
}

TEST_CASE("decider: the per-input stats and the newest log time reach the engine once per batch") {
  const std::vector<std::string> lines{
      "no stamp at all",                       // untimed
      "2026-11-21T10:00:01Z ERROR svc=pay x",  // stamped
      "   continued",                          // takes 10:00:01
      "2026-11-21T10:00:03Z INFO y",
      "2026-11-21T10:00:02Z FAIL z",  // older: newest stays 10:00:03
  };
  FakeHost host(kRules);
  Decider d("f.log", host, Decider::Options{}, INT64_MIN);
  const int fd = sw::test::memory_file(joined(lines));
  sw::input::LineReader reader(fd);
  Batch b;
  b.fill(reader, false);
  REQUIRE(b.size() == 5);
  CHECK(d.take_read(b));
  ::close(fd);
  const auto& stats = host.current()->engine->stats();
  CHECK(stats.lines.get() == 5);
  CHECK(stats.untimed.get() == 1);
  CHECK(stats.no_timestamp.get() == 1);
  CHECK(host.newest == 1'795'255'203'000);  // 2026-11-21T10:00:03Z
}

TEST_CASE("decider: a time from --state dates lines before their first stamp") {
  FakeHost host(kRules);
  Decider d("-", host, Decider::Options{}, 1'795'255'201'000);  // 10:00:01Z
  for (int i = 0; i < 4; ++i) CHECK(d.take(sw::input::Line{"FAIL without a stamp", false}));
  CHECK(host.sink.text() ==
        "swthrottle: alert burst count=4 threshold=4 window=5s suppressed=0 time=2026-11-21T10:00:01.000Z: "
        "FAIL without a stamp\n");
  CHECK(host.current()->engine->stats().untimed.get() == 0);
}

// One alert rule, "burst": 2 lines matching `pattern` within 10 s.
std::string burst_rules(std::string_view time, std::string_view pattern) {
  return "[settings]\ntime = \"" + std::string(time) +
         "\"\n[[rule]]\nname = \"burst\"\nkind = \"alert\"\nthreshold = \"2 per 10s\"\n"
         "  [[rule.event]]\n  name = \"fail\"\n  match = '" +
         std::string(pattern) + "'\n";
}

TEST_CASE("decider: under arrival time a line is decided when it is read, never before the engine's now") {
  FakeHost host(burst_rules("arrival", "FAIL"));
  Decider d("-", host, Decider::Options{}, INT64_MIN);
  const int64_t t0 = host.clock_.wall_ms();
  CHECK(d.take(sw::input::Line{"FAIL 1", false}));
  std::vector<sw::engine::Record> ticked;
  host.current()->engine->tick(t0 + 5000, ticked);  // a timer moved now
  host.clock_.advance(1000);                        // read at t0 + 1 s, but now is t0 + 5 s
  CHECK(d.take(sw::input::Line{"FAIL 2", false}));
  CHECK(host.sink.text() ==
        "swthrottle: alert burst count=2 threshold=2 window=10s suppressed=0 time=2026-11-21T10:00:05.000Z: FAIL 2\n");
}

TEST_CASE("decider: a batch matched with rules replaced since is matched again with the new ones") {
  FakeHost host(burst_rules("log", "FAIL"));
  Decider d("f.log", host, Decider::Options{}, INT64_MIN);
  const int fd = sw::test::memory_file("2026-11-21T10:00:01Z OOPS 1\n2026-11-21T10:00:02Z OOPS 2\n");
  sw::input::LineReader reader(fd);
  Batch b;
  b.fill(reader, true);
  b.gen = host.current();
  auto m = sw::match::Matcher::make(*b.gen->rules);
  REQUIRE(m.ok());
  b.match(&*m, &*b.gen->logtime, 0);  // as a -j worker would, with the old rules: nothing matches
  ::close(fd);
  host.reload(burst_rules("log", "OOPS"));
  CHECK(d.take_matched(b));
  CHECK(host.sink.text() ==
        "swthrottle: alert burst count=2 threshold=2 window=10s suppressed=0 time=2026-11-21T10:00:02.000Z: "
        "2026-11-21T10:00:02Z OOPS 2\n");
}

TEST_CASE("decider: a closed output or a stop ends the input") {
  FakeHost host(kRules, /*passthrough=*/true);
  Decider d("-", host, Decider::Options{true, false, true}, INT64_MIN);
  CHECK(d.take(sw::input::Line{"2026-11-21T10:00:01Z hello", false}));
  host.sink.close();
  CHECK_FALSE(d.take(sw::input::Line{"2026-11-21T10:00:02Z hello again", false}));
  FakeHost quiet(kRules);
  Decider q("-", quiet, Decider::Options{}, INT64_MIN);
  quiet.stop = true;
  CHECK_FALSE(q.take(sw::input::Line{"2026-11-21T10:00:01Z hello", false}));
}

TEST_CASE("decider: a batch taken in runs of its lines (a time merge) gives the reference's records") {
  const uint64_t seed = sw::test::base_seed(20261126);
  CAPTURE(seed);
  const std::vector<std::string> lines = make_log(seed, 3000);
  const std::string expected = reference(kRules, lines);
  FakeHost host(kRules);
  host.clock_.advance(kLogSpan);  // the log runs past the clock's start: not the future
  Decider d("f.log", host, Decider::Options{}, INT64_MIN);
  const int fd = sw::test::memory_file(joined(lines));
  auto pipe = sw::pipeline::ParallelMatch::start(
      fd, {1 << 20, 1, true, {}, false, {}}, [&host] { return host.current(); }, host.clock_);
  std::mt19937_64 rng(seed);
  while (Batch* b = pipe->next()) {
    for (std::size_t at = 0; at < b->size();) {  // runs of 1 to 7 lines, as inputs interleave
      const std::size_t end = std::min(b->size(), at + 1 + rng() % 7);
      REQUIRE(d.take_matched(*b, at, end));
      at = end;
    }
    pipe->release(b);
  }
  pipe->stop();
  ::close(fd);
  CHECK(finish(host) == expected);
  CHECK(host.current()->engine->stats().lines.get() == lines.size());
}

TEST_CASE("decider: after a reload between two runs of a batch, the rest is matched again with the new rules") {
  FakeHost host(burst_rules("log", "FAIL"));
  Decider d("f.log", host, Decider::Options{}, INT64_MIN);
  const int fd =
      sw::test::memory_file("2026-11-21T10:00:01Z FAIL 1\n2026-11-21T10:00:02Z OOPS 2\n2026-11-21T10:00:03Z OOPS 3\n");
  sw::input::LineReader reader(fd);
  Batch b;
  b.fill(reader, true);
  REQUIRE(b.size() == 3);
  b.gen = host.current();
  auto m = sw::match::Matcher::make(*b.gen->rules);
  REQUIRE(m.ok());
  b.match(&*m, &*b.gen->logtime, 0);  // as a -j worker would, with the rules of the time
  ::close(fd);
  CHECK(d.take_matched(b, 0, 1));  // FAIL 1: one event of the old rule
  host.reload(burst_rules("log", "OOPS"));
  // The event's pattern changed, so the rule starts fresh (FAIL 1 is not
  // carried over): OOPS 2 and 3, matched again, make the alert; matched with
  // the old rules, nothing would.
  CHECK(d.take_matched(b, 1, 3));
  CHECK(host.sink.text() ==
        "swthrottle: alert burst count=2 threshold=2 window=10s suppressed=0 time=2026-11-21T10:00:03.000Z: "
        "2026-11-21T10:00:03Z OOPS 3\n");
}

// The lines through take() (a followed file) or take_read() (batches): the
// records, as text.
std::string decide_lines(FakeHost& host, const std::vector<std::string>& lines, bool batches) {
  Decider d("f.log", host, Decider::Options{}, INT64_MIN);
  REQUIRE(d.ready());
  if (!batches) {
    for (const auto& l : lines) CHECK(d.take(sw::input::Line{l, false}));
    return host.sink.text();
  }
  const int fd = sw::test::memory_file(joined(lines));
  sw::input::LineReader reader(fd);
  Batch b;
  b.fill(reader, false);
  CHECK(d.take_read(b));
  ::close(fd);
  return host.sink.text();
}

TEST_CASE("decider: a 2099 line in a live run does not move now, later alerts fire, it is reported once a minute") {
  for (bool batches : {false, true}) {
    CAPTURE(batches);
    FakeHost host(burst_rules("log", "FAIL"));  // the clock: 2026-11-21T10:00:00Z
    CHECK(decide_lines(host,
                       {
                           "2026-11-21T09:59:00Z FAIL a",
                           "2099-01-01T00:00:00Z INFO clock broken",
                           "2026-11-21T09:59:30Z FAIL b",
                           "2026-11-21T09:59:31Z FAIL c",
                       },
                       batches) ==
          "swthrottle: alert burst count=2 threshold=2 window=10s suppressed=0 time=2026-11-21T09:59:31.000Z: "
          "2026-11-21T09:59:31Z FAIL c\n");
    CHECK(host.warnings == std::vector<std::string>{
                               "f.log: line 2: timestamp 2099-01-01T00:00:00.000Z is more than 1m ahead of the wall "
                               "clock (2026-11-21T10:00:00.000Z); not trusted (setting max_future); the line is "
                               "decided at 2026-11-21T09:59:00.000Z: 2099-01-01T00:00:00Z INFO clock broken"});
    const auto& stats = host.current()->engine->stats();
    CHECK(stats.untrusted.get() == 1);
    CHECK(host.current()->engine->rule_stats(0).late.get() == 0);
    CHECK(host.newest == 1'795'255'171'000);  // 09:59:31Z: --state never sees 2099
  }
  // Later ones: a count, at most once a minute of wall clock.
  FakeHost host(burst_rules("log", "FAIL"));
  Decider d("f.log", host, Decider::Options{}, INT64_MIN);
  for (int i = 0; i < 3; ++i) CHECK(d.take(sw::input::Line{"2099-01-01T00:00:00Z FAIL x", false}));
  CHECK(host.warnings.size() == 1);
  host.clock_.advance(60'000);
  CHECK(d.take(sw::input::Line{"2099-01-01T00:00:00Z FAIL x", false}));
  REQUIRE(host.warnings.size() == 2);
  CHECK(host.warnings[0] ==
        "f.log: line 1: timestamp 2099-01-01T00:00:00.000Z is more than 1m ahead of the wall clock "
        "(2026-11-21T10:00:00.000Z); not trusted (setting max_future); the line is untimed: "
        "2099-01-01T00:00:00Z FAIL x");
  CHECK(host.warnings[1] == "f.log: 3 more lines with timestamps not trusted (see --stats: untrusted)");
  CHECK(host.sink.text().empty());
  CHECK(host.current()->engine->stats().untimed.get() == 4);
}

TEST_CASE("decider: the wall clock of a followed file is read for every line, so a quiet file trusts honest stamps") {
  FakeHost host(burst_rules("log", "FAIL"));
  Decider d("f.log", host, Decider::Options{}, INT64_MIN);
  CHECK(d.take(sw::input::Line{"2026-11-21T10:00:00Z FAIL a", false}));
  host.clock_.advance(3'600'000);  // an hour without a line
  CHECK(d.take(sw::input::Line{"2026-11-21T11:00:00Z FAIL b", false}));
  CHECK(d.take(sw::input::Line{"2026-11-21T11:00:01Z FAIL c", false}));
  CHECK(host.sink.text() ==
        "swthrottle: alert burst count=2 threshold=2 window=10s suppressed=0 time=2026-11-21T11:00:01.000Z: "
        "2026-11-21T11:00:01Z FAIL c\n");
  CHECK(host.warnings.empty());
}

TEST_CASE("decider: in a replay a lone line far ahead does not move now, a jump the next line confirms does") {
  {
    FakeHost host(burst_rules("log", "FAIL"));
    CHECK(decide_lines(host,
                       {
                           "2024-03-01T10:00:00Z FAIL a",
                           "2024-03-09T10:00:00Z INFO clock jumped",
                           "2024-03-01T10:00:05Z FAIL b",
                       },
                       true) ==
          "swthrottle: alert burst count=2 threshold=2 window=10s suppressed=0 time=2024-03-01T10:00:05.000Z: "
          "2024-03-01T10:00:05Z FAIL b\n");
    CHECK(host.warnings == std::vector<std::string>{
                               "f.log: line 2: timestamp 2024-03-09T10:00:00.000Z jumps more than 1d ahead of this "
                               "input's times; not trusted unless the next timestamp confirms it (setting max_jump); "
                               "the line is decided at 2024-03-01T10:00:00.000Z: 2024-03-09T10:00:00Z INFO clock "
                               "jumped"});
    CHECK(host.current()->engine->stats().untrusted.get() == 1);
    CHECK(host.current()->engine->rule_stats(0).late.get() == 0);
  }
  {
    FakeHost host(burst_rules("log", "FAIL"));
    CHECK(decide_lines(host,
                       {
                           "2024-03-01T10:00:00Z FAIL a",
                           "2024-03-09T10:00:00Z INFO back after a week",
                           "2024-03-09T10:00:01Z FAIL b",
                           "2024-03-09T10:00:02Z FAIL c",
                       },
                       false) ==
          "swthrottle: alert burst count=2 threshold=2 window=10s suppressed=0 time=2024-03-09T10:00:02.000Z: "
          "2024-03-09T10:00:02Z FAIL c\n");
    CHECK(host.current()->engine->stats().untrusted.get() == 1);
    CHECK(host.newest == 1'709'978'402'000);  // 2024-03-09T10:00:02Z
  }
}

TEST_CASE("decider: a sparse replay, a line every 2 hours, is decided at its own times") {
  FakeHost host(R"toml(
[settings]
time = "log"
[[rule]]
name = "slow"
kind = "alert"
threshold = "2 per 3h"
cooldown = "0"
  [[rule.event]]
  name = "fail"
  match = 'FAIL'
)toml");
  std::vector<std::string> lines;
  for (int h = 0; h < 10; h += 2) lines.push_back("2024-03-01T0" + std::to_string(h) + ":00:00Z FAIL");
  std::string want;
  for (int h = 2; h < 10; h += 2)
    want += "swthrottle: alert slow count=2 threshold=2 window=3h suppressed=0 time=2024-03-01T0" + std::to_string(h) +
            ":00:00.000Z: 2024-03-01T0" + std::to_string(h) + ":00:00Z FAIL\n";
  CHECK(decide_lines(host, lines, true) == want);
  CHECK(host.current()->engine->stats().untrusted.get() == 0);
}

// One alert rule, "burst": 3 lines with FAIL within 10 s, an alert each time.
const char* const kThreeFails = R"toml(
[settings]
time = "log"
[[rule]]
name = "burst"
kind = "alert"
threshold = "3 per 10s"
cooldown = "0"
  [[rule.event]]
  name = "fail"
  match = 'FAIL'
)toml";

// With timezone = "local", the hour repeated when daylight saving time ends.
TEST_CASE("decider: the second pass of a repeated local hour is not late, and windows count across it") {
  for (bool batches : {false, true}) {
    CAPTURE(batches);
    const sw::test::ScopedTz berlin("Europe/Berlin");  // 2026-10-25 03:00 CEST -> 02:00 CET
    FakeHost host(kThreeFails);
    CHECK(decide_lines(host,
                       {
                           "2026-10-25 02:59:58 FAIL a",        // CEST: 00:59:58Z
                           "2026-10-25 02:00:03 FAIL b",        // the second pass, CET: 01:00:03Z
                           "2026-10-25 02:00:04+02:00 FAIL c",  // its own offset: 00:00:04Z, late
                           "2026-10-25 02:00:06 FAIL d",        // still the second pass: a, b, d
                       },
                       batches) ==
          "swthrottle: alert burst count=3 threshold=3 window=10s suppressed=0 time=2026-10-25T01:00:06.000Z: "
          "2026-10-25 02:00:06 FAIL d\n");
    CHECK(host.current()->engine->rule_stats(0).late.get() == 1);
    CHECK(host.newest == 1'792'890'006'000);  // 01:00:06Z
  }
  {
    const sw::test::ScopedTz new_york("America/New_York");  // 2026-11-01 02:00 EDT -> 01:00 EST
    FakeHost host(kThreeFails);
    CHECK(decide_lines(host,
                       {
                           "2026-11-01 01:59:58 FAIL a",  // EDT: 05:59:58Z
                           "2026-11-01 01:00:03 FAIL b",  // EST: 06:00:03Z
                           "2026-11-01 01:00:04 FAIL c",
                       },
                       false) ==
          "swthrottle: alert burst count=3 threshold=3 window=10s suppressed=0 time=2026-11-01T06:00:04.000Z: "
          "2026-11-01 01:00:04 FAIL c\n");
    CHECK(host.current()->engine->rule_stats(0).late.get() == 0);
  }
}

// A named zone's repeated hour is read as the local zone's is, whatever TZ
// says: here Sydney's, when AEDT (+11) ends on 2026-04-05 at 03:00.
TEST_CASE("decider: the second pass of a named zone's repeated hour, in the southern hemisphere") {
  const sw::test::ScopedTz elsewhere("Europe/Berlin");
  std::string rules = kThreeFails;
  rules.replace(rules.find("time = \"log\""), 12, "time = \"log\"\ntimezone = \"Australia/Sydney\"");
  for (bool batches : {false, true}) {
    CAPTURE(batches);
    FakeHost host(rules.c_str());
    CHECK(decide_lines(host,
                       {
                           "2026-04-05 02:59:58 FAIL a",        // AEDT: 15:59:58Z
                           "2026-04-05 02:00:03 FAIL b",        // the second pass, AEST: 16:00:03Z
                           "2026-04-05 02:00:04+11:00 FAIL c",  // its own offset: 15:00:04Z, late
                           "2026-04-05 02:00:06 FAIL d",        // still the second pass: a, b, d
                       },
                       batches) ==
          "swthrottle: alert burst count=3 threshold=3 window=10s suppressed=0 time=2026-04-04T16:00:06.000Z: "
          "2026-04-05 02:00:06 FAIL d\n");
    CHECK(host.current()->engine->rule_stats(0).late.get() == 1);
    CHECK(host.newest == 1'775'318'406'000);  // 16:00:06Z
  }
}

TEST_CASE("decider: a line a moment out of order in the first pass of a repeated hour stays in the first pass") {
  const sw::test::ScopedTz berlin("Europe/Berlin");
  FakeHost host(kThreeFails);
  CHECK(decide_lines(host,
                     {
                         "2026-10-25 02:10:00 FAIL a",  // 00:10:00Z
                         "2026-10-25 02:09:55 FAIL b",  // 00:09:55Z, not the second pass (01:09:55Z)
                         "2026-10-25 02:10:01 FAIL c",
                     },
                     false) ==
        "swthrottle: alert burst count=3 threshold=3 window=10s suppressed=0 time=2026-10-25T00:10:01.000Z: "
        "2026-10-25 02:10:01 FAIL c\n");
}

}  // namespace
