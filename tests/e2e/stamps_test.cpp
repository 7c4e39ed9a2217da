// End-to-end tests of timestamps that the settings do not read (SPEC §4
// "Missing time is loud"): the warning on stderr, --check FILE, the forms
// auto reads, and the timestamp setting per input.
#include <doctest/doctest.h>

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
                     "timestamp in [settings] (swthrottle -r RULES --check " +
                     log + " shows the forms that read it)\n");

  // Standard input is named as such; a stamped input is not reported.
  r = swt({"-r", rules}, "no stamp here\n");
  CHECK(r.err ==
        "swthrottle: (standard input): no timestamp in its 1 line under time = \"log\": e.g. \"no stamp "
        "here\"; set timestamp in [settings] (swthrottle -r RULES --check - shows the forms that read it)\n");
  r = swt({"-r", rules}, "no stamp yet\n2026-11-21T10:00:00Z ok\n");
  CHECK(r.err == "");
  // time = arrival needs no stamps.
  r = swt({"-r", rules, "--time", "arrival"}, "no stamp here\n");
  CHECK(r.err == "");
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
        "\"line 0\"; set timestamp in [settings] (swthrottle -r RULES --check - shows the forms that read "
        "it)\n");
}

}  // namespace
