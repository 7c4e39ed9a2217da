// End-to-end tests of the default time (DESIGN.md §4, man page: time in
// [settings]): with no `time` set, a replayed file whose lines carry
// timestamps is decided by log time; standard input stays on arrival time
// and says once that its timestamps are ignored; an explicit time is never
// second-guessed.
#include <doctest/doctest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "support/compress.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::Process;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

RunResult swt(const std::vector<std::string>& args, const std::string& input = "") {
  return swthrottle::test::run_swthrottle(args, input);
}

// No `time`: the run chooses.
const std::string kRules = R"([[rule]]
name      = "errors"
kind      = "alert"
threshold = "3 per 1h"
  [[rule.event]]
  name  = "error"
  match = 'ERROR'
)";

// 2026-11-20T05:00:00Z for h = 5.
std::string fmt_hour(int h) { return "2026-11-20T" + std::string(h < 10 ? "0" : "") + std::to_string(h) + ":00:00Z"; }

// The issue's case: a day with one error an hour. Log time sees one error
// in any hour (no alert); arrival time sees them all in the same second.
std::string one_error_an_hour() {
  std::string day;
  for (int h = 0; h < 24; ++h) day += fmt_hour(h) + " ERROR disk full\n";
  return day;
}

const std::string kAlert = "swthrottle: alert errors count=3 threshold=3 window=1h ";

std::string notice(const std::string& shown, int stamped, int read, const std::string& why) {
  return "swthrottle: " + shown + ": its lines carry timestamps (" + std::to_string(stamped) + " of " +
         std::to_string(read) + " read), but time is \"arrival\" by default here (" + why +
         "): lines are counted when they are read; set time = \"log\" in [settings] or pass --time log to decide by "
         "their timestamps, or set time = \"arrival\" to keep arrival time without this notice\n";
}

TEST_CASE("e2e default time: a replayed file whose lines carry timestamps is decided by log time") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string day = dir.write("day.log", one_error_an_hour());
  RunResult r = swt({"-r", rules, day});
  CHECK(r.exit_status == 0);
  CHECK(r.out == "");  // never 3 errors in one hour of the log
  CHECK(r.err == "");
  // What --time log gives, compressed or not; --time arrival is a choice:
  // the alert, and no notice.
  const std::string gz = dir.write("day.log.1.gz", swthrottle::test::gzip_bytes(one_error_an_hour()));
  CHECK(swt({"-r", rules, "--time", "log", day}).out == r.out);
  CHECK(swt({"-r", rules, gz}).out == r.out);
  RunResult arrival = swt({"-r", rules, "--time", "arrival", day});
  CHECK(arrival.out.rfind(kAlert, 0) == 0);
  CHECK(arrival.err == "");
}

TEST_CASE("e2e default time: standard input stays on arrival time and says once that its timestamps are ignored") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  RunResult r = swt({"-r", rules}, one_error_an_hour());
  CHECK(r.exit_status == 0);
  CHECK(r.out.rfind(kAlert, 0) == 0);
  CHECK(r.err == notice("(standard input)", 5, 5, "standard input is read as it comes"));
  // `-` is standard input too; lines without timestamps have nothing to say.
  CHECK(swt({"-r", rules, "-"}, one_error_an_hour()).err == r.err);
  CHECK(swt({"-r", rules}, "ERROR a\nERROR b\nERROR c\n").err == "");
  // An explicit time = "arrival" is a choice: no notice.
  const std::string arrival = dir.write("arrival.toml", "[settings]\ntime = \"arrival\"\n" + kRules);
  RunResult chosen = swt({"-r", arrival}, one_error_an_hour());
  CHECK(chosen.out.rfind(kAlert, 0) == 0);  // at its own arrival time
  CHECK(chosen.err == "");
}

TEST_CASE("e2e default time: one replayed file without timestamps keeps the run on arrival time, and is named") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string day = dir.write("day.log", one_error_an_hour());
  const std::string plain = dir.write("plain.log", "GET / 200\nGET /a 200\nGET /b 200\n");
  RunResult r = swt({"-r", rules, day, plain});
  CHECK(r.exit_status == 0);
  CHECK(r.out.rfind(kAlert, 0) == 0);
  CHECK(r.err == notice(day, 5, 5, plain + " has a timestamp in only 0 of its first 3 lines"));
}

TEST_CASE("e2e default time: a followed file stays on arrival time, and says once that its lines carry timestamps") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string day = dir.write("day.log", one_error_an_hour());
  Process p = Process::spawn({SWTHROTTLE_BINARY, "-r", rules, "--follow", "--from-start", day});
  CHECK(p.read_stdout_until([](const std::string& out) { return out.rfind(kAlert, 0) == 0; }));
  CHECK(p.read_stderr_until([](const std::string& err) { return err.find('\n') != std::string::npos; }));
  REQUIRE(p.send_signal(SIGTERM));
  const RunResult r = p.wait();
  CHECK(r.exit_status == 0);
  CHECK(r.err == notice(day, 5, 5, day + " is followed"));
}

}  // namespace
