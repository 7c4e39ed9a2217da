// What a probe, run as a new user would, found (issue 18, part 5), each
// against the real binary: a state file with values no run writes, a failed
// save at exit, `%s` given epoch milliseconds, a rules file without end, an
// empty --exec and --exec-jobs beyond what threads allow.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::read_file;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

RunResult swt(const std::vector<std::string>& args, const std::string& input = "") {
  return swthrottle::test::run_swthrottle(args, input);
}

// The files in dir whose names start with `prefix`.
std::vector<std::string> starting_with(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().starts_with(prefix)) out.push_back(e.path().string());
  return out;
}

// An alert of three failures in 10 s per address and a throttle of one line
// in 10 s, on log time; max_future off, so that a state's time is taken as
// it is (the clamp at load would otherwise hide a far future).
const std::string kRules = R"toml(
[settings]
time = "log"
timezone = "UTC"
max_future = "off"

[[rule]]
name = "ssh"
kind = "alert"
threshold = "3 per 10s"
key = "{ip}"
  [[rule.event]]
  name = "fail"
  match = 'fail from (?P<ip>\S+)'

[[rule]]
name = "flood"
kind = "throttle"
threshold = "1 per 10s"
  [[rule.event]]
  name = "flood"
  match = 'flood'
)toml";

// Two failures and a passed flood line; then, in a second run, a third
// failure (an alert with the state) and a flood line (suppressed with it).
const std::string kPartA =
    "2026-11-21T10:00:01Z fail from 10.0.0.1\n"
    "2026-11-21T10:00:01Z flood one\n"
    "2026-11-21T10:00:02Z fail from 10.0.0.1\n";
const std::string kPartB =
    "2026-11-21T10:00:03Z fail from 10.0.0.1\n"
    "2026-11-21T10:00:03Z flood two\n";

}  // namespace

TEST_CASE("probe findings: a state file dated near INT64_MAX is moved aside with its place, the run starts fresh") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string state = dir.file("state.json");
  const RunResult fresh = swt({"-r", rules}, kPartB);
  REQUIRE(fresh.exit_status == 0);

  // Before: loaded silently, its "now" overflowed the next bucket boundary
  // (UBSan: signed overflow) and the records said the year 292278994.
  const std::string text = "{\"swthrottle_state\":1,\"now_ms\":9223372036854775000,\"last_log_ms\":-1,\"rules\":[]}\n";
  dir.write("state.json", text);
  const RunResult r = swt({"-r", rules, "--state", state}, kPartB);
  CHECK(r.exit_status == 0);
  CHECK(r.out == fresh.out);  // the same records as a run without the file
  const std::vector<std::string> aside = starting_with(dir.path(), "state.json.corrupt-");
  REQUIRE(aside.size() == 1);
  CHECK(read_file(aside[0]) == text);  // kept as it was, for a look
  CHECK(r.err == "swthrottle: state file " + state +
                     ": now_ms: time 9223372036854775000 is out of range (a run writes -1 or 1970-01-01 to "
                     "9999-12-31, up to 253402300799999); moved aside to " +
                     aside[0] + ", starting fresh\n");
  CHECK(r.out.find("292278994") == std::string::npos);
}

TEST_CASE("probe findings: a bucket ahead of its window drops that rule's windows only, said on stderr") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string state = dir.file("state.json");
  REQUIRE(swt({"-r", rules, "--state", state}, kPartA).exit_status == 0);
  const std::string saved = read_file(state);

  // The good state: the third failure alerts, the flood line is held back.
  const RunResult good = swt({"-r", rules, "--state", state}, kPartB);
  REQUIRE(good.exit_status == 0);
  CHECK(good.err == "");
  CHECK(good.out.find("alert ssh key=10.0.0.1 count=3") != std::string::npos);
  CHECK(good.out.find("flood two") == std::string::npos);

  // One digit of ssh's bucket changed (10:00:01, bucket 1795255201, to a
  // bucket 100 s ahead of the window): before, the bucket was skipped
  // without a word and the alert did not come.
  const std::string bucket = "[[1795255201,[1]],[1795255202,[1]]]";
  REQUIRE(saved.find(bucket) != std::string::npos);
  std::string corrupt = saved;
  corrupt.replace(corrupt.find(bucket), bucket.size(), "[[1795255301,[1]],[1795255302,[1]]]");
  // Without its checksum (issue 32), as an older swthrottle saved it: the
  // checksum would catch the edit first (fault_storage_test.cpp).
  corrupt = corrupt.substr(0, corrupt.rfind(",\n\"checksum\"")) + "}\n";
  dir.write("state.json", corrupt);
  const RunResult r = swt({"-r", rules, "--state", state}, kPartB);
  CHECK(r.exit_status == 0);
  CHECK(r.err == "swthrottle: state file " + state +
                     " has no checksum (saved by an older swthrottle): loaded as it is; the next save adds one\n"
                     "swthrottle: state file " +
                     state +
                     ": rules[0].windows[0].buckets[0][0]: bucket 1795255301 is not in the window at its now_ms "
                     "1795255202000 (buckets 1795255193 to 1795255202 of 1s); rule \"ssh\" starts fresh\n");
  CHECK(r.out.find("alert ssh") == std::string::npos);  // ssh counts from this run only: 1 failure
  CHECK(r.out.find("flood two") == std::string::npos);  // flood kept its window: still held back
  CHECK(starting_with(dir.path(), "state.json.corrupt-").empty());
}

TEST_CASE("probe findings: a failed save at exit exits 2 and says the state is lost") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string input = kPartA + kPartB;
  // A directory that does not exist (root writes to a read-only one).
  const std::string state = dir.file("gone/state.json");
  const RunResult r = swt({"-r", rules, "--state", state}, input);
  CHECK(r.exit_status == 2);                                                 // before: 0
  CHECK(r.out.find("alert ssh key=10.0.0.1 count=3") != std::string::npos);  // the records are still written
  CHECK(r.err.find("swthrottle: cannot save state to " + state + ": No such file or directory\n") != std::string::npos);
  CHECK(r.err.ends_with("swthrottle: --state " + state + ": the state of this run was not saved (exit 2)\n"));

  // --exit-code does not hide it: 2 wins over 1.
  CHECK(swt({"-r", rules, "--state", state, "--exit-code"}, input).exit_status == 2);
  // And the same run with a state it can save exits 0.
  CHECK(swt({"-r", rules, "--state", dir.file("state.json")}, input).exit_status == 0);
}

TEST_CASE("probe findings: %s reads seconds, and epoch milliseconds are no timestamp rather than a date in 7658") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"toml(
[settings]
time = "log"
timestamp = "%s"

[[rule]]
name = "boom"
kind = "alert"
threshold = "1 per 1m"
  [[rule.event]]
  name = "boom"
  match = 'boom'
)toml");
  const RunResult seconds = swt({"-r", rules}, "1795255205 boom\n");
  CHECK(seconds.exit_status == 0);
  CHECK(seconds.out.find("time=2026-11-21T10:00:05.000Z") != std::string::npos);

  // Before: read as 179525520512 seconds (its first 12 digits), 7658-12-08.
  const RunResult millis = swt({"-r", rules}, "1795255205123 boom\n");
  CHECK(millis.exit_status == 0);
  CHECK(millis.out == "");
  CHECK(millis.err.find("no timestamp in its 1 line under time = \"log\"") != std::string::npos);
  // --check says which form reads them.
  const std::string log = dir.write("ms.log", "1795255205123 boom\n");
  const RunResult check = swt({"-r", rules, "--check", log});
  CHECK(check.exit_status == 2);
  CHECK(check.out.find("timestamp %s reads none of 1 line") != std::string::npos);
  CHECK(check.out.find("timestamp = \"epoch\" reads 1; first 2026-11-21T10:00:05.123Z") != std::string::npos);
}

TEST_CASE("probe findings: a rules file has a size bound and is a regular file or a pipe") {
  TempDir dir;
  // Before: read /dev/zero forever, growing without bound.
  const RunResult zero = swt({"-r", "/dev/zero"});
  CHECK(zero.exit_status == 2);
  CHECK(zero.err ==
        "swthrottle: /dev/zero: not a rules file: a character device (a rules file is a regular file or "
        "a pipe)\n");

  // A regular file over 16 MiB (sparse: its size is what counts).
  const std::string big = dir.write("big.toml", "");
  REQUIRE(::truncate(big.c_str(), (16 << 20) + 1) == 0);
  const RunResult large = swt({"-r", big});
  CHECK(large.exit_status == 2);
  CHECK(large.err == "swthrottle: " + big + ": rules file larger than 16 MiB\n");
  // Exactly 16 MiB is read (and is no rules file: only NUL bytes).
  REQUIRE(::truncate(big.c_str(), 16 << 20) == 0);
  const RunResult at_bound = swt({"-r", big});
  CHECK(at_bound.exit_status == 2);
  CHECK(at_bound.err.find("larger than") == std::string::npos);

  // A pipe is read up to the bound, whatever its writer has left.
  const RunResult piped = swt({"-r", "/dev/stdin", "--check"}, std::string((16 << 20) + 4096, '#'));
  CHECK(!piped.timed_out);
  CHECK(piped.exit_status == 2);
  CHECK(piped.err == "swthrottle: /dev/stdin: rules file larger than 16 MiB\n");
  // And a pipe of rules is rules (-r <(generate)).
  const RunResult rules_piped = swt({"-r", "/dev/stdin", "--check"}, kRules);
  CHECK(rules_piped.exit_status == 0);
  CHECK(rules_piped.out.find("rule ssh (/dev/stdin:7)") != std::string::npos);
}

TEST_CASE("probe findings: an empty --exec is an error like one of blanks") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  for (const std::string cmd : {"", "   ", "\t"}) {
    CAPTURE(cmd);
    // Before: '' was ignored and the run went on without a command.
    const RunResult r = swt({"-r", rules, "--exec", cmd}, kPartA + kPartB);
    CHECK(r.exit_status == 2);
    CHECK(r.out == "");
    CHECK(r.err == "swthrottle: --exec: empty command\n");
  }
}

TEST_CASE("probe findings: --exec-jobs is 1 to 256") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  for (const std::string n : {"0", "257", "100000", "-3"}) {
    CAPTURE(n);
    // Before: 100000 ran out of threads and aborted on an uncaught std::system_error.
    const RunResult r = swt({"-r", rules, "--exec", "true", "--exec-jobs", n}, kPartA + kPartB);
    CHECK(r.exit_status == 2);
    CHECK(r.signal == 0);
    CHECK(r.err == "swthrottle: --exec-jobs " + n + ": must be 1 to 256\n");
  }
  const RunResult most = swt({"-r", rules, "--exec", "true", "--exec-jobs", "256"}, kPartA + kPartB);
  CHECK(most.exit_status == 0);
  CHECK(most.out.find("alert ssh") != std::string::npos);
  CHECK(swt({"--help"}).out.find("Commands at once, 1 to 256 (default 4)") != std::string::npos);
}
