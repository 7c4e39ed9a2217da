// Watched rules and sequences through the real binary (man page: SILENCE AND
// SEQUENCES): the same records whatever -j, through a pipe and read whole;
// and --state carrying keys, warm-ups, pending `for`s and armed sequences
// from one run over a slice of a log to the next, so that the runs write
// the records of one run over the whole log, wherever the log is cut.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/seed.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

RunResult swt(const std::vector<std::string>& args, const std::string& in = "") {
  return swthrottle::test::run_swthrottle(args, in);
}

constexpr int64_t kStartMs = 1'795'255'200'000;  // 2026-11-21T10:00:00Z

std::string rfc3339_ms(int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[80];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buf;
}

// Two hours of 40 hosts beating every 20 s, each host going silent now and
// then for 1 to 8 minutes (some for good), all of them for 3 minutes once; jobs that start and finish after
// 1 to 20 minutes (some never); logins from 12 addresses, some after a run
// of failures. A line every 2 s at least (a worker's), in time order.
std::string generate_log(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto below = [&](uint64_t n) { return static_cast<int64_t>(rng() % n); };
  struct Line {
    int64_t t;
    std::string text;
  };
  std::vector<Line> lines;
  constexpr int64_t kEnd = 2 * 3'600'000;
  for (int h = 0; h < 40; ++h) {
    int64_t t = below(20'000);
    const bool dies = below(10) == 0;
    const int64_t death = dies ? 1'800'000 + below(3'600'000) : kEnd;
    while (t < std::min(kEnd, death)) {
      // A network outage from 50 to 53 minutes: no host is heard from.
      if (t < 3'000'000 || t >= 3'180'000) lines.push_back({t, "heartbeat from host-" + std::to_string(h)});
      t += below(50) == 0 ? 60'000 + below(420'000) : 20'000 + below(400);
    }
  }
  for (int j = 0; j < 150; ++j) {
    const int64_t start = below(kEnd - 60'000);
    lines.push_back({start, "job " + std::to_string(1000 + j) + " started"});
    if (below(8) != 0)
      lines.push_back({start + 60'000 + below(1'140'000), "job " + std::to_string(1000 + j) + " finished"});
  }
  for (int64_t t = 0; t < kEnd; t += 1'000 + below(1'000)) {
    const std::string ip = "10.9.0." + std::to_string(below(12));
    if (below(4) == 0) {
      const int fails = static_cast<int>(below(8));
      for (int k = 0; k < fails; ++k) lines.push_back({t + k * 700, "Failed password for root from " + ip});
      lines.push_back({t + fails * 700 + below(900'000), "Accepted password for root from " + ip});
    }
    lines.push_back({t, "worker: queue depth " + std::to_string(below(30))});
  }
  std::stable_sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) { return a.t < b.t; });
  std::string out;
  for (const Line& l : lines)
    if (l.t < kEnd) out += rfc3339_ms(kStartMs + l.t) + " " + l.text + "\n";
  return out;
}

const char* const kRules = R"toml(
[settings]
time = "log"
timezone = "UTC"

[[rule]]
name = "heartbeat"
kind = "alert"
window = "1m"
when = "hb < 1"
key = "{host}"
resolve = true
  [[rule.event]]
  name = "hb"
  match = 'heartbeat from (?P<host>\S+)'

[[rule]]
name = "few-beats"
kind = "alert"
window = "2m"
when = "hb < 4"
key = "{host}"
forget = "10m"
mode = "accurate"
  [[rule.event]]
  name = "hb"
  match = 'heartbeat from (?P<host>\S+)'

[[rule]]
name = "all-quiet"
kind = "alert"
window = "30s"
buckets = 6
when = "hb < 1"
resolve = true
  [[rule.event]]
  name = "hb"
  match = 'heartbeat from '

[[rule]]
name = "job-late"
kind = "alert"
window = "30m"
buckets = 30
when = "started >= 1 and finished < 1"
for = "15m"
key = "{job}"
resolve = true
  [[rule.event]]
  name = "started"
  match = 'job (?P<job>\d+) started'
  [[rule.event]]
  name = "finished"
  match = 'job (?P<job>\d+) finished'

[[rule]]
name = "login-after-failures"
kind = "alert"
window = "5m"
when = "failed >= 4"
then = "accepted >= 1"
within = "5m"
cooldown = "1m"
key = "{ip}"
  [[rule.event]]
  name = "failed"
  match = 'Failed password for \S+ from (?P<ip>\S+)'
  [[rule.event]]
  name = "accepted"
  match = 'Accepted password for \S+ from (?P<ip>\S+)'
)toml";

std::size_t count_of(const std::string& out, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = 0; (p = out.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

}  // namespace

TEST_CASE("silence e2e: watched rules and sequences write the same records whatever -j") {
  TempDir dir;
  const uint64_t seed = swthrottle::test::base_seed(33);
  INFO("seed " << seed << " (SWTHROTTLE_SEED replays it)");
  const std::string log = generate_log(seed);
  const std::string logfile = dir.write("agents.log", log);
  const std::string rules = dir.write("rules.toml", kRules);
  const RunResult one = swt({"-r", rules, "--format", "json", "-j", "1", logfile});
  REQUIRE(one.exit_status == 0);
  CHECK(one.err == "");
  // Real work: every rule alerts, silence at checks (no line) and lines alike.
  for (const std::string rule : {"heartbeat", "few-beats", "all-quiet", "job-late", "login-after-failures"}) {
    CAPTURE(rule);
    CHECK(count_of(one.out, "\"rule\":\"" + rule + "\"") >= 2);
  }
  std::size_t silent = 0, with_line = 0;
  for (std::size_t p = 0; p < one.out.size();) {
    const std::size_t e = one.out.find('\n', p);
    const std::string record = one.out.substr(p, e - p);
    if (record.find("\"type\":\"alert\"") != std::string::npos)
      ++(record.find("\"line\":") == std::string::npos ? silent : with_line);
    p = e + 1;
  }
  CHECK(silent > 10);
  CHECK(with_line > 10);
  CHECK(count_of(one.out, "\"type\":\"resolved\"") > 10);
  for (const char* j : {"2", "4"}) {
    CAPTURE(j);
    const RunResult r = swt({"-r", rules, "--format", "json", "-j", j, logfile});
    CHECK(r.exit_status == 0);
    CHECK(r.out == one.out);
  }
  CHECK(swt({"-r", rules, "--format", "json", "-j", "2"}, log).out == one.out);  // through a pipe
}

TEST_CASE("silence e2e: --state carries the watch from one slice of a log to the next, wherever it is cut") {
  TempDir dir;
  const uint64_t seed = swthrottle::test::base_seed(3333);
  INFO("seed " << seed << " (SWTHROTTLE_SEED replays it)");
  const std::string log = generate_log(seed);
  const std::string rules = dir.write("rules.toml", kRules);
  const RunResult whole = swt({"-r", rules, "--format", "json", dir.write("whole.log", log)});
  REQUIRE(whole.exit_status == 0);
  // Cut the log into slices at random lines (a pending for, a warm-up, an
  // armed sequence are cut through somewhere), one run per slice with --state.
  std::vector<std::string> lines;
  for (std::size_t p = 0; p < log.size();) {
    const std::size_t e = log.find('\n', p);
    lines.push_back(log.substr(p, e - p + 1));
    p = e + 1;
  }
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> cuts{0};
  for (int k = 0; k < 6; ++k) cuts.push_back(1 + rng() % (lines.size() - 1));
  cuts.push_back(lines.size());
  std::sort(cuts.begin(), cuts.end());
  const std::string state = dir.file("state.json");
  std::string slices;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    std::string part;
    for (std::size_t i = cuts[k]; i < cuts[k + 1]; ++i) part += lines[i];
    const RunResult r =
        swt({"-r", rules, "--format", "json", "--state", state, dir.write("part" + std::to_string(k) + ".log", part)});
    CHECK(r.exit_status == 0);
    CHECK(r.err == "");
    slices += r.out;
  }
  CHECK(slices == whole.out);
  // What it carried: each key's watch (and a pending job, somewhere).
  const std::string saved = swthrottle::test::read_file(state);
  CHECK(saved.find("\"watch\":{\"since_ms\":") != std::string::npos);
  CHECK(count_of(whole.out, "\"rule\":\"job-late\"") > 2);
}
