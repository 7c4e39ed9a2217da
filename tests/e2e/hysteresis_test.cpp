// End-to-end: the two rows that were partial (issue 11) on the real binary,
// over a `time = "log"` replay: an alert rule with resolve_when (fire at 5,
// clear below 2) and the per-event counts of a multi-event throttle's
// summary, in JSON and text, in one run and across two runs with --state.
//
// The expectations are worked out from the man page (RULES FILE:
// resolve_when; OUTPUT: summary counts) in the comments, not copied from the
// program's output. Windows: 10 s in 1 s buckets.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support/json.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

const std::string kRules = R"(
[settings]
time = "log"
timezone = "UTC"

[[rule]]
name         = "db-errors"
kind         = "alert"
window       = "10s"
when         = "error >= 5"
resolve_when = "error < 2"
key          = "{host}"
message      = "{count} errors on {key}"
  [[rule.event]]
  name  = "error"
  match = 'ERROR host=(?P<host>\w+)'

[[rule]]
name      = "net"
kind      = "throttle"
threshold = "2 per 10s"
  [[rule.event]]
  name  = "timeout"
  match = 'timed out'
  [[rule.event]]
  name  = "refused"
  match = 'refused'
)";

// In two halves: the --state runs take one each.
const std::string kFirstHalf =
    "2026-11-21T10:00:00Z ERROR host=db1\n"
    "2026-11-21T10:00:01Z ERROR host=db1\n"
    "2026-11-21T10:00:02Z ERROR host=db1\n"
    "2026-11-21T10:00:03Z ERROR host=db1\n"
    "2026-11-21T10:00:04Z ERROR host=db1\n"           // 5 in the window: alert
    "2026-11-21T10:00:05Z conn timed out\n"           // net: passes (1 of 2)
    "2026-11-21T10:00:06Z conn refused\n"             // passes (2 of 2)
    "2026-11-21T10:00:07Z conn timed out\n"           // suppressed: a timeout
    "2026-11-21T10:00:08Z conn timed out, refused\n"  // suppressed: both events
    // Window 03..12: errors at 03 and 04, 2 is not < 2: still firing (without
    // resolve_when the episode would have ended at 10:00:10). net: 05 and 06
    // still fill the window, no room.
    "2026-11-21T10:00:12Z tick\n";
const std::string kSecondHalf =
    // Window 04..13: 1 < 2: resolved at this boundary check, with the message.
    "2026-11-21T10:00:13Z tick\n"
    // Window 07..16: the passed lines have left, room again: the summary of
    // the 2 suppressed lines (timeout 2, refused 1), then the line.
    "2026-11-21T10:00:16Z conn refused\n";

const std::vector<std::string> kJson{
    R"({"type":"alert","time":"2026-11-21T10:00:04.000Z","rule":"db-errors","key":"db1","window":"10s",
        "when":"error >= 5","count":5,"counts":{"error":5},"suppressed":0,
        "line":"2026-11-21T10:00:04Z ERROR host=db1","message":"5 errors on db1"})",
    R"({"type":"line","time":"2026-11-21T10:00:05.000Z","line":"2026-11-21T10:00:05Z conn timed out","rule":"net"})",
    R"({"type":"line","time":"2026-11-21T10:00:06.000Z","line":"2026-11-21T10:00:06Z conn refused","rule":"net"})",
    R"({"type":"resolved","time":"2026-11-21T10:00:13.000Z","rule":"db-errors","key":"db1","window":"10s",
        "when":"error >= 5","count":1,"counts":{"error":1},"suppressed":0,"message":"1 errors on db1"})",
    R"({"type":"summary","time":"2026-11-21T10:00:16.000Z","rule":"net","key":"","window":"10s","threshold":2,
        "suppressed":2,"first":"2026-11-21T10:00:07.000Z","last":"2026-11-21T10:00:08.000Z",
        "counts":{"timeout":2,"refused":1}})",
    R"({"type":"line","time":"2026-11-21T10:00:16.000Z","line":"2026-11-21T10:00:16Z conn refused","rule":"net"})",
};

// Each line of `out` as canonical JSON (keys sorted), so that the comparison
// is field by field.
std::string canon_lines(const std::string& out) {
  std::string s;
  std::size_t start = 0;
  while (start < out.size()) {
    const std::size_t end = out.find('\n', start);
    const auto j = swthrottle::test::parse_json(out.substr(start, end - start));
    s += j ? swthrottle::test::canonical(*j) : "not JSON: " + out.substr(start, end - start);
    s += '\n';
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return s;
}

std::string canon_expected() {
  std::string s;
  for (const std::string& e : kJson) {
    const auto j = swthrottle::test::parse_json(e);
    REQUIRE(j.has_value());
    s += swthrottle::test::canonical(*j) + '\n';
  }
  return s;
}

}  // namespace

TEST_CASE("e2e resolve_when: fire at when, resolve at resolve_when, summaries count per event (JSON)") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  for (const char* mode : {"accurate", "efficient"}) {
    CAPTURE(mode);
    RunResult r =
        swthrottle::test::run_swthrottle({"-r", rules, "--mode", mode, "--format", "json"}, kFirstHalf + kSecondHalf);
    CHECK(r.exit_status == 0);
    CHECK(r.err == "");
    CHECK(canon_lines(r.out) == canon_expected());
  }
}

TEST_CASE("e2e resolve_when: the same records in text") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  RunResult r = swthrottle::test::run_swthrottle({"-r", rules}, kFirstHalf + kSecondHalf);
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  CHECK(r.out ==
        "swthrottle: alert db-errors key=db1 count=5 when=\"error >= 5\" window=10s suppressed=0 "
        "time=2026-11-21T10:00:04.000Z: 5 errors on db1\n"
        "2026-11-21T10:00:05Z conn timed out\n"
        "2026-11-21T10:00:06Z conn refused\n"
        "swthrottle: resolved db-errors key=db1 count=1 when=\"error >= 5\" window=10s "
        "time=2026-11-21T10:00:13.000Z\n"
        "swthrottle: summary net suppressed=2 counts=timeout:2,refused:1 first=2026-11-21T10:00:07.000Z "
        "last=2026-11-21T10:00:08.000Z window=10s time=2026-11-21T10:00:16.000Z\n"
        "2026-11-21T10:00:16Z conn refused\n");
}

TEST_CASE("e2e resolve_when: two runs with --state write what one run writes") {
  // The first run ends firing between the thresholds, with two suppressed
  // lines pending (DESIGN.md §6: carried over, not written); the second run
  // resolves and summarizes them, per event.
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string state = dir.file("state.json");
  RunResult a = swthrottle::test::run_swthrottle({"-r", rules, "--format", "json", "--state", state}, kFirstHalf);
  CHECK(a.exit_status == 0);
  CHECK(a.err == "");
  RunResult b = swthrottle::test::run_swthrottle({"-r", rules, "--format", "json", "--state", state}, kSecondHalf);
  CHECK(b.exit_status == 0);
  CHECK(b.err == "");
  CHECK(canon_lines(a.out + b.out) == canon_expected());
}

TEST_CASE("e2e resolve_when: --check shows it, --explain says why a firing key did not resolve") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  RunResult c = swthrottle::test::run_swthrottle({"-r", rules, "--check"});
  CHECK(c.exit_status == 0);
  CHECK(c.out.find("  cooldown: 10s, reports resolved when \"error < 2\"\n") != std::string::npos);
  // At 10:00:12 the boundary check keeps db1 firing (no line of the key);
  // a line of the key between the thresholds says so.
  RunResult e = swthrottle::test::run_swthrottle({"-r", rules, "--explain"},
                                                 kFirstHalf + "2026-11-21T10:00:12Z ERROR host=db1\n");
  CHECK(e.exit_status == 0);
  CHECK(e.out.find("rule db-errors: events error; host=db1; key \"db1\"; counts error=3 -> counted; condition false, "
                   "still firing: "
                   "resolve_when does not hold\n") != std::string::npos);
}
