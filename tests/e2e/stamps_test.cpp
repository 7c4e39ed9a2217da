// End-to-end tests of timestamps that the settings do not read (DESIGN.md §4
// "Missing time is loud"): the warning on stderr, --check FILE, the forms
// auto reads, and the timestamp setting per input.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

RunResult swt(const std::vector<std::string>& args, const std::string& input = "") {
  return swthrottle::test::run_swthrottle(args, input);
}

const std::string kLogRules = R"([settings]
time = "log"
timezone = "UTC"

[[rule]]
name      = "errors"
kind      = "alert"
threshold = "2 per 10s"
  [[rule.event]]
  name  = "error"
  match = 'ERROR'
)";

TEST_CASE("e2e stamps: an input without a timestamp is reported once, with a sample line") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogRules);
  const std::string log = dir.write("app.log",
                                    "\n"
                                    "level=error msg=\"ERROR one\"\n"
                                    "level=error msg=\"ERROR two\"\n");
  RunResult r = swt({"-r", rules, log});
  CHECK(r.exit_status == 0);
  CHECK(r.out == "");  // untimed: the alert rule never sees two events in a window
  CHECK(r.err == "swthrottle: " + log +
                     ": no timestamp in its 3 lines under time = \"log\": e.g. \"level=error msg=\"ERROR one\"\"; set "
                     "timestamp in [settings] or a [[settings.input]] (swthrottle -r RULES --check " +
                     log + " shows the forms that read it)\n");

  // Standard input is named as such; a stamped input is not reported.
  r = swt({"-r", rules}, "no stamp here\n");
  CHECK(r.err ==
        "swthrottle: (standard input): no timestamp in its 1 line under time = \"log\": e.g. \"no stamp "
        "here\"; set timestamp in [settings] or a [[settings.input]] (swthrottle -r RULES --check - shows the forms "
        "that read it)\n");
  r = swt({"-r", rules}, "no stamp yet\n2026-11-21T10:00:00Z ok\n");
  CHECK(r.err == "");
  // time = arrival needs no stamps.
  r = swt({"-r", rules, "--time", "arrival"}, "no stamp here\n");
  CHECK(r.err == "");
}

// A followed file is live: a quiet one may take days to reach 1000 lines
// (the minute that also ends the wait is stamp_watch_test's and app_test's).
TEST_CASE("e2e stamps: a followed file is reported after 10 lines without one, the metric says which input") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogRules);
  std::string ten;
  for (int i = 0; i < 10; ++i) ten += "sshd[" + std::to_string(i) + "]: Accepted publickey\n";
  const std::string quiet = dir.write("auth.log", ten);
  const std::string stamped_later = dir.write("app.log", ten + "2026-11-21T10:00:00Z ok\n");
  const std::string prom = dir.file("swthrottle.prom");
  swthrottle::test::Process p =
      swthrottle::test::Process::spawn({SWTHROTTLE_BINARY, "-r", rules, "--passthrough", "--metrics-file", prom,
                                        "--follow", "--from-start", quiet, stamped_later});
  const auto report = [&](const std::string& log) {
    return "swthrottle: " + log +
           ": no timestamp in the first 10 lines under time = \"log\": e.g. \"sshd[0]: Accepted publickey\"; set "
           "timestamp in [settings] or a [[settings.input]] (swthrottle -r RULES --check " +
           log + " shows the forms that read it)\n";
  };
  CHECK(p.read_stderr_until([&](const std::string& err) {
    return err.find(report(quiet)) != std::string::npos && err.find(report(stamped_later)) != std::string::npos;
  }));
  CHECK(p.read_stdout_until([](const std::string& out) { return out.find("Z ok\n") != std::string::npos; }));
  REQUIRE(p.send_signal(SIGTERM));
  const RunResult r = p.wait();
  CHECK(r.exit_status == 0);
  CHECK(r.err.size() == report(quiet).size() + report(stamped_later).size());  // once each
  // At exit: still none from auth.log; app.log has given one since.
  const std::string metrics = swthrottle::test::read_file(prom);
  CHECK(metrics.find("swthrottle_input_no_timestamp{input=\"" + quiet + "\"} 1\n") != std::string::npos);
  CHECK(metrics.find("swthrottle_input_no_timestamp{input=\"" + stamped_later + "\"} 0\n") != std::string::npos);
}

TEST_CASE("e2e stamps: a long input is reported after 1000 lines, not at its end") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogRules);
  std::string input;
  for (int i = 0; i < 1500; ++i) input += "line " + std::to_string(i) + "\n";
  RunResult r = swt({"-r", rules}, input);
  CHECK(r.exit_status == 0);
  CHECK(r.err ==
        "swthrottle: (standard input): no timestamp in the first 1000 lines under time = \"log\": e.g. "
        "\"line 0\"; set timestamp in [settings] or a [[settings.input]] (swthrottle -r RULES --check - shows the "
        "forms that read "
        "it)\n");
}

}  // namespace

namespace {

// The --check summary of kLogRules with timestamp = TS, for the rules file at
// `path`, where the rule starts at line `at`.
std::string summary(const std::string& path, const std::string& ts, int at = 5) {
  return "settings: time log, timestamp " + ts +
         ", timezone UTC\n"
         "rule errors (" +
         path + ":" + std::to_string(at) +
         "): alert 2 per 10s, 10 buckets of 1s, efficient mode\n"
         "  event error: ERROR\n"
         "  cooldown: 10s\n"
         "prefilter: 1 literal: \"error\"\n"
         "1 rule OK\n";
}

TEST_CASE("e2e stamps: --check FILE says what the timestamp setting reads, and which forms would") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", "[settings]\ntimestamp = \"rfc3339\"\n" + kLogRules.substr(11));
  const std::string nginx = dir.write("error.log",
                                      "2026/11/21 10:00:05 [error] 7#7: *1 ERROR open() failed\n"
                                      "2026/11/21 10:00:06 [error] 7#7: *2 ERROR open() failed\n"
                                      "  continued\n");
  const std::string iso = dir.write("app.log",
                                    "starting\n"
                                    "2026-11-21T10:00:05.250+01:00 ERROR x\n");
  RunResult r = swt({"-r", rules, "--check", nginx, iso});
  CHECK(r.exit_status == 2);  // error.log gives no timestamp under time = "log"
  CHECK(r.err == "");
  CHECK(r.out == summary(rules, "rfc3339", 6) + "input " + nginx +
                     ": timestamp rfc3339 reads none of 3 lines; e.g. line 1: \"2026/11/21 10:00:05 [error] 7#7: *1 "
                     "ERROR open() failed\"\n"
                     "  timestamp = \"auto\" reads 2; first 2026-11-21T10:00:05.000Z from line 1: \"2026/11/21 "
                     "10:00:05 [error] 7#7: *1 ERROR open() failed\"\n"
                     "  timestamp = \"ymd_slash\" reads 2; first 2026-11-21T10:00:05.000Z from line 1: \"2026/11/21 "
                     "10:00:05 [error] 7#7: *1 ERROR open() failed\"\n"
                     "  set timestamp = \"auto\" in [settings]\n"
                     "input " +
                     iso +
                     ": timestamp rfc3339 reads 1 of 2 lines; first 2026-11-21T09:00:05.250Z from line 2: "
                     "\"2026-11-21T10:00:05.250+01:00 ERROR x\"\n");

  // Every line read: exit 0. Nothing reads it: the setting to write instead.
  r = swt({"-r", rules, "--check", iso});
  CHECK(r.exit_status == 0);
  const std::string plain = dir.write("plain.log", "\nhello\n");
  r = swt({"-r", rules, "--check", plain});
  CHECK(r.exit_status == 2);
  CHECK(r.out == summary(rules, "rfc3339", 6) + "input " + plain +
                     ": timestamp rfc3339 reads none of 2 lines; e.g. line 2: \"hello\"\n"
                     "  no built-in form reads more: set timestamp to a strptime format, or to { match = 'REGEX', "
                     "format = \"...\" } (swthrottle(1), Timestamps)\n");
  // Under time = arrival the report is the same, and not a failure.
  r = swt({"-r", rules, "--time", "arrival", "--check", plain});
  CHECK(r.exit_status == 0);
  // A missing file fails; standard input is read as "-".
  r = swt({"-r", rules, "--check", dir.file("missing.log")});
  CHECK(r.exit_status == 2);
  CHECK(r.out == summary(rules, "rfc3339", 6) + "input " + dir.file("missing.log") +
                     ": cannot open: No such file or directory\n");
  r = swt({"-r", rules, "--check", "-"}, "Nov 21 10:00:05 host x\n");
  CHECK(r.exit_status == 2);
  // (The year of a syslog stamp depends on today: the lines are compared without it.)
  CHECK(r.out.find("input (standard input): timestamp rfc3339 reads none of 1 line; e.g. line 1: \"Nov 21 "
                   "10:00:05 host x\"\n"
                   "  timestamp = \"auto\" reads 1; first ") != std::string::npos);
  CHECK(
      r.out.ends_with("-11-21T10:00:05.000Z from line 1: \"Nov 21 10:00:05 host x\"\n"
                      "  set timestamp = \"auto\" in [settings]\n"));
}

// The issue's case: a stamp quoted in the message (a certificate's expiry)
// is older than the line's own "ts"; leftmost, it made the line late and
// the next one untrusted. The field decides, and --check names it.
TEST_CASE("e2e stamps: a JSON line takes its time from its stamp field, not from its message") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogRules);
  const std::string log =
      dir.write("app.json", R"({"msg":"ERROR cert expired at 2025-06-01T00:00:00Z","ts":"2026-01-01T00:00:00Z"})"
                            "\n"
                            R"({"time":1767225601.5,"msg":"ERROR again, see 2024-01-01T00:00:00Z"})"
                            "\n");
  RunResult r = swt({"-r", rules, "--stats", log});
  CHECK(r.exit_status == 0);
  CHECK(r.out ==
        "swthrottle: alert errors count=2 threshold=2 window=10s suppressed=0 time=2026-01-01T00:00:01.500Z: "
        "{\"time\":1767225601.5,\"msg\":\"ERROR again, see 2024-01-01T00:00:00Z\"}\n");
  CHECK(r.err.find(" late 0 ") != std::string::npos);
  r = swt({"-r", rules, "--check", log});
  CHECK(r.exit_status == 0);
  CHECK(r.out.ends_with(
      ": timestamp auto reads 2 of 2 lines; first 2026-01-01T00:00:00.000Z from line 1 (its "
      "field \"ts\"): \"{\"msg\":\"ERROR cert expired at 2025-06-01T00:00:00Z\",\"ts\":\"2026-01-01T00:00:"
      "00Z\"}\"\n"));
}

TEST_CASE("e2e stamps: --check FILE reads only the first 1000 lines") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogRules);
  std::string log;
  for (int i = 0; i < 1200; ++i) log += "2026-11-21T10:00:00Z line\n";
  const std::string path = dir.write("big.log", log);
  RunResult r = swt({"-r", rules, "--check", path});
  CHECK(r.exit_status == 0);
  CHECK(r.out == summary(rules, "auto") + "input " + path +
                     ": timestamp auto reads 1000 of the first 1000 lines; first 2026-11-21T10:00:00.000Z from line "
                     "1: \"2026-11-21T10:00:00Z line\"\n");
}

}  // namespace

namespace {

// The records of a run, one per line, sorted: inputs read at once write in
// whatever order their threads come.
std::vector<std::string> sorted_lines(const std::string& out) {
  std::vector<std::string> lines;
  for (std::size_t at = 0, end; at < out.size(); at = end + 1) {
    end = out.find('\n', at);
    if (end == std::string::npos) end = out.size();
    lines.push_back(out.substr(at, end - at));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST_CASE("e2e stamps: [[settings.input]] gives two files of different formats their own timestamp") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"([settings]
time = "log"
timezone = "UTC"
timestamp = "rfc3339"

[[settings.input]]
path = "*/nginx-error.log"
timestamp = "ymd_slash"

[[settings.input]]
path = "*.json"
timestamp = "json_epoch"

[[rule]]
name      = "errors"
kind      = "alert"
threshold = "2 per 1m"
key       = "{src}"
  [[rule.event]]
  name  = "error"
  match = 'ERROR src=(?P<src>\w+)'
)");
  // Both files end at 10:00:01, so each alert is at 10:00:01 whichever file
  // is read first (1m windows of 6s buckets: no line is late).
  const std::string nginx = dir.write("nginx-error.log",
                                      "2026/11/21 10:00:00 [error] 7#7: ERROR src=nginx a\n"
                                      "2026/11/21 10:00:01 [error] 7#7: ERROR src=nginx b\n");
  const std::string json = dir.write("app.json",
                                     "{\"ts\":1795255200.250,\"msg\":\"ERROR src=json a\"}\n"
                                     "{\"ts\":1795255201,\"msg\":\"ERROR src=json b\"}\n");
  for (const char* threads : {"1", "2"}) {  // -j 2: the lines are read by workers, each with the input's reader
    CAPTURE(threads);
    RunResult r = swt({"-r", rules, "-j", threads, nginx, json});
    CHECK(r.exit_status == 0);
    CHECK(r.err == "");
    CHECK(sorted_lines(r.out) ==
          std::vector<std::string>{
              "swthrottle: alert errors key=json count=2 threshold=2 window=1m suppressed=0 "
              "time=2026-11-21T10:00:01.000Z: {\"ts\":1795255201,\"msg\":\"ERROR src=json b\"}",
              "swthrottle: alert errors key=nginx count=2 threshold=2 window=1m suppressed=0 "
              "time=2026-11-21T10:00:01.000Z: 2026/11/21 10:00:01 [error] 7#7: ERROR src=nginx b",
          });
  }
  // --check lists the entries, and reads each file with its own.
  RunResult c = swt({"-r", rules, "--check", nginx, json});
  CHECK(c.exit_status == 0);
  CHECK(
      c.out.starts_with("settings: time log, timestamp rfc3339, timezone UTC\n"
                        "input */nginx-error.log: timestamp ymd_slash, timezone as [settings]\n"
                        "input *.json: timestamp json_epoch, timezone as [settings]\n"
                        "rule errors ("));
  CHECK(c.out.ends_with(
      "1 rule OK\n"
      "input " +
      nginx +
      ": timestamp ymd_slash ([[settings.input]] path = \"*/nginx-error.log\") reads 2 of 2 lines; first "
      "2026-11-21T10:00:00.000Z from line 1: \"2026/11/21 10:00:00 [error] 7#7: ERROR src=nginx a\"\n"
      "input " +
      json +
      ": timestamp json_epoch ([[settings.input]] path = \"*.json\") reads 2 of 2 lines; first "
      "2026-11-21T10:00:00.250Z from line 1: \"{\"ts\":1795255200.250,\"msg\":\"ERROR src=json a\"}\"\n"));
  // An input no entry matches takes [settings] (rfc3339 here): its lines are untimed, and said so.
  RunResult r = swt({"-r", rules, "-"}, "2026/11/21 10:00:00 ERROR src=stdin a\n");
  CHECK(r.out == "");
  CHECK(r.err.starts_with("swthrottle: (standard input): no timestamp in its 1 line"));
}

}  // namespace
