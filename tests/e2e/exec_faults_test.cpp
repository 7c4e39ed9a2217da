// Fault injection for exec actions (issue 18; man page: Actions, EXIT
// STATUS, SIGNALS): the real binary with commands that hang, ignore
// SIGTERM, write 100 MB, or fork and exit leaving a grandchild that holds
// the pipes; SIGTERM with a hanging command; a queue of actions filled past
// its bound; worker threads that cannot be started.
//
// Each case has an exact expected outcome. Nothing sleeps for a fixed time:
// every wait polls for its condition with a deadline, and a case that goes
// wrong fails at the deadline. Where the point is promptness (a stop with a
// command that would hang forever), the bound is the wait's deadline, far
// below the old behaviour (which never ended) and systemd's 90 s.
#include <doctest/doctest.h>
#include <signal.h>

#include <sys/stat.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::contains;
using swthrottle::test::count_lines;
using swthrottle::test::count_of;
using swthrottle::test::EnvAdditions;
using swthrottle::test::poll_until;
using swthrottle::test::Process;
using swthrottle::test::read_file_if_exists;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

const std::string kBinary = SWTHROTTLE_BINARY;

// One alert per new address, at once: every input line is one action.
const std::string kRules = R"([settings]
time     = "log"
timezone = "UTC"

[[rule]]
name      = "ssh"
kind      = "alert"
threshold = "1 per 1m"
key       = "{ip}"
message   = "failure from {ip}"
  [[rule.event]]
  name  = "failed"
  match = 'Failed password for \S+ from (?P<ip>\S+)'
)";

std::string failed_line(const std::string& ip) {
  return "2026-11-21T10:00:00Z sshd[1]: Failed password for root from " + ip + " port 22\n";
}

// The n-th of many distinct addresses (n < 2^24).
std::string ip_of(int n) {
  return "10." + std::to_string((n >> 16) & 255) + "." + std::to_string((n >> 8) & 255) + "." + std::to_string(n & 255);
}

std::string script(const TempDir& dir, const std::string& name, const std::string& body) {
  const std::string path = dir.write(name, "#!/bin/sh\n" + body);
  REQUIRE(::chmod(path.c_str(), 0755) == 0);
  return path;
}

// The pids a script appended to `path`, one a line.
std::vector<pid_t> pids_in(const std::string& path) {
  std::vector<pid_t> pids;
  const std::string text = read_file_if_exists(path);
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) break;  // a line being written
    pids.push_back(static_cast<pid_t>(std::strtol(text.c_str() + at, nullptr, 10)));
    at = nl + 1;
  }
  return pids;
}

bool gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// A process that is not our child: gone within the deadline (SIGKILL is
// delivered asynchronously, and its parent must reap it).
bool gone_within(pid_t pid, std::chrono::milliseconds deadline) {
  return poll_until(
      [pid] {
        return gone(pid) ||
               read_file_if_exists("/proc/" + std::to_string(pid) + "/stat").find(") Z ") != std::string::npos;
      },
      deadline);
}

Process spawn(const std::vector<std::string>& args, const EnvAdditions& env = {},
              swthrottle::test::OutputObserver stderr_observer = nullptr) {
  std::vector<std::string> argv{kBinary};
  argv.insert(argv.end(), args.begin(), args.end());
  return Process::spawn(argv, env, std::move(stderr_observer));
}

// swthrottle's stderr counted rather than kept: a command that writes 100 MB
// there must not make the test hold 100 MB. Bytes 0x01 and 0x02 are counted
// (the command's output: swthrottle never writes those); everything else on
// stderr is kept.
struct CountedStderr {
  std::string text;  // stderr without the bytes 0x01 and 0x02
  uint64_t o_bytes = 0;
  uint64_t e_bytes = 0;

  void take(std::string_view chunk) {
    for (const char c : chunk) {
      if (c == '\x01') {
        ++o_bytes;
      } else if (c == '\x02') {
        ++e_bytes;
      } else {
        text += c;
      }
    }
  }
};

}  // namespace

TEST_CASE("exec faults: a command that ignores SIGTERM is killed with SIGKILL at the timeout, every attempt") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string pids = dir.file("pids");
  // SIG_IGN survives exec: the sleep itself ignores SIGTERM.
  const std::string stubborn = script(dir, "stubborn.sh", "trap '' TERM\necho $$ >> '" + pids + "'\nexec sleep 1000\n");
  const RunResult r = swthrottle::test::run_swthrottle(
      {"--rule", rules, "--exec", stubborn, "--exec-timeout", "200ms", "--stats"}, failed_line("192.0.2.1"));
  INFO("stderr: " << r.err);
  CHECK(r.exit_status == 3);
  CHECK(r.out ==
        "swthrottle: alert ssh key=192.0.2.1 count=1 threshold=1 window=1m suppressed=0 "
        "time=2026-11-21T10:00:00.000Z: failure from 192.0.2.1\n");
  CHECK(
      contains(r.err, "swthrottle: exec: alert ssh key=192.0.2.1: gave up after 3 attempts: timed out after 200ms\n"));
  CHECK(contains(
      r.err, "swthrottle: stats: exec: started 3 succeeded 0 retried 2 timed out 3 gave up 1 dropped 0 not run 0\n"));
  const std::vector<pid_t> started = pids_in(pids);
  CHECK(started.size() == 3);
  for (const pid_t pid : started) {
    CAPTURE(pid);
    CHECK(gone(pid));  // killed and reaped before swthrottle went on
  }
}

TEST_CASE(
    "exec faults: SIGTERM with a command that hangs (and ignores SIGTERM) exits at once, naming the actions not run") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string pids = dir.file("pids");
  const std::string hang = script(dir, "hang.sh", "trap '' TERM\necho $$ >> '" + pids + "'\nexec sleep 1000\n");
  // An hour of timeout: before, exit waited 3 of them.
  Process p = spawn({"--rule", rules, "--exec", hang, "--exec-jobs", "1", "--exec-timeout", "1h", "--stats"});
  std::string input;
  for (int i = 1; i <= 4; ++i) input += failed_line("192.0.2." + std::to_string(i));
  REQUIRE(p.write_stdin(input));
  // The records are out while the first command hangs: output does not wait on it.
  REQUIRE(p.read_stdout_lines(4, 10s));
  REQUIRE(poll_until([&] { return pids_in(pids).size() == 1; }, 10s));
  const pid_t hung = pids_in(pids)[0];

  const auto signalled = SteadyClock::now();
  REQUIRE(p.send_signal(SIGTERM));
  // SIGTERM to the command's group at once, SIGKILL a second later: the exit
  // comes within that grace and a little; 5 s is the bound of a loaded machine.
  const RunResult r = p.wait(5s);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - signalled);
  INFO("stderr: " << r.err << "took: " << took.count() << " ms");
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_status == 3);  // actions were not run: a record was not delivered
  CHECK(count_lines(r.out) == 4);
  CHECK(contains(r.err,
                 "swthrottle: exec: alert ssh key=192.0.2.1: not run: stopped by SIGTERM (its command was killed)\n"));
  for (int i = 2; i <= 4; ++i)
    CHECK(contains(r.err,
                   "swthrottle: exec: alert ssh key=192.0.2." + std::to_string(i) + ": not run: stopped by SIGTERM\n"));
  CHECK(count_of(r.err, ": not run: ") == 4);
  CHECK(contains(r.err, "more actions not run") == false);  // 4 is under the bound of named lines
  CHECK(contains(
      r.err, "swthrottle: stats: exec: started 1 succeeded 0 retried 0 timed out 0 gave up 0 dropped 0 not run 4\n"));
  CHECK(pids_in(pids).size() == 1);  // nothing new started after the stop, nothing retried
  CHECK(gone_within(hung, 5s));
}

TEST_CASE("exec faults: a command that writes 100 MB on stdout and 100 MB on stderr: passed through, memory flat") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string done = dir.file("done");
  // The command's stdout and stderr are swthrottle's stderr, never read or
  // held by swthrottle: all of it comes out there, and its memory does not grow.
  const std::string loud = script(dir, "loud.sh",
                                  "cat >/dev/null\n"
                                  "head -c 100000000 /dev/zero | tr '\\0' '\\001'\n"
                                  "head -c 100000000 /dev/zero | tr '\\0' '\\002' >&2\n"
                                  "echo $1 >> '" +
                                      done + "'\n");
  const std::string quiet = script(dir, "quiet.sh", "cat >/dev/null\necho $1 >> '" + done + "'\n");

  // The same run twice, the command quiet, then loud; stdin stays open so
  // that swthrottle is still running when its peak memory is read.
  auto peak_kb = [&](const std::string& command, const std::string& tag, uint64_t want_bytes) {
    CountedStderr counted;
    Process run = spawn({"--rule", rules, "--exec", command + " " + tag, "--stats"}, {},
                        [&counted](std::string_view chunk) { counted.take(chunk); });
    REQUIRE(run.write_stdin(failed_line("192.0.2.1")));
    const bool ended = run.read_until(
        [&] {
          return contains(read_file_if_exists(done), tag + "\n") && counted.o_bytes == want_bytes &&
                 counted.e_bytes == want_bytes && count_lines(run.out()) == 1;
        },
        60s);
    INFO("stderr: " << counted.text << " o: " << counted.o_bytes << " e: " << counted.e_bytes);
    CHECK(ended);
    const long peak = run.peak_rss_kb();
    run.close_stdin();
    CHECK(run.read_to_eof(20s));
    CHECK(run.wait(20s).exit_status == 0);
    CHECK(counted.o_bytes == want_bytes);
    CHECK(counted.e_bytes == want_bytes);
    // Nothing else on stderr than the statistics.
    CHECK(contains(
        counted.text,
        "swthrottle: stats: exec: started 1 succeeded 1 retried 0 timed out 0 gave up 0 dropped 0 not run 0\n"));
    CHECK(count_of(counted.text, "swthrottle: exec:") == 0);
    return peak;
  };
  const long quiet_kb = peak_kb(quiet, "quiet", 0);
  const long loud_kb = peak_kb(loud, "loud", 100'000'000);
  MESSAGE("peak RSS: quiet " << quiet_kb << " KiB, loud " << loud_kb << " KiB");
  REQUIRE(quiet_kb > 0);
  REQUIRE(loud_kb > 0);
  CHECK(loud_kb <= quiet_kb + 8 * 1024);  // 200 MB passed through, not 8 MiB more
}

TEST_CASE("exec faults: a command that forks and exits, leaving a grandchild with its pipes: done at its exit") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string grandchild = dir.file("grandchild");
  // It reads none of its stdin (a record larger than a pipe's buffer, so
  // that the write waits), and the grandchild holds stdin, stdout and
  // stderr open for 1000 s. The command itself exits 0 at once.
  const std::string forks = script(dir, "forks.sh", "sleep 1000 &\necho $! > '" + grandchild + "'\nexit 0\n");
  const std::string ip(100'000, 'a');  // the key, in the record on the command's stdin
  Process p = spawn({"--rule", rules, "--exec", forks, "--format", "json", "--stats"});
  REQUIRE(p.write_stdin(failed_line(ip)));
  p.close_stdin();
  // Exit needs the action done: the command's exit is enough, the
  // grandchild holding the pipes is not waited for.
  const RunResult r = p.wait(15s);
  INFO("stderr: " << r.err.substr(0, 2000));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_status == 0);
  REQUIRE(count_lines(r.out) == 1);
  CHECK(r.out.size() > 65536 * 2);  // the record: more than a pipe's buffer
  CHECK(contains(
      r.err, "swthrottle: stats: exec: started 1 succeeded 1 retried 0 timed out 0 gave up 0 dropped 0 not run 0\n"));
  const pid_t g = static_cast<pid_t>(std::strtol(read_file_if_exists(grandchild).c_str(), nullptr, 10));
  REQUIRE(g > 0);
  CHECK_FALSE(gone(g));  // still there, still holding the pipes: swthrottle did not wait for it
  ::kill(g, SIGKILL);
}

TEST_CASE(
    "exec faults: the queue of actions is bounded: past 10000 waiting, actions are dropped and counted, output goes "
    "on") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string pids = dir.file("pids");
  const std::string hang = script(dir, "hang.sh", "echo $$ >> '" + pids + "'\nexec sleep 1000\n");
  Process p = spawn({"--rule", rules, "--exec", hang, "--exec-jobs", "1", "--exec-timeout", "1h", "--stats"});
  // The first action runs (and hangs); then 10000 wait, the bound; 500 more are dropped.
  REQUIRE(p.write_stdin(failed_line(ip_of(0))));
  REQUIRE(poll_until([&] { return pids_in(pids).size() == 1; }, 10s));
  constexpr int kMore = 10'000 + 500;
  std::string input;
  for (int i = 1; i <= kMore; ++i) input += failed_line(ip_of(i));
  REQUIRE(p.write_stdin(input, 30s));
  // Every record is written while the one command still hangs.
  REQUIRE(p.read_stdout_lines(1 + kMore, 30s));
  CHECK_FALSE(gone(pids_in(pids)[0]));
  REQUIRE(p.read_stderr_until([](const std::string& e) { return contains(e, "swthrottle: exec: the queue is full"); },
                              10s));
  CHECK(contains(p.err(), "swthrottle: exec: the queue is full (10000 actions, "));
  CHECK(contains(p.err(),
                 " bytes waiting): new actions are dropped, and counted, until it is half empty; the first: "
                 "alert ssh key=" +
                     ip_of(10'001) + "\n"));

  REQUIRE(p.send_signal(SIGTERM));
  const RunResult r = p.wait(10s);
  INFO("stderr (tail): " << r.err.substr(r.err.size() > 3000 ? r.err.size() - 3000 : 0));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_status == 3);
  CHECK(count_of(r.err, "swthrottle: exec: the queue is full") == 1);  // once per episode
  CHECK(contains(r.err, "swthrottle: exec: 500 actions dropped while the queue was full\n"));
  // 10001 not run (10000 waiting, 1 killed): 100 named, then a count.
  CHECK(count_of(r.err, ": not run: stopped by SIGTERM") == 100);
  CHECK(contains(r.err, "swthrottle: exec: 9901 more actions not run: stopped by SIGTERM\n"));
  CHECK(contains(r.err,
                 "swthrottle: stats: exec: started 1 succeeded 0 retried 0 timed out 0 gave up 0 dropped 500 not run "
                 "10001\n"));
  CHECK(gone_within(pids_in(pids)[0], 5s));
}

TEST_CASE("exec faults: worker threads that cannot all be started: run with those started, said once") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string delivered = dir.file("delivered");
  const std::string rec = script(dir, "rec.sh", "echo \"$SWTHROTTLE_KEY\" >> '" + delivered + "'\n");
  std::string input;
  for (int i = 1; i <= 5; ++i) input += failed_line("192.0.2." + std::to_string(i));
  // The hook makes the third thread fail as a full process table does (EAGAIN).
  const RunResult r = swthrottle::test::run_process({kBinary, "--rule", rules, "--exec", rec, "--exec-jobs", "8"},
                                                    input, 20s, {{"SWTHROTTLE_EXEC_THREAD_FAIL", "2"}});
  CHECK(r.exit_status == 0);
  CHECK(r.err ==
        "swthrottle: exec: started only 2 of 8 worker threads (Resource temporarily unavailable): at most 2 commands "
        "run at once\n");
  CHECK(count_lines(r.out) == 5);
  CHECK(count_lines(read_file_if_exists(delivered)) == 5);

  // None at all: a clear error at start, nothing read.
  const RunResult none = swthrottle::test::run_process({kBinary, "--rule", rules, "--exec", rec}, input, 20s,
                                                       {{"SWTHROTTLE_EXEC_THREAD_FAIL", "0"}});
  CHECK(none.exit_status == 2);
  CHECK(none.out.empty());
  CHECK(none.err ==
        "swthrottle: exec: cannot start a worker thread for the actions (Resource temporarily unavailable); lower "
        "--exec-jobs or raise the limit on processes (ulimit -u, the unit's TasksMax=)\n");
}
