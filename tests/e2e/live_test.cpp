// End-to-end tests of live operation (DESIGN.md §3 concurrency, §5 exec, §6
// --follow, signals and --state, §7): the real binary, with real files that
// are renamed and truncated, real signals, real child processes.
//
// Nothing here sleeps for a fixed time: every wait is bounded and ends as
// soon as what it waits for has happened (a record on stdout, a message on
// stderr, a file's content, a descriptor in /proc). A test that goes wrong
// fails at the bound instead of hanging. Where time has to pass (arrival-time
// windows), windows are 2 s long with 1 s buckets, and nothing asserts a
// duration.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::append_file;
using swthrottle::test::contains;
using swthrottle::test::EnvAdditions;
using swthrottle::test::lines_of;
using swthrottle::test::open_file_offset;
using swthrottle::test::poll_until;
using swthrottle::test::Process;
using swthrottle::test::read_file;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;
using namespace std::chrono_literals;

const std::string kBinary = SWTHROTTLE_BINARY;
const std::string kSourceDir = SWTHROTTLE_SOURCE_DIR;

// What a live wait allows before it counts as a failure. Passing tests never
// wait this long: every wait returns as soon as its condition holds.
constexpr auto kWait = 10'000ms;

// --- helpers -----------------------------------------------------------------

Process spawn(const std::vector<std::string>& args, const EnvAdditions& env = {}) {
  std::vector<std::string> argv{kBinary};
  argv.insert(argv.end(), args.begin(), args.end());
  return Process::spawn(argv, env);
}

RunResult run(const std::vector<std::string>& args, const std::string& input = "") {
  return swthrottle::test::run_swthrottle(args, input);
}

void write_fd(int fd, std::string_view data) {
  REQUIRE(::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size()));
}

std::string script(const TempDir& dir, const std::string& name, const std::string& body) {
  const std::string path = dir.write(name, "#!/bin/sh\n" + body);
  REQUIRE(::chmod(path.c_str(), 0755) == 0);
  return path;
}

// Exit status 0; on failure, says how the child ended and what it said.
void check_exit_0(const RunResult& r) {
  INFO("signal: " << r.signal << ", timed out: " << r.timed_out << ", stderr: " << r.err);
  CHECK(r.exit_status == 0);
}

bool file_has(const std::string& path, std::string_view part) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return false;
  return contains(read_file(path), part);
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// Written times vary with the clock in arrival time: compared as "TIME".
// A time is RFC 3339 UTC with milliseconds: 2026-11-21T10:00:05.000Z.
std::string without_times(const std::string& s) {
  static constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd.dddZ";
  auto is_time = [&](std::size_t at) {
    if (at + kShape.size() > s.size()) return false;
    for (std::size_t i = 0; i < kShape.size(); ++i) {
      const char c = s[at + i];
      if (kShape[i] == 'd' ? !(c >= '0' && c <= '9') : c != kShape[i]) return false;
    }
    return true;
  };
  std::string out;
  for (std::size_t at = 0; at < s.size();) {
    if (is_time(at)) {
      out += "TIME";
      at += kShape.size();
    } else {
      out += s[at++];
    }
  }
  return out;
}

// The value of a member of a JSON Lines record, for the flat records
// swthrottle writes: a string (with \" and \\ undone), or a scalar or object
// as written. "<absent>" when the record has no such member.
std::string field(std::string_view rec, std::string_view name) {
  const std::string key = "\"" + std::string(name) + "\":";
  std::size_t at = rec.find(key);
  if (at == std::string_view::npos) return "<absent>";
  at += key.size();
  std::string out;
  if (at < rec.size() && rec[at] == '"') {
    for (++at; at < rec.size() && rec[at] != '"'; ++at) {
      if (rec[at] == '\\' && at + 1 < rec.size()) ++at;
      out += rec[at];
    }
    return out;
  }
  if (at < rec.size() && rec[at] == '{') return std::string(rec.substr(at, rec.find('}', at) + 1 - at));
  while (at < rec.size() && rec[at] != ',' && rec[at] != '}') out += rec[at++];
  return out;
}

// "10:00:11" out of "2026-11-21T10:00:11.000Z".
std::string hms(const std::string& t) { return t.size() >= 19 ? t.substr(11, 8) : t; }

// One JSON record as a short line, to compare runs with expectations that
// read like the spec: "summary errors suppressed=2 first=10:00:02 ...".
std::string describe(const std::string& rec) {
  const std::string type = field(rec, "type");
  if (type == "line") return "line " + field(rec, "line");
  std::string s = type + " " + field(rec, "rule");
  if (const std::string key = field(rec, "key"); !key.empty()) s += " key=" + key;
  if (type == "summary") {
    s += " suppressed=" + field(rec, "suppressed") + " first=" + hms(field(rec, "first")) +
         " last=" + hms(field(rec, "last"));
  } else {
    s += " count=" + field(rec, "count");
    if (type == "alert") s += " suppressed=" + field(rec, "suppressed");
  }
  return s + " time=" + hms(field(rec, "time"));
}

std::vector<std::string> describe_all(const std::string& out) {
  std::vector<std::string> v;
  for (const auto& l : lines_of(out)) v.push_back(describe(l));
  return v;
}

// A rules file whose only rule never matches: with --passthrough every line
// is written, so the output of a follow test is exactly the lines read.
const std::string kNothing =
    "[[rule]]\nname = \"nothing\"\nkind = \"alert\"\nthreshold = \"1 per 1m\"\n"
    "  [[rule.event]]\n  name = \"never\"\n  match = 'NEVER-MATCHES-ANY-TEST-LINE'\n";

// Starts `swthrottle --passthrough --follow FILE` (plus `extra`).
Process follow(const TempDir& dir, const std::string& file, std::vector<std::string> extra = {}) {
  const std::string rules = dir.write("nothing.toml", kNothing);
  std::vector<std::string> args{"--rule", rules, "--passthrough", "--follow", file};
  args.insert(args.end(), extra.begin(), extra.end());
  return spawn(args);
}

// Waits until `p` has stdout exactly `want` (it may pass through shorter
// prefixes on the way); fails with what it got instead.
void expect_output(Process& p, const std::string& want) {
  p.read_stdout_until([&](const std::string& out) { return out.size() >= want.size(); }, kWait);
  CHECK(p.out() == want);
}

// Sends `sig` and waits for the child to exit on its own, standard input
// still open (Process::wait closes it first, which would also end the input).
RunResult signal_and_wait(Process& p, int sig) {
  REQUIRE(p.send_signal(sig));
  p.read_to_eof(kWait);
  return p.wait(kWait);
}

// SIGTERM, then the exit: status 0, nothing more on stdout than `want`.
void stop_expecting(Process& p, const std::string& want) {
  const RunResult r = signal_and_wait(p, SIGTERM);
  CHECK_FALSE(r.timed_out);
  check_exit_0(r);
  CHECK(r.out == want);
}

// --- 1. --follow -------------------------------------------------------------

TEST_CASE("live: --follow starts at the end: existing lines are skipped, appended lines are read") {
  TempDir dir;
  // The unterminated "old par" is the start of a line still being written:
  // like tail -F, it comes out whole once its newline arrives.
  const std::string log = dir.write("app.log", "old 1\nold 2\nold par");
  Process p = follow(dir, log);
  // The follower has opened the file and moved past the last complete line.
  // (It reads on at once, holding the partial line: the offset is 12 or more.)
  REQUIRE(poll_until([&] { return open_file_offset(p.pid(), log) >= 12; }, kWait));

  append_file(log, "tial\nnew 1\n");
  expect_output(p, "old partial\nnew 1\n");
  append_file(log, "new 2\n");
  expect_output(p, "old partial\nnew 1\nnew 2\n");
  stop_expecting(p, "old partial\nnew 1\nnew 2\n");
}

TEST_CASE("live: --follow --from-start reads the existing content first") {
  TempDir dir;
  const std::string log = dir.write("app.log", "a\nb\n");
  Process p = follow(dir, log, {"--from-start"});
  expect_output(p, "a\nb\n");
  append_file(log, "c\n");
  expect_output(p, "a\nb\nc\n");
  stop_expecting(p, "a\nb\nc\n");
}

TEST_CASE("live: --follow holds a partial line until its newline arrives") {
  TempDir dir;
  const std::string log = dir.write("app.log", "");
  Process p = follow(dir, log, {"--from-start"});
  // One write: the follower reads "sec" together with "first\n".
  append_file(log, "first\nsec");
  expect_output(p, "first\n");
  append_file(log, "ond\n");
  // A partial line written early would show here as "sec\nond\n".
  expect_output(p, "first\nsecond\n");
  stop_expecting(p, "first\nsecond\n");
}

// A container's CRI log followed: --passthrough writes payloads, a line the
// runtime split comes out whole once its F record arrives, and a stream's
// line still open in P records comes out at the end.
TEST_CASE("live: --follow on a CRI log: payloads, a split line whole, an open one at the end") {
  TempDir dir;
  const std::string log = dir.write("0.log", "");
  Process p = follow(dir, log, {"--from-start", "--input", "cri"});
  append_file(log, "2026-01-01T00:00:00.1Z stdout F first\n2026-01-01T00:00:01Z stdout P sec\n");
  expect_output(p, "first\n");
  append_file(log, "2026-01-01T00:00:01.5Z stderr F err\n2026-01-01T00:00:02Z stdout F ond\n");
  // stderr's line completes first; stdout's split one then comes out whole.
  expect_output(p, "first\nerr\nsecond\n");
  append_file(log, "2026-01-01T00:00:03Z stdout P no newline yet\n");
  // Read (the follower is past it) before the stop, which reads no more.
  const auto size = static_cast<int64_t>(std::filesystem::file_size(log));
  REQUIRE(poll_until([&] { return open_file_offset(p.pid(), log) >= size; }, kWait));
  stop_expecting(p, "first\nerr\nsecond\nno newline yet\n");
}

TEST_CASE("live: --follow across rename + create: old file's late lines first, every line once") {
  TempDir dir;
  const std::string log = dir.write("app.log", "");
  Process p = follow(dir, log, {"--from-start"});
  append_file(log, "a1\na2\n");
  expect_output(p, "a1\na2\n");

  // logrotate without copytruncate: the writer still holds the old file and
  // appends to it after the rename, until it reopens the name.
  const int writer = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  REQUIRE(writer >= 0);
  REQUIRE(::rename(log.c_str(), dir.file("app.log.1").c_str()) == 0);
  write_fd(writer, "a3\n");
  write_fd(writer, "a4\n");
  ::close(writer);
  append_file(log, "b1\nb2\n");  // the new file, created by the reopened writer

  expect_output(p, "a1\na2\na3\na4\nb1\nb2\n");
  append_file(log, "b3\n");
  expect_output(p, "a1\na2\na3\na4\nb1\nb2\nb3\n");
  stop_expecting(p, "a1\na2\na3\na4\nb1\nb2\nb3\n");
  CHECK(read_file(dir.file("app.log.1")) == "a1\na2\na3\na4\n");
}

TEST_CASE("live: --follow across copytruncate: the new content is read from the start") {
  TempDir dir;
  const std::string log = dir.write("app.log", "");
  Process p = follow(dir, log, {"--from-start"});
  const std::string before =
      "a long line before the rotation, number 1\n"
      "a long line before the rotation, number 2\n"
      "a long line before the rotation, number 3\n";
  append_file(log, before);
  expect_output(p, before);

  // copytruncate: the content is copied away and the file cut to 0 in place;
  // what comes next is shorter than the old read offset, so it cannot be
  // taken for growth.
  REQUIRE(::truncate(log.c_str(), 0) == 0);
  append_file(log, "new 1\n");
  expect_output(p, before + "new 1\n");
  append_file(log, "new 2\n");
  expect_output(p, before + "new 1\nnew 2\n");
  stop_expecting(p, before + "new 1\nnew 2\n");
  CHECK(contains(p.err(), "swthrottle: " + log + ": file truncated\n"));
}

TEST_CASE("live: --follow waits for a file missing at start and reads it from its start") {
  TempDir dir;
  const std::string log = dir.file("later.log");
  Process p = follow(dir, log);
  // The notice is the sign that the follower looked and is now waiting.
  CHECK(p.read_stderr_until(
      [&](const std::string& e) {
        return contains(e, "swthrottle: cannot open '" + log + "' for reading: No such file or directory\n");
      },
      kWait));
  append_file(log, "x1\nx2\n");
  expect_output(p, "x1\nx2\n");
  CHECK(p.read_stderr_until(
      [&](const std::string& e) { return contains(e, "swthrottle: '" + log + "' has appeared; following new file\n"); },
      kWait));
  stop_expecting(p, "x1\nx2\n");
}

TEST_CASE("live: --follow goes on when the file is deleted and created again") {
  TempDir dir;
  const std::string log = dir.write("app.log", "a\n");
  Process p = follow(dir, log, {"--from-start"});
  expect_output(p, "a\n");
  REQUIRE(::unlink(log.c_str()) == 0);
  CHECK(p.read_stderr_until(
      [&](const std::string& e) {
        return contains(e, "swthrottle: '" + log + "' has become inaccessible: No such file or directory\n");
      },
      kWait));
  append_file(log, "b\n");
  expect_output(p, "a\nb\n");
  append_file(log, "c\n");
  expect_output(p, "a\nb\nc\n");
  CHECK(p.read_stderr_until(
      [&](const std::string& e) { return contains(e, "swthrottle: '" + log + "' has appeared; following new file\n"); },
      kWait));
  stop_expecting(p, "a\nb\nc\n");
}

// --- 2. several inputs on shared windows (DESIGN.md §3 Concurrency) ---------------

struct FloodResult {
  std::size_t passed = 0;
  uint64_t suppressed = 0;
  std::size_t summaries = 0;
};

// Two followed files, each appended N flood lines as fast as two threads can,
// then a "done" line. The `done` rule (accurate, so it cannot miss a count)
// alerts on the second "done": by then both inputs have decided all their
// lines. SIGTERM then writes the pending summary.
FloodResult flood_two_files(const std::string& mode, int per_file, int threshold) {
  TempDir dir;
  const std::string rules = dir.write(
      "rules.toml", "[[rule]]\nname = \"flood\"\nkind = \"throttle\"\nthreshold = \"" + std::to_string(threshold) +
                        " per 1h\"\n  [[rule.event]]\n  name = \"flood\"\n  match = '^flood '\n\n"
                        "[[rule]]\nname = \"done\"\nkind = \"alert\"\nmode = \"accurate\"\nthreshold = \"2 per 1h\"\n"
                        "  [[rule.event]]\n  name = \"done\"\n  match = '^done$'\n");
  const std::string a = dir.write("a.log", "");
  const std::string b = dir.write("b.log", "");
  Process p = spawn({"--rule", rules, "--mode", mode, "--follow", "--from-start", a, b});
  REQUIRE(poll_until([&] { return open_file_offset(p.pid(), a) >= 0 && open_file_offset(p.pid(), b) >= 0; }, kWait));

  auto writer = [per_file](std::string path, std::string name) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return;
    for (int i = 0; i < per_file; ++i) {
      const std::string line = "flood " + name + " " + std::to_string(i) + "\n";
      if (::write(fd, line.data(), line.size()) < 0) break;
    }
    (void)!::write(fd, "done\n", 5);  // a failed write shows as a missing alert
    ::close(fd);
  };
  std::thread ta(writer, a, "a");
  std::thread tb(writer, b, "b");
  ta.join();
  tb.join();

  CHECK(p.read_stdout_until([](const std::string& out) { return contains(out, "swthrottle: alert done "); }, kWait));
  const RunResult r = signal_and_wait(p, SIGTERM);
  check_exit_0(r);

  FloodResult f;
  for (const auto& l : lines_of(r.out)) {
    if (l.rfind("flood ", 0) == 0) ++f.passed;
    if (l.rfind("swthrottle: summary flood suppressed=", 0) == 0) {
      ++f.summaries;
      f.suppressed += std::stoull(l.substr(std::strlen("swthrottle: summary flood suppressed=")));
    }
  }
  return f;
}

TEST_CASE("live: two followed files written at once, accurate: exactly Y pass in total") {
  const int n = 2000, y = 700;
  const FloodResult f = flood_two_files("accurate", n, y);
  CHECK(f.passed == static_cast<std::size_t>(y));
  CHECK(f.summaries == 1);  // nothing passes again within the hour: one summary, at exit
  CHECK(f.suppressed == static_cast<uint64_t>(2 * n - y));
}

TEST_CASE("live: two followed files written at once, efficient: Y to Y+1 pass (T = 2 inputs)") {
  const int n = 2000, y = 700;
  const FloodResult f = flood_two_files("efficient", n, y);
  CHECK(f.passed >= static_cast<std::size_t>(y));
  CHECK(f.passed <= static_cast<std::size_t>(y + 1));
  CHECK(f.passed + f.suppressed == static_cast<uint64_t>(2 * n));  // adds are never lost
}

// --- 3. arrival-time timers --------------------------------------------------

TEST_CASE("live: arrival time: a summary and a resolved come at bucket boundaries without another line") {
  TempDir dir;
  // 2 s windows of two 1 s buckets: lines written together fall into one
  // window even when they straddle a second boundary, so exactly one flood
  // line passes and both boom lines count, whatever the timing.
  const std::string rules = dir.write("rules.toml", R"([[rule]]
name      = "flood"
kind      = "throttle"
threshold = "1 per 2s"
buckets   = 2
  [[rule.event]]
  name  = "flood"
  match = '^flood'

[[rule]]
name      = "boom"
kind      = "alert"
threshold = "2 per 2s"
buckets   = 2
resolve   = true
  [[rule.event]]
  name  = "boom"
  match = '^boom'
)");
  Process p = spawn({"--rule", rules});  // standard input: a pipe that stays open
  REQUIRE(p.write_stdin("flood 1\nflood 2\nflood 3\nboom 1\nboom 2\n"));
  // Nothing more is written: only the timer can produce these two.
  CHECK(p.read_stdout_until(
      [](const std::string& out) {
        return contains(out, "swthrottle: summary flood ") && contains(out, "swthrottle: resolved boom ");
      },
      kWait));
  const std::vector<std::string> got = lines_of(without_times(p.out()));
  REQUIRE(got.size() == 4);
  CHECK(got[0] == "flood 1");
  CHECK(got[1] == "swthrottle: alert boom count=2 threshold=2 window=2s suppressed=0 time=TIME: boom 2");
  // Two suppressed, summarized once the passed line has left the window.
  CHECK(got[2] == "swthrottle: summary flood suppressed=2 first=TIME last=TIME window=2s time=TIME");
  // The count is 0, or 1 when the two boom lines straddled a second boundary.
  CHECK((got[3] == "swthrottle: resolved boom count=0 threshold=2 window=2s time=TIME" ||
         got[3] == "swthrottle: resolved boom count=1 threshold=2 window=2s time=TIME"));
  const std::string so_far = p.out();
  stop_expecting(p, so_far);  // and nothing more at exit
}

// --- 4. signals --------------------------------------------------------------

const std::string kKeepChange = R"([[rule]]
name      = "keep"
kind      = "throttle"
threshold = "2 per 1h"
  [[rule.event]]
  name  = "keep"
  match = '^keep'

[[rule]]
name      = "change"
kind      = "throttle"
threshold = "2 per 1h"
  [[rule.event]]
  name  = "change"
  match = '^change'
)";

// Three lines of each rule (two pass, one is suppressed), then a marker that
// --passthrough writes: once it is out, all three were decided.
Process start_keep_change(const std::string& rules) {
  Process p = spawn({"--rule", rules, "--passthrough"});
  REQUIRE(p.write_stdin("keep 1\nkeep 2\nkeep 3\nchange 1\nchange 2\nchange 3\nsync 1\n"));
  expect_output(p, "keep 1\nkeep 2\nchange 1\nchange 2\nsync 1\n");
  return p;
}

TEST_CASE("live: SIGUSR1 prints the stats on stderr and the run goes on") {
  TempDir dir;
  Process p = start_keep_change(dir.write("rules.toml", kKeepChange));
  REQUIRE(p.send_signal(SIGUSR1));
  CHECK(
      p.read_stderr_until([](const std::string& e) { return contains(e, "swthrottle: stats: rule change: "); }, kWait));
  CHECK(contains(p.err(), "swthrottle: stats: lines 7 matched 6 written 5 "));
  CHECK(contains(p.err(), "swthrottle: stats: rule keep: lines 3 passed 2 suppressed 1 "));
  CHECK(contains(p.err(), "swthrottle: stats: rule change: lines 3 passed 2 suppressed 1 "));
  REQUIRE(p.write_stdin("sync 2\n"));
  expect_output(p, "keep 1\nkeep 2\nchange 1\nchange 2\nsync 1\nsync 2\n");
  CHECK(p.running());
  p.close_stdin();
  const RunResult r = p.wait(kWait);
  check_exit_0(r);
}

TEST_CASE("live: SIGHUP reloads: an unchanged rule keeps its window, a changed one starts fresh") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kKeepChange);
  Process p = start_keep_change(rules);
  // `change` gets another window length; `keep` is the same.
  dir.write("rules.toml", replace_all(kKeepChange, "threshold = \"2 per 1h\"\n  [[rule.event]]\n  name  = \"change\"",
                                      "threshold = \"2 per 2h\"\n  [[rule.event]]\n  name  = \"change\""));
  REQUIRE(p.send_signal(SIGHUP));
  CHECK(p.read_stderr_until([](const std::string& e) { return contains(e, "\n"); }, kWait));
  CHECK(p.err() == "swthrottle: SIGHUP: reloaded 2 rules; started fresh: change\n");

  REQUIRE(p.write_stdin("keep 4\nchange 4\nsync 2\n"));
  CHECK(p.read_stdout_until([](const std::string& out) { return contains(out, "sync 2\n"); }, kWait));
  p.close_stdin();
  const RunResult r = p.wait(kWait);
  check_exit_0(r);
  std::string out = without_times(r.out);
  // change 3, suppressed before the reload, is still reported, once: where
  // its old window ended or at exit (DESIGN.md §3: at the latest at exit).
  const std::string change_summary =
      "swthrottle: summary change suppressed=1 first=TIME last=TIME window=1h time=TIME\n";
  const std::size_t at = out.find(change_summary);
  CHECK(at != std::string::npos);
  if (at != std::string::npos) out.erase(at, change_summary.size());
  // keep 4: its window still holds two passed lines, and its tally goes on
  // (keep 3 and keep 4). change 4: a fresh window.
  CHECK(out ==
        "keep 1\nkeep 2\nchange 1\nchange 2\nsync 1\nchange 4\nsync 2\n"
        "swthrottle: summary keep suppressed=2 first=TIME last=TIME window=1h time=TIME\n");
}

TEST_CASE("live: SIGHUP keeps the window when only the threshold changed (DESIGN.md §6: events, window, buckets)") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kKeepChange);
  Process p = start_keep_change(rules);
  // keep: Y 2 -> 3; its events, window and buckets are the same.
  dir.write("rules.toml", replace_all(kKeepChange, "threshold = \"2 per 1h\"\n  [[rule.event]]\n  name  = \"keep\"",
                                      "threshold = \"3 per 1h\"\n  [[rule.event]]\n  name  = \"keep\""));
  REQUIRE(p.send_signal(SIGHUP));
  CHECK(p.read_stderr_until([](const std::string& e) { return contains(e, "\n"); }, kWait));
  CHECK(p.err() == "swthrottle: SIGHUP: reloaded 2 rules\n");
  // The kept window holds keep 1 and keep 2, fewer than the new Y: room
  // again, so keep 3's summary comes (at the latest just before keep 4
  // passes, DESIGN.md §3); keep 4 is the third in the window, keep 5 is suppressed.
  REQUIRE(p.write_stdin("keep 4\nkeep 5\nsync 2\n"));
  CHECK(p.read_stdout_until([](const std::string& out) { return contains(out, "sync 2\n"); }, kWait));
  CHECK(without_times(p.out()) ==
        "keep 1\nkeep 2\nchange 1\nchange 2\nsync 1\n"
        "swthrottle: summary keep suppressed=1 first=TIME last=TIME window=1h time=TIME\n"
        "keep 4\nsync 2\n");
  p.close_stdin();
  check_exit_0(p.wait(kWait));
}

TEST_CASE("live: SIGHUP with a broken rules file reports FILE:LINE:COL and keeps the old rules") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kKeepChange);
  Process p = start_keep_change(rules);
  // Line 4: a misspelt key, an error (DESIGN.md §1: typos must not disable a rule).
  dir.write("rules.toml", replace_all(kKeepChange, "threshold = \"2 per 1h\"\n  [[rule.event]]\n  name  = \"keep\"",
                                      "threshhold = \"2 per 1h\"\n  [[rule.event]]\n  name  = \"keep\""));
  REQUIRE(p.send_signal(SIGHUP));
  CHECK(p.read_stderr_until([](const std::string& e) { return contains(e, "\n"); }, kWait));
  const std::string prefix = "swthrottle: SIGHUP: keeping the current rules: " + rules + ":4:";
  CHECK_MESSAGE(p.err().rfind(prefix, 0) == 0, p.err());
  // FILE:4:COL: what, naming the key.
  const std::string rest = p.err().substr(std::min(prefix.size(), p.err().size()));
  const std::size_t digits = rest.find_first_not_of("0123456789");
  CHECK(digits > 0);
  CHECK(digits != std::string::npos);
  CHECK(rest.compare(std::min(digits, rest.size()), 2, ": ") == 0);
  CHECK(contains(rest, "threshhold"));

  // The old rules still decide, with their windows: keep 4 is suppressed.
  REQUIRE(p.write_stdin("keep 4\nchange 4\nsync 2\n"));
  expect_output(p, "keep 1\nkeep 2\nchange 1\nchange 2\nsync 1\nsync 2\n");
  p.close_stdin();
  const RunResult r = p.wait(kWait);
  check_exit_0(r);
  CHECK(contains(without_times(r.out), "swthrottle: summary keep suppressed=2 first=TIME last=TIME window=1h"));
}

TEST_CASE("live: SIGINT and SIGTERM write the pending summaries and exit 0, reading a pipe that stays open") {
  for (const int sig : {SIGINT, SIGTERM}) {
    CAPTURE(sig);
    TempDir dir;
    Process p = start_keep_change(dir.write("rules.toml", kKeepChange));
    // The decider is blocked reading standard input, which stays open.
    const RunResult r = signal_and_wait(p, sig);
    CHECK_FALSE(r.timed_out);
    check_exit_0(r);
    CHECK(without_times(r.out) ==
          "keep 1\nkeep 2\nchange 1\nchange 2\nsync 1\n"
          "swthrottle: summary keep suppressed=1 first=TIME last=TIME window=1h time=TIME\n"
          "swthrottle: summary change suppressed=1 first=TIME last=TIME window=1h time=TIME\n");
  }
}

TEST_CASE("live: SIGTERM as the input ends (systemctl stop of `journalctl | swthrottle`): exit 0") {
  // systemd sends SIGTERM to the whole pipeline: the writer dies and the
  // input ends at the same moment as the signal comes. Either way the run
  // must end cleanly (DESIGN.md §6). Repeated because the two race.
  TempDir dir;
  const std::string rules = dir.write("nothing.toml", kNothing);
  int bad = 0;
  std::string how;
  for (int i = 0; i < 20; ++i) {
    Process p = spawn({"--rule", rules, "--passthrough"});
    REQUIRE(p.write_stdin("a\n"));
    expect_output(p, "a\n");
    REQUIRE(p.send_signal(SIGTERM));
    const RunResult r = p.wait(kWait);  // closes standard input at once
    if (r.exit_status != 0) {
      ++bad;
      how = "signal " + std::to_string(r.signal) + ", status " + std::to_string(r.exit_status) + ": " + r.err;
    }
  }
  INFO("last bad exit: " << how);
  CHECK(bad == 0);
}

// --- 5. exec -------------------------------------------------------------------

// Rules with time = "log": an alert keyed by address and a throttle.
const std::string kExecRules = R"([settings]
time     = "log"
timezone = "UTC"

[[rule]]
name      = "ssh"
kind      = "alert"
threshold = "2 per 1m"
key       = "{ip}"
message   = "{count} failures from {ip}"
EXEC
  [[rule.event]]
  name  = "failed"
  match = 'Failed password for \S+ from (?P<ip>\S+)'

[[rule]]
name      = "noise"
kind      = "throttle"
threshold = "1 per 1m"
  [[rule.event]]
  name  = "noise"
  match = 'noise'
)";

std::string failed_line(int second, const std::string& ip) {
  char t[32];
  std::snprintf(t, sizeof t, "2026-11-21T10:00:%02dZ", second);
  return std::string(t) + " sshd[1]: Failed password for root from " + ip + " port 22\n";
}

// Appends one line per run to `out`: TAG|TYPE|RULE|KEY|COUNT|MESSAGE|stdin.
// One printf is one write(2) with O_APPEND: concurrent jobs never mix lines.
std::string recorder(const TempDir& dir, const std::string& out, const std::string& before = "") {
  return script(dir, "record.sh",
                before +
                    "record=$(cat)\n"
                    "printf '%s|%s|%s|%s|%s|%s|%s\\n' \"$1\" \"$SWTHROTTLE_TYPE\" \"$SWTHROTTLE_RULE\" "
                    "\"$SWTHROTTLE_KEY\" \"$SWTHROTTLE_COUNT\" \"$SWTHROTTLE_MESSAGE\" \"$record\" >> '" +
                    out + "'\n");
}

TEST_CASE("live: exec (rule exec and --exec): every record delivered once, with the JSON and the environment") {
  TempDir dir;
  const std::string delivered = dir.file("delivered");
  const std::string rec = recorder(dir, delivered);
  const std::string rules =
      dir.write("rules.toml", replace_all(kExecRules, "EXEC", "exec      = ['" + rec + "', 'rule']"));
  const std::string input = failed_line(0, "203.0.113.9") + failed_line(1, "203.0.113.9") +  // alert
                            failed_line(2, "203.0.113.9") +                                  // cooldown
                            "2026-11-21T10:00:03Z noise 1\n2026-11-21T10:00:04Z noise 2\n";
  const RunResult r = run({"--rule", rules, "--format", "json", "--exec", rec + " global"}, input);
  check_exit_0(r);
  CHECK(r.err.empty());
  const std::vector<std::string> out = lines_of(r.out);
  REQUIRE(out.size() == 3);  // the alert, the passed noise line, the summary at end of input
  CHECK(describe(out[0]) == "alert ssh key=203.0.113.9 count=2 suppressed=0 time=10:00:01");
  CHECK(describe(out[1]) == "line 2026-11-21T10:00:03Z noise 1");
  CHECK(describe(out[2]) == "summary noise suppressed=1 first=10:00:04 last=10:00:04 time=10:00:04");

  // Exit waits for the commands: everything is there now. The rule's exec
  // runs for its alert; --exec for every alert, resolved and summary.
  std::vector<std::string> got = lines_of(read_file(delivered));
  std::sort(got.begin(), got.end());
  const std::vector<std::string> want{
      "global|alert|ssh|203.0.113.9|2|2 failures from 203.0.113.9|" + out[0],
      "global|summary|noise||1||" + out[2],
      "rule|alert|ssh|203.0.113.9|2|2 failures from 203.0.113.9|" + out[0],
  };
  CHECK(got == want);
}

TEST_CASE("live: exec failure: retried, then reported on stderr and in --stats") {
  TempDir dir;
  const std::string fail = script(dir, "fail.sh", "cat >/dev/null\nexit 1\n");
  const std::string rules = dir.write("rules.toml", replace_all(kExecRules, "EXEC", ""));
  const RunResult r =
      run({"--rule", rules, "--exec", fail, "--stats"}, failed_line(0, "203.0.113.9") + failed_line(1, "203.0.113.9"));
  CHECK(r.exit_status == 3);  // a delivery that gave up is not a success, even without --exit-code
  CHECK(r.signal == 0);
  CHECK(contains(r.out, "swthrottle: alert ssh key=203.0.113.9 count=2 "));
  CHECK(contains(r.err, "swthrottle: exec: alert ssh key=203.0.113.9: gave up after 3 attempts: exit status 1\n"));
  CHECK(contains(
      r.err, "swthrottle: stats: exec: started 3 succeeded 0 retried 2 timed out 0 gave up 1 dropped 0 not run 0\n"));
}

TEST_CASE("live: exec gave up and --exit-code: 3 wins over 1, a command that succeeds on retry: 1") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", replace_all(kExecRules, "EXEC", ""));
  const std::string input = failed_line(0, "203.0.113.9") + failed_line(1, "203.0.113.9");
  const std::string fail = script(dir, "fail.sh", "cat >/dev/null\nexit 1\n");
  CHECK(run({"--rule", rules, "--exec", fail, "--exit-code"}, input).exit_status == 3);
  const std::string tries = dir.file("tries");
  const std::string second =
      script(dir, "second.sh", "cat >/dev/null\necho x >> '" + tries + "'\n[ $(wc -l < '" + tries + "') -ge 2 ]\n");
  const RunResult r = run({"--rule", rules, "--exec", second, "--exit-code"}, input);
  CHECK(r.exit_status == 1);
  CHECK(lines_of(read_file(tries)).size() == 2);
}

TEST_CASE("live: exec that hangs is killed at --exec-timeout and reported as timed out") {
  TempDir dir;
  const std::string pids = dir.file("pids");
  const std::string hang = script(dir, "hang.sh", "echo $$ >> '" + pids + "'\nexec sleep 100\n");
  const std::string rules = dir.write("rules.toml", replace_all(kExecRules, "EXEC", ""));
  const RunResult r = run({"--rule", rules, "--exec", hang, "--exec-timeout", "300ms", "--stats"},
                          failed_line(0, "203.0.113.9") + failed_line(1, "203.0.113.9"));
  CHECK(r.exit_status == 3);  // gave up: not delivered
  CHECK(contains(r.err,
                 "swthrottle: exec: alert ssh key=203.0.113.9: gave up after 3 attempts: timed out after 300ms\n"));
  CHECK(contains(
      r.err, "swthrottle: stats: exec: started 3 succeeded 0 retried 2 timed out 3 gave up 1 dropped 0 not run 0\n"));
  // Each attempt's `sleep` (exec'd: the script's own pid) is gone.
  const std::vector<std::string> started = lines_of(read_file(pids));
  CHECK(started.size() == 3);
  for (const auto& pid : started) {
    CAPTURE(pid);
    CHECK((::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH));
  }
}

TEST_CASE("live: slow exec with --exec-jobs 1: every alert delivered, in order") {
  TempDir dir;
  const std::string delivered = dir.file("delivered");
  const std::string slow = recorder(dir, delivered, "sleep 0.2\n");
  const std::string rules = dir.write("rules.toml", replace_all(kExecRules, "EXEC", ""));
  std::string input;
  const std::vector<std::string> ips{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4", "192.0.2.5"};
  for (std::size_t i = 0; i < ips.size(); ++i) {
    input += failed_line(static_cast<int>(2 * i), ips[i]) + failed_line(static_cast<int>(2 * i + 1), ips[i]);
  }
  const RunResult r = run({"--rule", rules, "--format", "json", "--exec", slow + " slow", "--exec-jobs", "1"}, input);
  check_exit_0(r);
  const std::vector<std::string> out = lines_of(r.out);
  REQUIRE(out.size() == ips.size());
  const std::vector<std::string> got = lines_of(read_file(delivered));
  REQUIRE(got.size() == ips.size());
  for (std::size_t i = 0; i < ips.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == "slow|alert|ssh|" + ips[i] + "|2|2 failures from " + ips[i] + "|" + out[i]);
  }
}

// --- 6. --state ----------------------------------------------------------------

const std::string kStateRules = R"([settings]
time     = "log"
timezone = "UTC"

[[rule]]
name      = "errors"
kind      = "throttle"
threshold = "2 per 10s"
  [[rule.event]]
  name  = "error"
  match = 'ERROR'

[[rule]]
name      = "login"
kind      = "alert"
threshold = "3 per 1m"
key       = "{user}"
cooldown  = "2m"
resolve   = true
  [[rule.event]]
  name  = "failed"
  match = 'login failed user=(?P<user>\w+)'

[[rule]]
name      = "disk"
kind      = "throttle"
threshold = "1 per 1m"
key       = "{dev}"
  [[rule.event]]
  name  = "full"
  match = 'disk (?P<dev>\w+) full'
)";

// Three slices of one log. At the end of slice 1 summaries of `errors` and
// `disk` are pending; `login` for bob is half way to its threshold. Slice 2
// alerts for bob, whose cooldown then holds into slice 3.
const std::string kSlice1 =
    "2026-11-21T10:00:00Z ERROR a\n"
    "2026-11-21T10:00:01Z ERROR b\n"
    "2026-11-21T10:00:02Z ERROR c\n"
    "2026-11-21T10:00:03Z login failed user=bob\n"
    "2026-11-21T10:00:04Z login failed user=bob\n"
    "2026-11-21T10:00:05Z disk sda full\n"
    "2026-11-21T10:00:06Z disk sda full\n";
const std::string kSlice2 =
    "2026-11-21T10:00:07Z ERROR d\n"
    "2026-11-21T10:00:08Z login failed user=bob\n"
    "2026-11-21T10:00:09Z login failed user=bob\n"
    "2026-11-21T10:00:11Z ERROR e\n";
const std::string kSlice3 =
    "2026-11-21T10:01:30Z ERROR f\n"
    "2026-11-21T10:01:31Z login failed user=bob\n"
    "2026-11-21T10:01:32Z login failed user=bob\n"
    "2026-11-21T10:01:33Z login failed user=bob\n"
    "2026-11-21T10:02:10Z login failed user=bob\n"
    "2026-11-21T10:02:11Z disk sdb full\n";

// The whole log's records, worked out from DESIGN.md §2-§3 (10 buckets: 1 s for
// errors, 6 s for login and disk).
const std::vector<std::string> kWholeLog{
    "line 2026-11-21T10:00:00Z ERROR a",
    "line 2026-11-21T10:00:01Z ERROR b",
    // ERROR c: suppressed. bob: 1, 2 (below 3).
    "line 2026-11-21T10:00:05Z disk sda full",
    // disk sda at :06: suppressed. ERROR d at :07: suppressed (a, b in the window).
    "alert login key=bob count=3 suppressed=0 time=10:00:08",
    // bob at :09: condition true within the cooldown: tallied.
    // ERROR e at :11: a and b have left the window (:02-:11): room again.
    "summary errors suppressed=2 first=10:00:02 last=10:00:07 time=10:00:11",
    "line 2026-11-21T10:00:11Z ERROR e",
    // ERROR f at 10:01:30: bob's events have left the window (10:00:36 on).
    "resolved login key=bob count=0 time=10:01:30",
    "summary disk key=sda suppressed=1 first=10:00:06 last=10:00:06 time=10:01:30",
    "line 2026-11-21T10:01:30Z ERROR f",
    // bob at :31, :32, :33: true again at :33, still within the cooldown of
    // the alert at 10:00:08 (it holds across the resolve): tallied.
    // bob at 10:02:10: the cooldown is over; :09 and :33 are the tally.
    "alert login key=bob count=4 suppressed=2 time=10:02:10",
    "line 2026-11-21T10:02:11Z disk sdb full",
};

TEST_CASE("live: --state: three consecutive slices write exactly the records of one run over the whole log") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kStateRules);
  // One run over the whole log, also with a (fresh) state file: nothing is
  // pending at its end, so it writes what a run without one would.
  const RunResult whole =
      run({"--rule", rules, "--format", "json", "--state", dir.file("whole.json")}, kSlice1 + kSlice2 + kSlice3);
  check_exit_0(whole);
  CHECK(whole.err.empty());
  CHECK(describe_all(whole.out) == kWholeLog);

  const std::string state = dir.file("state.json");
  std::string sliced;
  for (const std::string& slice : {kSlice1, kSlice2, kSlice3}) {
    const RunResult r = run({"--rule", rules, "--format", "json", "--state", state}, slice);
    check_exit_0(r);
    CHECK(r.err.empty());
    sliced += r.out;
  }
  CHECK(sliced == whole.out);
  // Slice 1 ends with two summaries pending: carried over, not written.
  CHECK(describe_all(run({"--rule", rules, "--format", "json", "--state", dir.file("s1.json")}, kSlice1).out) ==
        std::vector<std::string>{"line 2026-11-21T10:00:00Z ERROR a", "line 2026-11-21T10:00:01Z ERROR b",
                                 "line 2026-11-21T10:00:05Z disk sda full"});
}

TEST_CASE("live: --state: a rule whose definition changed between runs starts fresh") {
  TempDir dir;
  const std::string state = dir.file("state.json");
  const std::string rules = dir.write("rules.toml", kStateRules);
  REQUIRE(run({"--rule", rules, "--format", "json", "--state", state}, kSlice1).exit_status == 0);

  dir.write("rules.toml", replace_all(kStateRules, "\"2 per 10s\"", "\"3 per 10s\""));
  const RunResult r = run({"--rule", rules, "--format", "json", "--state", state}, kSlice2);
  check_exit_0(r);
  CHECK(r.err == "swthrottle: state: rule \"errors\" changed since the state was saved; it starts fresh\n");
  // errors: a fresh window, so ERROR d and e pass. login kept bob's two
  // events from slice 1: the third alerts.
  CHECK(describe_all(r.out) == std::vector<std::string>{
                                   "line 2026-11-21T10:00:07Z ERROR d",
                                   "alert login key=bob count=3 suppressed=0 time=10:00:08",
                                   "line 2026-11-21T10:00:11Z ERROR e",
                               });
}

TEST_CASE("live: --state: a corrupt state file is reported, moved aside, and the run starts fresh") {
  TempDir dir;
  const std::string state = dir.write("state.json", "{\"swthrottle_state\":1,\"rules\":[{\"rule\":");
  const std::string rules = dir.write("rules.toml", kStateRules);
  const RunResult r = run({"--rule", rules, "--format", "json", "--state", state}, kSlice2);
  check_exit_0(r);
  CHECK_MESSAGE(r.err.rfind("swthrottle: state file " + state + ":", 0) == 0, r.err);
  CHECK(contains(r.err, "; moved aside to " + state + ".corrupt-"));
  CHECK(contains(r.err, ", starting fresh\n"));
  std::size_t aside = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    if (e.path().filename().string().rfind("state.json.corrupt-", 0) == 0) {
      ++aside;
      CHECK(read_file(e.path().string()) == "{\"swthrottle_state\":1,\"rules\":[{\"rule\":");
    }
  }
  CHECK(aside == 1);
  // Fresh: slice 2 alone has two bob events (no alert) and two errors that pass.
  CHECK(describe_all(r.out) ==
        std::vector<std::string>{"line 2026-11-21T10:00:07Z ERROR d", "line 2026-11-21T10:00:11Z ERROR e"});
  // The state was saved anew, and the next run reads it without complaint.
  const RunResult next = run({"--rule", rules, "--format", "json", "--state", state}, "");
  check_exit_0(next);
  CHECK(next.err.empty());
}

TEST_CASE("live: --state: SIGTERM saves the pending summary, the next run writes it") {
  TempDir dir;
  const std::string state = dir.file("state.json");
  const std::string rules = dir.write("rules.toml", kStateRules);
  Process p = spawn({"--rule", rules, "--format", "json", "--state", state});
  // ERROR c is suppressed; the disk line that passes after it shows it was decided.
  REQUIRE(
      p.write_stdin("2026-11-21T10:00:00Z ERROR a\n2026-11-21T10:00:01Z ERROR b\n"
                    "2026-11-21T10:00:02Z ERROR c\n2026-11-21T10:00:05Z disk sda full\n"));
  CHECK(p.read_stdout_lines(3, kWait));
  const RunResult r = signal_and_wait(p, SIGTERM);
  check_exit_0(r);
  CHECK(describe_all(r.out) == std::vector<std::string>{"line 2026-11-21T10:00:00Z ERROR a",
                                                        "line 2026-11-21T10:00:01Z ERROR b",
                                                        "line 2026-11-21T10:00:05Z disk sda full"});
  const RunResult next = run({"--rule", rules, "--format", "json", "--state", state}, "2026-11-21T10:00:11Z ERROR e\n");
  check_exit_0(next);
  CHECK(describe_all(next.out) ==
        std::vector<std::string>{"summary errors suppressed=1 first=10:00:02 last=10:00:02 time=10:00:11",
                                 "line 2026-11-21T10:00:11Z ERROR e"});
}

TEST_CASE("live: --exit-code after SIGINT/SIGTERM: 1 when an alert was written, 0 when none") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", replace_all(kExecRules, "EXEC", ""));
  for (const int sig : {SIGINT, SIGTERM}) {
    CAPTURE(sig);
    // Reading a pipe that stays open: the decider is stuck in read(2) and the
    // signal thread ends the process itself after 500 ms (_Exit).
    Process p = spawn({"--rule", rules, "--exit-code"});
    REQUIRE(p.write_stdin(failed_line(0, "203.0.113.9") + failed_line(1, "203.0.113.9")));
    CHECK(p.read_stdout_lines(1, kWait));
    RunResult r = signal_and_wait(p, sig);
    CHECK(r.signal == 0);
    CHECK(r.exit_status == 1);
    // --follow: the decider wakes at once and run() returns the status.
    // --from-start: lines appended between the open and its fstat (the
    // start of a plain --follow, at the end) are read all the same.
    const std::string log = dir.write("ssh.log", "");
    Process f = spawn({"--rule", rules, "--exit-code", "--follow", "--from-start", log});
    REQUIRE(poll_until([&] { return open_file_offset(f.pid(), log) >= 0; }, kWait));
    append_file(log, failed_line(0, "203.0.113.9") + failed_line(1, "203.0.113.9"));
    CHECK(f.read_stdout_lines(1, kWait));
    r = signal_and_wait(f, sig);
    CHECK(r.exit_status == 1);
    // No alert: 0.
    Process q = spawn({"--rule", rules, "--exit-code"});
    REQUIRE(q.write_stdin("2026-11-21T10:00:03Z noise 1\n"));
    CHECK(q.read_stdout_lines(1, kWait));
    r = signal_and_wait(q, sig);
    check_exit_0(r);
  }
}

// Holds an exclusive flock(2) on `lock` while alive, as another run would.
struct HeldLock {
  int fd;
  explicit HeldLock(const std::string& lock) : fd(::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX) == 0);
  }
  ~HeldLock() { ::close(fd); }
};

TEST_CASE("live: --state: a run waiting for the lock says so, SIGTERM/SIGINT end the wait with exit 4") {
  TempDir dir;
  const std::string state = dir.file("state.json");
  const std::string rules = dir.write("rules.toml", kStateRules);
  HeldLock held(state + ".lock");
  for (const int sig : {SIGTERM, SIGINT}) {
    CAPTURE(sig);
    Process p = spawn({"--rule", rules, "--state", state, "--state-wait", "forever"});
    const std::string waiting = "swthrottle: waiting for lock on " + state + ".lock\n";
    REQUIRE(p.read_stderr_until([&](const std::string& err) { return err == waiting; }, kWait));
    const auto sent = std::chrono::steady_clock::now();
    const RunResult r = signal_and_wait(p, sig);
    CHECK(std::chrono::steady_clock::now() - sent < 2s);  // promptly, not at the end of a wait
    CHECK(r.signal == 0);
    CHECK(r.exit_status == 4);
    CHECK(r.out == "");
    CHECK(r.err == waiting + "swthrottle: " + (sig == SIGTERM ? "SIGTERM" : "SIGINT") + " while waiting for " + state +
                       ".lock; nothing was read (exit 4)\n");
  }
}

TEST_CASE("live: --state: --state-wait bounds the wait for the lock: exit 4, a free lock: the run goes on") {
  TempDir dir;
  const std::string state = dir.file("state.json");
  const std::string rules = dir.write("rules.toml", kStateRules);
  {
    HeldLock held(state + ".lock");
    const RunResult r =
        run({"--rule", rules, "--state", state, "--state-wait", "200ms"}, "2026-11-21T10:00:00Z ERROR a\n");
    CHECK(r.exit_status == 4);
    CHECK(r.out == "");
    CHECK(r.err == "swthrottle: waiting for lock on " + state + ".lock\nswthrottle: --state " + state +
                       ": another run still holds " + state +
                       ".lock after --state-wait 200ms; nothing was read (exit 4)\n");
    const RunResult now =
        run({"--rule", rules, "--state", state, "--state-wait", "0"}, "2026-11-21T10:00:00Z ERROR a\n");
    CHECK(now.exit_status == 4);
    CHECK(now.err == "swthrottle: waiting for lock on " + state + ".lock\nswthrottle: --state " + state +
                         ": another run still holds " + state +
                         ".lock after --state-wait 0; nothing was read (exit 4)\n");
  }
  const RunResult free =
      run({"--rule", rules, "--state", state, "--state-wait", "0"}, "2026-11-21T10:00:00Z ERROR a\n");
  check_exit_0(free);
  CHECK(free.err == "");
  CHECK(free.out == "2026-11-21T10:00:00Z ERROR a\n");
}

TEST_CASE("live: --follow --state saves the state every --state-interval while running") {
  TempDir dir;
  const std::string state = dir.file("state.json");
  const std::string rules = dir.write("rules.toml", kStateRules);
  const std::string log = dir.write("app.log", "");
  Process p = spawn({"--rule", rules, "--format", "json", "--state", state, "--state-interval", "100ms", "--follow",
                     "--from-start", log});
  append_file(log, "2026-11-21T10:00:05Z disk sda full\n");
  CHECK(p.read_stdout_lines(1, kWait));
  // Saved by the timer, not at exit: the process is still running.
  CHECK(poll_until([&] { return file_has(state, "\"sda\""); }, kWait));
  CHECK(p.running());
  // And saved again: a later key shows up too.
  append_file(log, "2026-11-21T10:00:06Z disk sdb full\n");
  CHECK(p.read_stdout_lines(2, kWait));
  CHECK(poll_until([&] { return file_has(state, "\"sdb\""); }, kWait));
  CHECK(p.running());
  const std::string so_far = p.out();
  stop_expecting(p, so_far);  // and nothing more at exit
}

TEST_CASE("live: --state with a live pipe (not --follow) is saved every few seconds too (DESIGN.md §6)") {
  // `journalctl -f | swthrottle --state ...` (examples/swthrottle.service)
  // runs for months: a crash must not lose more than a few seconds.
  TempDir dir;
  const std::string state = dir.file("state.json");
  const std::string rules = dir.write("rules.toml", kStateRules);
  Process p = spawn({"--rule", rules, "--format", "json", "--state", state, "--state-interval", "200ms"});
  REQUIRE(p.write_stdin("2026-11-21T10:00:05Z disk sda full\n"));
  CHECK(p.read_stdout_lines(1, kWait));
  CHECK(poll_until([&] { return file_has(state, "\"sda\""); }, kWait));
  CHECK(p.running());
  const RunResult r = signal_and_wait(p, SIGTERM);
  check_exit_0(r);
}

// --- 7. the shipped examples -------------------------------------------------

// A fake journalctl (records its arguments, prints sshd lines) and a fake
// logger (appends its input to a file), first in PATH.
EnvAdditions fake_tools(const TempDir& dir, const std::string& journal_body) {
  REQUIRE(::mkdir(dir.file("bin").c_str(), 0755) == 0);
  script(dir, "bin/journalctl", "printf '%s\\n' \"$*\" >> '" + dir.file("journalctl.args") + "'\n" + journal_body);
  script(dir, "bin/logger",
         "printf '%s\\n' \"$*\" >> '" + dir.file("logger.args") + "'\ncat >> '" + dir.file("logger.out") + "'\n");
  const char* path = std::getenv("PATH");
  return {{"PATH", dir.file("bin") + ":" + (path != nullptr ? path : "/usr/bin:/bin")}};
}

std::string ssh_failed(const std::string& time, const std::string& ip) {
  return time + "+0000 host sshd[812]: Failed password for root from " + ip + " port 22 ssh2";
}

// The installed paths in the examples, pointed at the test's own.
std::string localize(std::string cmd, const TempDir& dir) {
  cmd = replace_all(cmd, "/usr/local/bin/swthrottle", kBinary);
  cmd = replace_all(cmd, "/etc/swthrottle/rules-ssh.toml", kSourceDir + "/examples/rules-ssh.toml");
  return replace_all(cmd, "/var/lib/swthrottle", dir.path());
}

TEST_CASE("live: examples/rules-ssh.toml passes --check") {
  const RunResult r = run({"--check", "--rule", kSourceDir + "/examples/rules-ssh.toml"});
  check_exit_0(r);
  CHECK(r.err.empty());
}

TEST_CASE("live: examples/swthrottle.service: its ExecStart runs and writes the alerts") {
  const std::string unit = read_file(kSourceDir + "/examples/swthrottle.service");
  std::string exec_start;
  for (const auto& l : lines_of(unit))
    if (l.rfind("ExecStart=", 0) == 0) exec_start = l.substr(std::strlen("ExecStart="));
  REQUIRE(!exec_start.empty());
  // No systemd specifiers or variables to expand: the line means the same to sh.
  CHECK(exec_start.find('%') == std::string::npos);
  CHECK(exec_start.find('$') == std::string::npos);
  for (const char* setting : {"Restart=", "DynamicUser=yes", "StateDirectory=swthrottle", "ReadOnlyPaths=",
                              "ExecReload=/bin/kill -HUP $MAINPID", "SupplementaryGroups=systemd-journal"}) {
    CAPTURE(setting);
    CHECK(contains(unit, std::string("\n") + setting));
  }

  TempDir dir;
  // journalctl -f never ends; this one ends after its lines, which ends the input.
  std::string lines;
  for (int i = 0; i < 6; ++i) lines += ssh_failed("2026-11-21T10:00:0" + std::to_string(i), "203.0.113.9") + "\n";
  lines += ssh_failed("2026-11-21T10:00:07", "198.51.100.7") + "\n";
  dir.write("journal.txt", lines);
  const EnvAdditions env = fake_tools(dir, "cat '" + dir.file("journal.txt") + "'\n");

  const RunResult r = swthrottle::test::run_process({"/bin/sh", "-c", localize(exec_start, dir)}, "", 20'000ms, env);
  CHECK_FALSE(r.timed_out);
  check_exit_0(r);
  CHECK(r.err.empty());
  // Arrival time: the times vary. Five failures alert; the sixth is within the cooldown.
  CHECK(without_times(r.out) ==
        "swthrottle: alert ssh-bruteforce key=203.0.113.9 count=5 threshold=5 window=10m suppressed=0 time=TIME: "
        "5 failed SSH logins from 203.0.113.9 within 10m\n");
  const std::string args = read_file(dir.file("journalctl.args"));
  CHECK(contains(args, "--follow"));
  CHECK(contains(args, "--output=short-iso"));
  CHECK(contains(args, "--identifier=sshd"));
  CHECK(file_has(dir.file("state.json"), "\"203.0.113.9\""));
}

TEST_CASE("live: examples/cron.txt: two runs over consecutive journal slices, with --state") {
  const std::string crontab = read_file(kSourceDir + "/examples/cron.txt");
  std::string entry;
  for (const auto& l : lines_of(crontab)) {
    if (l.empty() || l[0] == '#') continue;
    const std::size_t eq = l.find('='), sp = l.find(' ');
    if (eq != std::string::npos && (sp == std::string::npos || eq < sp)) continue;  // MAILTO=... and the like
    entry = l;
  }
  REQUIRE(!entry.empty());
  CHECK(entry.find('%') == std::string::npos);  // cron would turn it into a newline
  // Five schedule fields, then the command.
  std::size_t at = 0;
  for (int f = 0; f < 5; ++f) {
    at = entry.find_first_not_of(" \t", at);
    at = entry.find_first_of(" \t", at);
    REQUIRE(at != std::string::npos);
  }
  const std::string command = entry.substr(entry.find_first_not_of(" \t", at));
  CHECK(entry.rfind("*/5 ", 0) == 0);

  TempDir dir;
  // Each run prints the slice after the cursor and moves the cursor on, as
  // journalctl --cursor-file does: the slices are consecutive.
  dir.write("slice0.txt", ssh_failed("2026-11-21T10:00:00", "203.0.113.9") + "\n" +
                              ssh_failed("2026-11-21T10:00:01", "203.0.113.9") + "\n" +
                              ssh_failed("2026-11-21T10:00:02", "203.0.113.9") + "\n");
  dir.write("slice1.txt", ssh_failed("2026-11-21T10:05:00", "203.0.113.9") + "\n" +
                              ssh_failed("2026-11-21T10:05:01", "203.0.113.9") + "\n" +
                              ssh_failed("2026-11-21T10:05:02", "203.0.113.9") + "\n");
  const EnvAdditions env = fake_tools(dir, R"(cursor_file=
for a in "$@"; do case "$a" in --cursor-file=*) cursor_file=${a#--cursor-file=};; esac; done
n=0
[ -n "$cursor_file" ] && [ -s "$cursor_file" ] && n=$(cat "$cursor_file")
[ -f ")" + dir.file("slice") + R"($n.txt" ] && cat ")" +
                                               dir.file("slice") + R"($n.txt"
[ -n "$cursor_file" ] && echo $((n + 1)) > "$cursor_file"
exit 0
)");

  for (int run_no = 0; run_no < 2; ++run_no) {
    CAPTURE(run_no);
    const RunResult r = swthrottle::test::run_process({"/bin/sh", "-c", localize(command, dir)}, "", 20'000ms, env);
    CHECK_FALSE(r.timed_out);
    check_exit_0(r);
    CHECK(r.out.empty());  // everything went to the logger
    CHECK(r.err.empty());  // cron would mail it
  }
  CHECK(read_file(dir.file("journal.cursor")) == "2\n");  // both runs read through the cursor file
  // Three failures per run: only the state carried over makes five, at 10:05:01.
  const std::vector<std::string> records = lines_of(read_file(dir.file("logger.out")));
  REQUIRE(records.size() == 1);
  CHECK(describe(records[0]) == "alert ssh-bruteforce key=203.0.113.9 count=5 suppressed=0 time=10:05:01");
  CHECK(field(records[0], "message") == "5 failed SSH logins from 203.0.113.9 within 10m");
  CHECK(field(records[0], "line") == ssh_failed("2026-11-21T10:05:01", "203.0.113.9"));
  const std::string logger_args = read_file(dir.file("logger.args"));
  CHECK(contains(logger_args, "swthrottle"));
}

}  // namespace

// `tail -F app.log | swthrottle` with multiline: the last trace on a pipe
// that stays open comes out whole once nothing follows it for a second (on
// -j 1 and -j 2 alike); a frame written later starts an event of its own.
TEST_CASE("live: multiline on a pipe hands over the last trace whole once the pipe is idle") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"(
[settings]
multiline = "java"
[[rule]]
name      = "npe"
kind      = "throttle"
threshold = "1 per 1h"
  [[rule.event]]
  name  = "npe"
  match = '\njava\.lang\.NullPointerException'
)");
  const std::string trace =
      "ERROR [pay] failed\njava.lang.NullPointerException: card\n\tat c.e.Pay.charge(Pay.java:10)\n";
  const std::string io = "ERROR [pay] io\njava.io.IOException: Broken pipe\n\tat c.e.Pay.charge(Pay.java:11)\n";
  for (const char* j : {"1", "2"}) {
    CAPTURE(j);
    Process p = spawn({"--rule", rules, "--passthrough", "-j", j});
    // The second NPE trace is suppressed whole; the IOException passes whole,
    // though nothing comes after it.
    REQUIRE(p.write_stdin("INFO start\n" + trace + trace + io));
    CHECK(p.read_stdout_until([&](const std::string& out) { return out == "INFO start\n" + trace + io; }, kWait));
    REQUIRE(p.write_stdin("\tat late.Frame(F.java:1)\n"));
    p.close_stdin();
    const RunResult r = p.wait();
    const std::string passed = "INFO start\n" + trace + io + "\tat late.Frame(F.java:1)\n";
    CHECK(r.out.substr(0, passed.size()) == passed);
    // At the end: the summary of the one suppressed trace.
    CHECK(r.out.substr(passed.size()).starts_with("swthrottle: summary npe suppressed=1 first="));
    CHECK(r.exit_status == 0);
  }
}

// A followed file's backlog (--from-start, or a log that got ahead) is read,
// matched and decided in batches, as a replay is, and line by line once
// caught up: the records are those of a replay of the same file, whatever
// the path, and a line appended afterwards is decided at once.
TEST_CASE("live: --follow --from-start over a backlog writes the records a replay writes, then follows") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"([settings]
time = "log"
[[rule]]
name      = "login"
kind      = "alert"
threshold = "4 per 10s"
key       = "{user}"
cooldown  = "5s"
resolve   = true
  [[rule.event]]
  name  = "fail"
  match = 'login failed user=(?P<user>\w+)'
[[rule]]
name      = "disk"
kind      = "throttle"
threshold = "3 per 10s"
  [[rule.event]]
  name  = "full"
  match = 'disk full'
)");
  std::string log;
  for (int i = 0; i < 20'000; ++i) {
    const int ms = i * 37;  // 740 s of log
    char stamp[64];
    std::snprintf(stamp, sizeof stamp, "2026-11-26T10:%02d:%02d.%03dZ", ms / 60'000 % 60, ms / 1000 % 60, ms % 1000);
    const char* what = i % 7 == 0 ? "disk full on /var" : i % 3 == 0 ? "login failed user=u" : "request ok user=u";
    log += std::string(stamp) + " " + what + std::to_string(i % 5 == 0 ? 1 : i % 11) + "\n";
  }
  const std::string file = dir.write("app.log", log);
  // --state: what is pending at the end is saved, not written, in both runs.
  const RunResult replay = run({"--rule", rules, "--format", "json", "--state", dir.file("replay.json"), file});
  REQUIRE(replay.exit_status == 0);
  REQUIRE(replay.out.size() > 10'000);  // alerts, resolves, passed lines and summaries
  Process p = spawn(
      {"--rule", rules, "--format", "json", "--state", dir.file("follow.json"), "--follow", "--from-start", file});
  REQUIRE(p.read_stdout_until([&](const std::string& out) { return out.size() >= replay.out.size(); }, kWait));
  CHECK(p.out() == replay.out);
  // Caught up: a new line is decided as it comes.
  append_file(file, "2026-11-26T10:12:21.000Z disk full on /data\n");
  CHECK(p.read_stdout_until(
      [&](const std::string& out) { return out.find("/data", replay.out.size()) != std::string::npos; }, kWait));
  REQUIRE(p.send_signal(SIGTERM));
  const RunResult r = p.wait();
  CHECK(r.exit_status == 0);
}
