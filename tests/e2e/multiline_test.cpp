// `multiline` through the real binary on a log of many batches (events cross
// the batch boundaries of -j 1 and of -j 2's reader): the records are the same
// for a file with -j 1 and -j 2 and for standard input, an event count the
// log's generator knows, passthrough of what nothing matches is the input
// byte for byte, and an over-long trace is cut and counted in --stats.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::contains;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

RunResult swt(const std::vector<std::string>& args, const std::string& input = "") {
  return swthrottle::test::run_swthrottle(args, input);
}

// 6000 events, one every 100 ms from 10:00:00: every third an NPE trace of
// 1 to 37 frames, every third an IOException with a cause, the rest single
// lines; threads t0..t6.
std::string traces_log() {
  std::string log;
  for (int i = 0; i < 6000; ++i) {
    const int ms = i * 100;
    char stamp[64];
    std::snprintf(stamp, sizeof stamp, "2026-11-21T10:%02d:%02d.%03dZ", ms / 60'000, ms / 1000 % 60, ms % 1000);
    log += std::string(stamp) + " ERROR [t" + std::to_string(i % 7) + "] op " + std::to_string(i) + " failed\n";
    if (i % 3 == 0) {
      log += "java.lang.NullPointerException: op " + std::to_string(i) + "\n";
      for (int f = 0; f < i % 37 + 1; ++f)
        log += "\tat c.e.Op.step" + std::to_string(f) + "(Op.java:" + std::to_string(f) + ")\n";
      log += "\t... 12 more\n";
    } else if (i % 3 == 1) {
      log +=
          "java.io.IOException: broken pipe\n\tat c.e.Io.write(Io.java:3)\nCaused by: java.net.SocketException: reset\n"
          "\t... 4 more\n";
    }
  }
  return log;
}

const char* const kRules = R"(
[settings]
time = "log"
timestamp = "rfc3339"
multiline = "java"
[[rule]]
name = "npe"
kind = "throttle"
threshold = "3 per 10s"
key = "{thread}"
  [[rule.event]]
  name = "npe"
  match = '^\S+ ERROR \[(?P<thread>\w+)\][^\n]*\njava\.lang\.NullPointerException'
)";

}  // namespace

TEST_CASE("multiline: a log of many batches gives the same records with -j 1, -j 2 and on standard input") {
  TempDir dir;
  const std::string log_text = traces_log();
  const std::string log = dir.write("app.log", log_text);
  const std::string rules = dir.write("rules.toml", kRules);
  for (bool pass : {false, true}) {
    CAPTURE(pass);
    std::vector<std::string> args{"--rule", rules, "--stats"};
    if (pass) args.emplace_back("--passthrough");
    auto with = [&](std::vector<std::string> more) {
      std::vector<std::string> a = args;
      a.insert(a.end(), more.begin(), more.end());
      return a;
    };
    const RunResult j1 = swt(with({"-j", "1", log}));
    const RunResult j2 = swt(with({"-j", "2", log}));
    const RunResult in = swt(with({"-"}), log_text);
    REQUIRE(j1.exit_status == 0);
    CHECK(j2.exit_status == 0);
    CHECK(in.exit_status == 0);
    CHECK(j2.out == j1.out);
    CHECK(in.out == j1.out);
    // 6000 events; the 2000 NPE traces all match.
    CHECK(contains(j1.err, "swthrottle: stats: lines 6000 matched 2000 "));
    CHECK(contains(j1.err, " cut 0\n"));
    CHECK(j2.err == j1.err);
    // Each trace passed is written whole: its "... 12 more" line ends it.
    std::size_t passed_npe = 0;
    for (std::size_t at = j1.out.find("\njava.lang.NullPointerException"); at != std::string::npos;
         at = j1.out.find("\njava.lang.NullPointerException", at + 1)) {
      ++passed_npe;
      const std::size_t end = j1.out.find("\t... 12 more\n", at);
      REQUIRE(end != std::string::npos);
      CHECK(j1.out.substr(at, end - at).find(" ERROR [") == std::string::npos);
    }
    CHECK(passed_npe > 0);
    CHECK(passed_npe < 2000);
  }
}

TEST_CASE("multiline: with --passthrough and a rule that matches nothing, the output is the input") {
  TempDir dir;
  const std::string log_text = traces_log();
  const std::string rules = dir.write("rules.toml", R"(
[settings]
multiline = "java"
[[rule]]
name = "none"
kind = "throttle"
threshold = "1 per 1s"
  [[rule.event]]
  name = "none"
  match = 'no such text'
)");
  for (const char* j : {"1", "2"}) {
    CAPTURE(j);
    const RunResult r = swt({"--rule", rules, "--passthrough", "-j", j, dir.write("app.log", log_text)});
    CHECK(r.exit_status == 0);
    CHECK(r.out == log_text);
  }
}

TEST_CASE("multiline: a trace of 1200 frames is cut at 500 lines twice, --stats counts the cuts") {
  TempDir dir;
  std::string log = "head\nERROR x\n";
  for (int f = 0; f < 1199; ++f) log += "\tat f" + std::to_string(f) + "\n";
  log += "tail\n";
  const std::string rules = dir.write("rules.toml", R"(
[settings]
multiline = "java"
[[rule]]
name = "frames"
kind = "throttle"
threshold = "10 per 1s"
  [[rule.event]]
  name = "f"
  match = '^\tat f'
)");
  const RunResult r = swt({"--rule", rules, "--stats", "--passthrough", "-"}, log);
  CHECK(r.exit_status == 0);
  // head; ERROR x + 499 frames; 500 frames; 200 frames; tail. The two events
  // the cuts started begin with a frame: they match `^\tat f`.
  CHECK(contains(r.err, "swthrottle: stats: lines 5 matched 2 written 5 truncated 0 untimed 0 untrusted 0 cut 2\n"));
  CHECK(r.out == log);
}

TEST_CASE("multiline: --check shows the setting in [settings] and per input") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"(
[settings]
multiline = "java"
[[settings.input]]
path = "*.py.log"
multiline = { start = '^\d' }
[[rule]]
name = "r"
kind = "throttle"
threshold = "1 per 1s"
  [[rule.event]]
  name = "e"
  match = 'x'
)");
  const RunResult r = swt({"--rule", rules, "--check"});
  CHECK(r.exit_status == 0);
  CHECK(contains(r.out, "settings: time arrival, multiline java\n"));
  CHECK(contains(r.out,
                 "input *.py.log: timestamp as [settings], timezone as [settings], multiline { start = '^\\d' }\n"));
}

TEST_CASE("multiline: --explain shows an event under its first line's number") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"(
[settings]
multiline = "java"
[[rule]]
name = "npe"
kind = "throttle"
threshold = "5 per 1m"
  [[rule.event]]
  name = "npe"
  match = '\njava\.lang\.NullPointerException'
)");
  const std::string log = dir.write("app.log",
                                    "ERROR a\njava.lang.NullPointerException: a\n\tat x\n"
                                    "INFO b\n"
                                    "ERROR c\njava.lang.NullPointerException: c\n");
  const RunResult r = swt({"--rule", rules, "--explain", log});
  CHECK(r.exit_status == 0);
  CHECK(contains(r.out, "explain: " + log + ":1: ERROR a\\njava.lang.NullPointerException: a\\n\\tat x\n"));
  CHECK(contains(r.out, "explain: " + log + ":5: ERROR c\\njava.lang.NullPointerException: c\n"));
}
