// The rule kinds of issue 29 in the real binary: what --check says of them,
// what --explain says of their lines, their records in text, a load error
// for a combination that is refused, and --state across runs for `distinct`
// (the second run continues the first's window, estimates included).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::lines_of;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

RunResult swt(const std::vector<std::string>& args, const std::string& input = "") {
  return swthrottle::test::run_swthrottle(args, input);
}

const std::string kRules = R"([settings]
time = "log"
timezone = "UTC"

[[rule]]
name = "spike"
kind = "alert"
window = "10s"
when = "err >= 2 * previous(err) and previous(err) >= 2"

  [[rule.event]]
  name = "err"
  match = 'ERR'

[[rule]]
name = "spread"
kind = "alert"
threshold = "3 per 10s"
key = "{user}"
distinct = "{ip}"
message = "{user} from {distinct} addresses"

  [[rule.event]]
  name = "login"
  match = 'login (?P<user>\w+) from (?P<ip>\S+)'

[[rule]]
name = "fresh"
kind = "alert"
new = "{ip}"
learn = "5s"
remember = "1h"

  [[rule.event]]
  name = "login"
  match = 'login (?P<user>\w+) from (?P<ip>\S+)'
)";

}  // namespace

TEST_CASE("e2e shapes: --check says what each kind keeps") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  RunResult r = swt({"-r", rules, "--check"});
  CHECK(r.exit_status == 0);
  const std::string& out = r.out;
  CHECK(out.find("rule spike (" + rules +
                 ":5): alert when \"err >= 2 * previous(err) and previous(err) >= 2\" within "
                 "10s, 10 buckets of 1s, efficient mode\n") != std::string::npos);
  CHECK(out.find("  keeps the previous window (previous() in its condition)\n") != std::string::npos);
  CHECK(out.find("  distinct: {ip} (exact up to 256 values a window)\n") != std::string::npos);
  CHECK(out.find("rule fresh (" + rules + ":27): alert one alert per new value within 1h") != std::string::npos);
  CHECK(out.find("  new: {ip} (remember 1h, learn 5s, at most 100000 values)\n") != std::string::npos);
  CHECK(lines_of(out).back() == "3 rules OK");
}

TEST_CASE("e2e shapes: --explain phrases each kind's decision, and the records say what they compared") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string input =
      "2026-11-21T10:00:00Z ERR a\n"                    // spike: 1, previous 0
      "2026-11-21T10:00:01Z login bob from 10.0.0.1\n"  // fresh: learning
      "2026-11-21T10:00:05Z login bob from 10.0.0.2\n"  // fresh: new (learning ended at 10:00:05)
      "2026-11-21T10:00:06Z login bob from 10.0.0.1\n"  // fresh: seen
      "2026-11-21T10:00:07Z login bob from 10.0.0.3\n"  // spread: 3 addresses: alert
      "2026-11-21T10:00:10Z ERR b\n"                    // spike: 1, previous 1
      "2026-11-21T10:00:11Z ERR c\n";                   // spike: 2 against 1 (below the minimum)
  RunResult r = swt({"-r", rules, "--explain"}, input);
  CHECK(r.exit_status == 0);
  const std::vector<std::string> out = lines_of(r.out);
  auto has = [&](const std::string& line) {
    CAPTURE(line);
    CHECK(std::find(out.begin(), out.end(), line) != out.end());
  };
  has("  rule spike: events err; counts err=1 previous(err)=0 -> counted; condition false");
  has("  rule fresh: events login; user=bob; ip=10.0.0.1 -> learning (the rule's first 5s): remembered, no alert");
  has("  rule fresh: events login; user=bob; ip=10.0.0.2; counts login=1 -> alert: a value not seen within 1h");
  has("  rule fresh: events login; user=bob; ip=10.0.0.1 -> seen within 1h: remembered, no alert");
  has("  rule spread: events login; user=bob; ip=10.0.0.3; key \"bob\"; counts login=4 distinct=3 -> alert");
  has("swthrottle: alert spread key=bob count=4 distinct=3 threshold=3 window=10s suppressed=0 "
      "time=2026-11-21T10:00:07.000Z: bob from 3 addresses");
  has("swthrottle: alert fresh count=1 value=\"10.0.0.2\" threshold=1 window=1h suppressed=0 "
      "time=2026-11-21T10:00:05.000Z: 2026-11-21T10:00:05Z login bob from 10.0.0.2");
  has("  rule spike: events err; counts err=2 previous(err)=1 -> counted; condition false");
}

TEST_CASE("e2e shapes: a refused combination is a load error with its place") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"([fleet]
redis = "redis://127.0.0.1:1"

[[rule]]
name = "spread"
kind = "alert"
threshold = "3 per 10s"
distinct = "{ip}"
fleet = "exact"
  [[rule.event]]
  name = "login"
  match = 'login from (?P<ip>\S+)'
)");
  RunResult r = swt({"-r", rules, "--check"});
  CHECK(r.exit_status == 2);
  CHECK_MESSAGE(
      r.err.find(rules + ":9:9: [[rule]] \"spread\" uses distinct, which fleet windows do not keep (they share event "
                         "counts through Redis); remove fleet to decide on this host's windows") != std::string::npos,
      r.err);
}

TEST_CASE("e2e shapes: --state carries distinct values and their estimate into the next run") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"([settings]
time = "log"
timezone = "UTC"

[[rule]]
name = "spread"
kind = "alert"
threshold = "290 per 1m"
distinct = "{ip}"
  [[rule.event]]
  name = "hit"
  match = 'from (?P<ip>\S+)'
)");
  // 300 addresses in one minute (past the 256 kept exactly: an estimate),
  // each twice; cut into two runs after 200 lines.
  std::string all, first, second;
  for (int i = 0; i < 600; ++i) {
    char line[80];
    std::snprintf(line, sizeof line, "2026-11-21T10:00:%02d.%03dZ from 10.0.%d.%d\n", i / 20, (i % 20) * 50,
                  (i % 300) / 200, (i % 300) % 200);
    all += line;
    (i < 200 ? first : second) += line;
  }
  const std::string a = dir.write("all.log", all), b1 = dir.write("first.log", first),
                    b2 = dir.write("second.log", second);
  RunResult whole = swt({"-r", rules, "--format", "json", a});
  REQUIRE(lines_of(whole.out).size() == 1);
  CHECK(whole.out.find("\"estimated\":true") != std::string::npos);
  const std::string state = dir.path() + "/state.json";
  RunResult one = swt({"-r", rules, "--format", "json", "--state", state, b1});
  CHECK(one.out == "");
  RunResult two = swt({"-r", rules, "--format", "json", "--state", state, b2});
  CHECK(one.out + two.out == whole.out);
}
