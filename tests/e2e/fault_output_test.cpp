// Fault injection on stdout and on descriptors (issue 18, part 2): the
// output pipe closed (EPIPE), stdout on /dev/full (ENOSPC), a consumer that
// stops reading, and too many open files. DESIGN.md §5: a closed output pipe ends
// swthrottle quietly, state saved; output is flushed record by record; §7:
// memory stays bounded.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "support/limited_command.h"
#include "support/process.h"
#include "support/sanitized.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::check_survived;
using swthrottle::test::limited;
using swthrottle::test::Limits;
using swthrottle::test::open_file_offset;
using swthrottle::test::poll_until;
using swthrottle::test::Process;
using swthrottle::test::read_file;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;
using namespace std::chrono_literals;

const std::string kBinary = SWTHROTTLE_BINARY;

// A rule that matches no test line: with --passthrough every line is
// written, so the output must be the input, byte for byte.
const std::string kNothing =
    "[[rule]]\nname = \"nothing\"\nkind = \"alert\"\nthreshold = \"1 per 1m\"\n"
    "  [[rule.event]]\n  name = \"never\"\n  match = 'NEVER-MATCHES-ANY-TEST-LINE'\n";

std::vector<std::string> binary_with(std::vector<std::string> args) {
  args.insert(args.begin(), kBinary);
  return args;
}

// "line 1\n" ... "line n\n".
std::string numbered_lines(int n) {
  std::string s;
  s.reserve(static_cast<std::size_t>(n) * 14);
  for (int i = 1; i <= n; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

}  // namespace

TEST_CASE("fault: stdout closed after the first line (| head -1): exit 0, quiet, state saved") {
  TempDir dir;
  const std::string rules = dir.write("nothing.toml", kNothing);
  const std::string input = dir.write("in.log", numbered_lines(200'000));
  const std::string state = dir.file("state.json");
  Process p = Process::spawn(binary_with({"--rule", rules, "--passthrough", "--state", state, input}));
  REQUIRE(p.read_stdout_lines(1));
  p.close_stdout();  // what head does after its first line
  const RunResult r = p.wait();
  check_survived(r);
  CHECK(r.exit_status == 0);
  CHECK(r.err.empty());
  CHECK(p.out().rfind("line 1\n", 0) == 0);
  CHECK(read_file(state).find("\"swthrottle_state\"") != std::string::npos);
}

TEST_CASE("fault: stdout on /dev/full (ENOSPC): exit 2, the write error said once, never a hang") {
  TempDir dir;
  const std::string rules = dir.write("nothing.toml", kNothing);
  for (const char* format : {"text", "json"}) {
    for (const char* threads : {"1", "2"}) {
      CAPTURE(format);
      CAPTURE(threads);
      const RunResult r = swthrottle::test::run_process(
          limited(Limits::stdout_on("/dev/full"),
                  binary_with({"--rule", rules, "--passthrough", "--format", format, "-j", threads})),
          numbered_lines(50'000));
      check_survived(r);
      CHECK(r.exit_status == 2);
      CHECK(r.err == "swthrottle: write error: No space left on device\n");
    }
  }
}

TEST_CASE("fault: --help, --version and --check on /dev/full: exit 2, the write error said") {
  TempDir dir;
  const std::string rules = dir.write("nothing.toml", kNothing);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--help"}, {"--version"}, {"--check", "--rule", rules}}) {
    CAPTURE(args.front());
    const RunResult r = swthrottle::test::run_process(limited(Limits::stdout_on("/dev/full"), binary_with(args)), "");
    check_survived(r);
    CHECK(r.exit_status == 2);
    CHECK(r.err == "swthrottle: standard output: No space left on device\n");
  }
}

TEST_CASE("fault: a consumer that stops reading: input slowed, memory bounded, then every line, once, in order") {
  TempDir dir;
  const std::string rules = dir.write("nothing.toml", kNothing);
  // 50 MB: more than the bound below, so a reader that buffered instead of
  // waiting would cross it. A sanitized build, whose bound is loose anyway
  // (below), reads a quarter of it: 50 MB took over a minute under TSan.
  const std::string lines = numbered_lines(swthrottle::test::kSanitized ? 1'000'000 : 4'000'000);
  const std::string input = dir.write("in.log", lines);
  const std::string fifo = dir.file("out.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Our end first, non-blocking, so that the child's open for writing
  // finds a reader; then nobody reads.
  const int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  REQUIRE(rd >= 0);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{rd};
  Process p = Process::spawn(limited(Limits::stdout_on(fifo), binary_with({"--rule", rules, "--passthrough", input})));

  // Blocked: the pipe is full (to within a record: a write of a record is
  // atomic, so one that does not fit waits whole).
  const int capacity = ::fcntl(rd, F_GETPIPE_SZ);
  REQUIRE(capacity > 0);
  REQUIRE(poll_until([&] {
    int queued = 0;
    return ::ioctl(rd, FIONREAD, &queued) == 0 && queued > capacity - 512;
  }));
  // For a second of being blocked: resident memory stays under the bound,
  // and the input is not read on behind the consumer's back.
  // A sanitized binary's resident memory is mostly the sanitizer's (shadow
  // memory, its allocator, its quarantine of freed blocks, which grows with
  // the program): a looser bound there (167 MiB seen under ASan with the rule
  // kinds of this release); the Release run checks 40 MiB, the real bound.
  constexpr long kBoundKb = (swthrottle::test::kSanitized ? 256 : 40) * 1024;
  long peak_kb = 0;
  long long offset = -1;
  const auto until = std::chrono::steady_clock::now() + 1s;
  while (std::chrono::steady_clock::now() < until) {
    peak_kb = std::max(peak_kb, p.peak_rss_kb());
    offset = std::max(offset, open_file_offset(p.pid(), input));
    std::this_thread::sleep_for(20ms);
  }
  MESSAGE("blocked consumer: peak RSS " << peak_kb << " KiB (bound " << kBoundKb << " KiB), input read to byte "
                                        << offset << " of " << lines.size());
  CHECK(peak_kb > 0);
  CHECK(peak_kb < kBoundKb);
  CHECK(offset < static_cast<long long>(lines.size()) / 4);
  CHECK(p.running());

  // The consumer resumes: everything comes, once, in order, up to the end
  // of the FIFO (the child exits and closes it).
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(rd, buf, sizeof buf);
    if (n > 0) {
      got.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) break;  // end of file: no writer left
    if (errno != EAGAIN) FAIL("read from the FIFO: " << std::strerror(errno));
    if (std::chrono::steady_clock::now() > deadline) FAIL("the output did not end within 60 s");
    pollfd pfd{rd, POLLIN, 0};
    (void)::poll(&pfd, 1, 100);
  }
  const RunResult r = p.wait();
  check_survived(r);
  CHECK(r.exit_status == 0);
  CHECK(got.size() == lines.size());
  CHECK(got == lines);
}

TEST_CASE("fault: too many open files (ulimit -n 16, 40 inputs): exit 2 before a line, the file and the limit said") {
  TempDir dir;
  const std::string rules = dir.write("nothing.toml", kNothing);
  std::vector<std::string> args{"--rule", rules, "--passthrough"};
  std::string all;
  for (int i = 1; i <= 40; ++i) {
    const std::string line = "file " + std::to_string(i) + "\n";
    args.push_back(dir.write("in" + std::to_string(i) + ".log", line));
    all += line;
  }
  const RunResult r = swthrottle::test::run_process(limited(Limits::files_open(16), binary_with(args)), "");
  check_survived(r);
  CHECK(r.exit_status == 2);
  CHECK(r.out.empty());  // nothing is decided from a part of the inputs
  CHECK(r.err.find(".log: Too many open files (40 inputs are held open at once; the open file limit is 16: raise "
                   "it with ulimit -n, or read fewer files per run)\n") != std::string::npos);

  // With room for them all: every line, once (one input after another: text
  // lines are untimed, read concurrently, so compared as sets of lines).
  const RunResult ok = swthrottle::test::run_process(limited(Limits::files_open(256), binary_with(args)), "");
  check_survived(ok);
  CHECK(ok.exit_status == 0);
  std::vector<std::string> got, want;
  for (std::size_t at = 0, nl; (nl = ok.out.find('\n', at)) != std::string::npos; at = nl + 1)
    got.push_back(ok.out.substr(at, nl - at));
  for (std::size_t at = 0, nl; (nl = all.find('\n', at)) != std::string::npos; at = nl + 1)
    want.push_back(all.substr(at, nl - at));
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  CHECK(got == want);
}

TEST_CASE("fault: SIGTERM while the consumer stopped reading: the output given up, the state saved, exit 0") {
  TempDir dir;
  const std::string rules = dir.write("nothing.toml", kNothing);
  const std::string lines = numbered_lines(1'000'000);
  const std::string input = dir.write("in.log", lines);
  const std::string state = dir.file("state.json");
  const std::string fifo = dir.file("out.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  REQUIRE(rd >= 0);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{rd};
  Process p = Process::spawn(
      limited(Limits::stdout_on(fifo), binary_with({"--rule", rules, "--passthrough", "--state", state, input})));
  const int capacity = ::fcntl(rd, F_GETPIPE_SZ);
  REQUIRE(poll_until([&] {
    int queued = 0;
    return ::ioctl(rd, FIONREAD, &queued) == 0 && queued > capacity - 512;
  }));
  // Blocked in write(2), holding what a stop needs: before the fix, the run
  // never ended until the consumer read again.
  REQUIRE(p.send_signal(SIGTERM));
  const RunResult r = p.wait(10s);
  check_survived(r);
  CHECK(r.exit_status == 0);
  CHECK(r.err ==
        "swthrottle: SIGTERM: standard output took nothing for 0.5s; the records not written by now are "
        "dropped\n");
  CHECK(read_file(state).find("\"swthrottle_state\"") != std::string::npos);
  // What the consumer finds is the input's beginning, in order, nothing twice.
  std::string got;
  char buf[1 << 16];
  for (ssize_t n; (n = ::read(rd, buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  CHECK(got.size() >= static_cast<std::size_t>(capacity) - 512);
  CHECK(got == lines.substr(0, got.size()));
}
