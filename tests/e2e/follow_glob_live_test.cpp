// --follow PATTERN on a live run (man page: OPTIONS, --follow): the files
// the pattern matches at the start are followed from their end, a file
// created later from its start, and a file removed is let go of, after its
// last lines. The real binary; every wait ends as soon as what it waits for
// has happened (a record on stdout, a message on stderr, a descriptor in
// /proc).
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text_files.h"

namespace {

using swthrottle::test::append_file;
using swthrottle::test::contains;
using swthrottle::test::open_file_offset;
using swthrottle::test::poll_until;
using swthrottle::test::Process;
using swthrottle::test::read_file;
using swthrottle::test::TempDir;
using namespace std::chrono_literals;

const std::string kBinary = SWTHROTTLE_BINARY;
constexpr auto kWait = 10'000ms;

// Every line with "x" passes: the output is what was read, in each file's order.
const std::string kPassAll =
    "[[rule]]\nname = \"all\"\nkind = \"throttle\"\nthreshold = \"1000 per 1h\"\n"
    "[[rule.event]]\nname = \"x\"\nmatch = 'x'\n";

bool has_line(const Process& p, const std::string& line) { return contains("\n" + p.out(), "\n" + line + "\n"); }

void expect_line(Process& p, const std::string& line) {
  CHECK_MESSAGE(p.read_stdout_until([&](const std::string&) { return has_line(p, line); }, kWait), p.out());
}

void expect_stderr(Process& p, const std::string& part) {
  CHECK_MESSAGE(p.read_stderr_until([&](const std::string& e) { return contains(e, part); }, kWait), p.err());
}

}  // namespace

TEST_CASE("live: --follow 'DIR/*.log' follows files created later and lets go of removed ones") {
  TempDir dir;
  REQUIRE(::mkdir(dir.file("logs").c_str(), 0755) == 0);
  const std::string rules = dir.write("rules.toml", kPassAll);
  const std::string a = dir.write("logs/a.log", "x a old\n");
  dir.write("logs/notes.txt", "x not matched\n");
  const std::string pattern = dir.file("logs/*.log");
  const std::string metrics = dir.file("metrics.prom");
  Process p = Process::spawn({kBinary, "--rule", rules, "--metrics-file", metrics, "--follow", pattern});
  // a.log, there at the start: followed from its end, as --follow does.
  REQUIRE(poll_until([&] { return open_file_offset(p.pid(), a) >= 8; }, kWait));
  append_file(a, "x a 1\n");
  expect_line(p, "x a 1");

  // b.log appears: followed from its start, its first line included.
  const std::string b = dir.write("logs/b.log", "x b 1\n");
  expect_stderr(p, "swthrottle: '" + b + "' has appeared (matches '" + pattern + "'); following it\n");
  expect_line(p, "x b 1");
  append_file(b, "x b 2\n");
  expect_line(p, "x b 2");

  // a.log written, then removed: its last line still comes, then it is let go of.
  append_file(a, "x a 2\n");
  REQUIRE(::unlink(a.c_str()) == 0);
  expect_stderr(p,
                "swthrottle: '" + a + "' no longer matches '" + pattern + "'; it is let go of once read to its end\n");
  expect_line(p, "x a 2");
  REQUIRE(poll_until([&] { return open_file_offset(p.pid(), a + " (deleted)") < 0; }, kWait));

  // A file of another name is not matched.
  dir.write("logs/c.txt", "x c\n");
  // A file at a.log's name again: a new file, followed from its start.
  dir.write("logs/a.log", "x a new\n");
  expect_line(p, "x a new");

  REQUIRE(p.send_signal(SIGTERM));
  const auto r = p.wait(kWait);
  CHECK(r.exit_status == 0);
  CHECK_FALSE(contains(r.out, "x a old"));
  CHECK_FALSE(contains(r.out, "not matched"));
  CHECK_FALSE(contains(r.out, "x c"));
  // Every line once.
  for (const char* line : {"x a 1\n", "x a 2\n", "x b 1\n", "x b 2\n", "x a new\n"}) {
    CAPTURE(line);
    const std::size_t first = r.out.find(line);
    CHECK(first != std::string::npos);
    CHECK(r.out.find(line, first + 1) == std::string::npos);
  }
  // The metrics have one series for the pattern, with every file's lines,
  // the two a.log files' included; none per file.
  const std::string m = read_file(metrics);
  CHECK_MESSAGE(contains(m, "swthrottle_input_lines_total{input=\"" + pattern + "\"} 5\n"), m);
  CHECK_MESSAGE(!contains(m, "{input=\"" + a + "\"}"), m);
  CHECK_MESSAGE(!contains(m, "{input=\"" + b + "\"}"), m);
}

TEST_CASE("live: --follow with a pattern that matches nothing yet waits for files, and stops at once on SIGTERM") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kPassAll);
  const std::string pattern = dir.file("later/*.log");
  Process p = Process::spawn({kBinary, "--rule", rules, "--follow", pattern});
  expect_stderr(p, "swthrottle: '" + pattern + "' matches no file yet; following files as they appear\n");
  // The directory itself comes later (its watch is made then; the rescans find it anyway).
  REQUIRE(::mkdir(dir.file("later").c_str(), 0755) == 0);
  dir.write("later/app.log", "x first\n");
  expect_line(p, "x first");
  REQUIRE(p.send_signal(SIGTERM));
  const auto r = p.wait(kWait);
  CHECK(r.exit_status == 0);
  CHECK(r.out == "x first\n");
}

TEST_CASE("live: --follow of a plain path with no wildcard is not a pattern: a missing file is waited for") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kPassAll);
  const std::string log = dir.file("app.log");
  Process p = Process::spawn({kBinary, "--rule", rules, "--follow", log});
  expect_stderr(p, "cannot open '" + log + "' for reading: No such file or directory");
  CHECK_FALSE(contains(p.err(), "matches no file"));
  dir.write("app.log", "x 1\n");
  expect_line(p, "x 1");
  REQUIRE(p.send_signal(SIGTERM));
  CHECK(p.wait(kWait).exit_status == 0);
}
