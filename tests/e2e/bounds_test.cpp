// Bounded memory by construction (issue 18, part 4; man page: LIMITS): each
// queue, buffer and map of the real binary is driven to its bound, and the
// test checks what the man page says happens there and that memory did not
// grow past it: the child's peak RSS (VmHWM, read while it still runs)
// against a run of the same program on a small input, or a counter.
//
// Each memory check comes with a margin far below what holding the input
// would take, and the input is several times the margin, so an unbounded
// buffer fails the check whatever the allocator does.
//
// Under AddressSanitizer or ThreadSanitizer (the binary is built as this
// test is), the RSS is mostly the sanitizer's (shadow memory, ASan's
// quarantine of freed blocks): the memory checks are made in the Release
// run only, and the inputs are smaller so that the slower binary is done in
// time; what happens at each bound is checked in every build.
#include <doctest/doctest.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "support/http_receiver.h"
#include "support/process.h"
#include "support/sanitized.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::count_lines;
using swthrottle::test::HttpReceiver;
using swthrottle::test::Process;
using swthrottle::test::Reply;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

const std::string kBinary = SWTHROTTLE_BINARY;
constexpr long kMiB = 1024;  // in KiB, as peak_rss_kb() counts
using swthrottle::test::kSanitized;
// Input sizes: what a memory check needs, or what a sanitized binary reads in time.
constexpr std::size_t kLongLine = kSanitized ? 8u << 20 : 64u << 20;
constexpr int kKeys = kSanitized ? 20'000 : 200'000;
constexpr std::size_t kStallInput = kSanitized ? 24u << 20 : 48u << 20;
constexpr std::size_t kEventInput = kSanitized ? 8u << 20 : 48u << 20;

// The memory check (see the top): peak `got_kb` below `base_kb` + `margin_kb`.
void check_peak(long base_kb, long got_kb, long margin_kb) {
  if (kSanitized) {
    MESSAGE("sanitized build: peak RSS ", got_kb, " KiB (base ", base_kb, " KiB) not checked");
    return;
  }
  CAPTURE(base_kb);
  CAPTURE(got_kb);
  REQUIRE(base_kb > 0);  // /proc is there
  CHECK(got_kb < base_kb + margin_kb);
}

// The figure NAME of the totals line of --stats ("lines N matched N ..."),
// or of rule RULE's line; -1 when absent.
long stat_of(const std::string& err, const std::string& name, const std::string& rule = "") {
  const std::string prefix = rule.empty() ? "swthrottle: stats: lines " : "swthrottle: stats: rule " + rule + ": ";
  const std::size_t at = err.rfind(prefix);
  if (at == std::string::npos) return -1;
  const std::string line = err.substr(at, err.find('\n', at) - at);
  const std::string word = " " + name + " ";
  std::size_t p = line.find(word);
  if (p == std::string::npos && rule.empty() && name == "lines") p = std::string("swthrottle: stats:").size();
  if (p == std::string::npos) return -1;
  return std::stol(line.substr(p + word.size()));
}

// Runs the binary with `args` on `input` (standard input), reads the peak RSS
// once standard output ends in `last` (the program then waits for more
// input), and finishes the run.
RunResult run_with_peak(const std::vector<std::string>& args, const std::string& input, const std::string& last,
                        long& peak_kb) {
  std::vector<std::string> argv{kBinary};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p = Process::spawn(argv);
  CHECK(p.write_stdin(input, std::chrono::seconds(60)));
  CHECK(p.read_stdout_until(
      [&](const std::string& out) {
        return out.size() >= last.size() && out.compare(out.size() - last.size(), last.size(), last) == 0;
      },
      std::chrono::seconds(60)));
  peak_kb = p.peak_rss_kb();
  return p.wait(std::chrono::seconds(60));
}

}  // namespace

TEST_CASE("bounds: --max-line on a followed file: a line of 64 MiB is cut, counted, and memory stays bounded") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"(
[[rule]]
name      = "t"
kind      = "throttle"
threshold = "100 per 1m"
  [[rule.event]]
  name  = "e"
  match = '^START'
)");
  // The followed path (input::Follower), not standard input: the first line
  // has 64 MiB after START; at --max-line 64K the follower keeps its first
  // 64 KiB and skips the rest.
  auto run = [&](const std::string& name, std::size_t filler, long& peak_kb) {
    const std::string log = dir.file(name);
    {
      std::ofstream f(log, std::ios::binary);
      f << "START " << std::string(filler, 'a') << "\nSTART next\n";
    }
    Process p = Process::spawn({kBinary, "-r", rules, "--follow", "--from-start", "--max-line", "64K", "--stats", log});
    CHECK(p.read_stdout_until([](const std::string& out) { return out.find("START next\n") != std::string::npos; },
                              std::chrono::seconds(60)));
    peak_kb = p.peak_rss_kb();
    p.send_signal(SIGTERM);
    return p.wait();
  };
  long small_kb = 0, long_kb = 0;
  const RunResult small = run("small.log", 10, small_kb);
  const RunResult r = run("long.log", kLongLine, long_kb);
  CHECK(small.exit_status == 0);
  CHECK(r.exit_status == 0);
  CHECK(stat_of(small.err, "truncated") == 0);
  CHECK(stat_of(r.err, "truncated") == 1);
  CHECK(stat_of(r.err, "lines") == 2);
  // The cut line is what is written: START and the first 64 KiB - 6 bytes of filler.
  CHECK(r.out == "START " + std::string((64u << 10) - 6, 'a') + "\nSTART next\n");
  MESSAGE("peak RSS: ", small_kb, " KiB (a short line), ", long_kb, " KiB (a line of ", kLongLine >> 20, " MiB)");
  check_peak(small_kb, long_kb, 16 * kMiB);
}

TEST_CASE(
    "bounds: max_keys: 200000 distinct keys (20000 sanitized) keep 1000, evict the rest, and memory does not grow with "
    "them") {
  TempDir dir;
  auto rules = [&](long max_keys) {
    return dir.write("rules" + std::to_string(max_keys) + ".toml", R"(
[[rule]]
name      = "k"
kind      = "alert"
threshold = "1000 per 1m"
key       = "{k}"
max_keys  = )" + std::to_string(max_keys) + R"(
  [[rule.event]]
  name  = "e"
  match = '^key=(?P<k>\d+)'

[[rule]]
name      = "end"
kind      = "throttle"
threshold = "1 per 1m"
  [[rule.event]]
  name  = "end"
  match = '^END'
)");
  };
  // The same bytes twice: 200000 distinct keys, then 200 rounds of the same 1000.
  std::string distinct, repeated;
  char buf[32];
  for (int i = 0; i < kKeys; ++i) {
    std::snprintf(buf, sizeof buf, "key=%06d\n", i);
    distinct += buf;
    std::snprintf(buf, sizeof buf, "key=%06d\n", i % 1000);
    repeated += buf;
  }
  distinct += "END\n";
  repeated += "END\n";
  long few_kb = 0, many_kb = 0, unbounded_kb = 0;
  const RunResult few = run_with_peak({"-r", rules(1000), "--stats"}, repeated, "END\n", few_kb);
  const RunResult many = run_with_peak({"-r", rules(1000), "--stats"}, distinct, "END\n", many_kb);
  // The same keys with a bound above them: what the bound saves, so that the
  // memory check below is known to see the difference.
  const RunResult unbounded = run_with_peak({"-r", rules(kKeys), "--stats"}, distinct, "END\n", unbounded_kb);
  CHECK(few.exit_status == 0);
  CHECK(many.exit_status == 0);
  CHECK(unbounded.exit_status == 0);
  CHECK(stat_of(few.err, "keys", "k") == 1000);
  CHECK(stat_of(few.err, "evicted", "k") == 0);
  CHECK(stat_of(many.err, "keys", "k") == 1000);
  CHECK(stat_of(many.err, "evicted", "k") == kKeys - 1000);
  CHECK(stat_of(unbounded.err, "keys", "k") == kKeys);
  MESSAGE("peak RSS: ", few_kb, " KiB (1000 keys), ", many_kb, " KiB (", kKeys, " keys, max_keys 1000), ", unbounded_kb,
          " KiB (max_keys ", kKeys, ")");
  check_peak(few_kb, many_kb, 8 * kMiB);
  // What the bound saves (about 220 bytes a key): the check above can see it.
  if (!kSanitized) CHECK(unbounded_kb > few_kb + 24 * kMiB);
}

TEST_CASE(
    "bounds: -j 2 with a consumer that stops reading: the pipeline stops reading input, memory stays bounded, "
    "nothing is dropped") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"(
[[rule]]
name      = "never"
kind      = "throttle"
threshold = "1 per 1m"
  [[rule.event]]
  name  = "e"
  match = '^NEVER'
)");
  // 48 MiB of 64-byte lines (24 sanitized); --passthrough writes each. Nobody reads the
  // output until the input stalls: the decider blocks on its write, the
  // batches in flight (2 x 2 + 2, each at most 2048 lines and about 1 MiB)
  // fill, the reader stops, and the input pipe fills.
  constexpr std::size_t kTotal = kStallInput;
  std::string chunk;
  for (int i = 0; chunk.size() < (1u << 20); ++i) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "line %08d %049d\n", i, 0);
    chunk += buf;
  }
  REQUIRE(chunk.size() % 64 == 0);
  const std::vector<std::string> args{kBinary, "-r", rules, "--passthrough", "-j", "2", "--max-line", "4K", "-"};

  long small_kb = 0;
  {
    Process small = Process::spawn(args);
    CHECK(small.write_stdin(chunk.substr(0, 64)));
    CHECK(small.read_stdout_lines(1));
    small_kb = small.peak_rss_kb();
    small.close_stdin();
    CHECK(small.wait().exit_status == 0);
  }

  Process p = Process::spawn(args);
  std::size_t written = 0;  // bytes the child accepted
  // Writes until the child has taken nothing for 2 s. A child that kept up
  // (an unbounded buffer) takes all of it; one that only paused under load
  // stops the loop early, which can only make the bound easier to meet.
  auto last_progress = std::chrono::steady_clock::now();
  const auto deadline = last_progress + std::chrono::seconds(60);
  while (written < kTotal && std::chrono::steady_clock::now() < deadline) {
    const std::size_t at = written % chunk.size();
    const ssize_t n = ::write(p.stdin_fd(), chunk.data() + at, chunk.size() - at);
    if (n > 0) {
      written += static_cast<std::size_t>(n);
      last_progress = std::chrono::steady_clock::now();
      continue;
    }
    REQUIRE(errno == EAGAIN);
    if (std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(2)) break;
    pollfd pfd{p.stdin_fd(), POLLOUT, 0};
    ::poll(&pfd, 1, 100);  // waits for room, or paces the check
  }
  const long stalled_kb = p.peak_rss_kb();
  CAPTURE(written);
  CAPTURE(small_kb);
  CAPTURE(stalled_kb);
  // Taken in at most: 6 batches of about 1 MiB (+ a cut line of 4 KiB each),
  // the reader's buffer (256 KiB), and the pipes (64 KiB each by default).
  MESSAGE("input taken before the stall: ", written, " bytes; peak RSS: ", small_kb, " KiB (one line), ", stalled_kb,
          " KiB (stalled)");
  CHECK(written < (12u << 20));
  check_peak(small_kb, stalled_kb, 24 * kMiB);

  // The consumer reads again: every line comes out, in order.
  if (written < kTotal && written % chunk.size() != 0) {
    CHECK(p.write_stdin(std::string_view(chunk).substr(written % chunk.size()), std::chrono::seconds(60)));
    written += chunk.size() - written % chunk.size();
  }
  while (written < kTotal) {
    CHECK(p.write_stdin(chunk, std::chrono::seconds(60)));
    written += chunk.size();
  }
  const RunResult r = p.wait(std::chrono::seconds(60));
  CHECK(r.exit_status == 0);
  CHECK(r.out.size() == kTotal);
  CHECK(count_lines(r.out) == kTotal / 64);
  bool same = true;
  for (std::size_t at = 0; at + chunk.size() <= r.out.size() && same; at += chunk.size())
    same = r.out.compare(at, chunk.size(), chunk) == 0;
  CHECK(same);
}

TEST_CASE(
    "bounds: a multi-line event that never ends is cut at max_bytes, nothing is dropped, memory stays "
    "bounded") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"(
[settings]
multiline = { start = '^START', max_lines = 1000000, max_bytes = 1048576 }

[[rule]]
name      = "never"
kind      = "throttle"
threshold = "1 per 1m"
  [[rule.event]]
  name  = "e"
  match = '^NEVER'
)");
  // One START, then 48 MiB (8 sanitized) of lines that continue it: the pending event
  // would hold them all without the cap.
  std::string log = "START\n";
  std::vector<std::size_t> lengths{5};
  for (int i = 0; log.size() < kEventInput; ++i) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "  cont %08d %048d\n", i, 0);
    log += buf;
    lengths.push_back(std::string_view(buf).size() - 1);
  }
  log += "START last\n";
  lengths.push_back(10);
  // The cuts, by the rule of the man page: a line that would take the event
  // past max_bytes (its lines and the "\n" between them) starts a new one.
  long cuts = 0;
  std::size_t open = lengths[0];
  for (std::size_t i = 1; i + 1 < lengths.size(); ++i) {
    if (open + 1 + lengths[i] > 1048576) {
      ++cuts;
      open = lengths[i];
    } else {
      open += 1 + lengths[i];
    }
  }
  REQUIRE(cuts >= static_cast<long>(kEventInput >> 20) - 1);

  SUBCASE("standard input, -j 2 (batches)") {
    long small_kb = 0, big_kb = 0;
    const std::vector<std::string> args{"-r", rules, "--passthrough", "--stats", "-j", "2", "-"};
    const RunResult small = run_with_peak(args, "START\n  cont\nSTART last\n", "START last\n", small_kb);
    const RunResult r = run_with_peak(args, log, "START last\n", big_kb);
    CHECK(small.exit_status == 0);
    CHECK(r.exit_status == 0);
    CHECK(stat_of(r.err, "cut") == cuts);
    CHECK(r.out.size() == log.size());
    CHECK(r.out == log);
    MESSAGE("peak RSS: ", small_kb, " KiB (a short event), ", big_kb, " KiB (", kEventInput >> 20,
            " MiB of one event)");
    check_peak(small_kb, big_kb, 24 * kMiB);
  }
  SUBCASE("a followed file (line by line)") {
    auto run = [&](const std::string& name, const std::string& text, long& peak_kb) {
      const std::string path = dir.write(name, text);
      Process p = Process::spawn({kBinary, "-r", rules, "--passthrough", "--stats", "--follow", "--from-start", path});
      CHECK(p.read_stdout_until([&](const std::string& out) { return out.size() >= text.size(); },
                                std::chrono::seconds(60)));
      peak_kb = p.peak_rss_kb();
      p.send_signal(SIGTERM);
      return p.wait();
    };
    long small_kb = 0, big_kb = 0;
    const RunResult small = run("small.log", "START\n  cont\nSTART last\n", small_kb);
    const RunResult r = run("big.log", log, big_kb);
    CHECK(small.exit_status == 0);
    CHECK(r.exit_status == 0);
    CHECK(stat_of(r.err, "cut") == cuts);
    CHECK(r.out == log);
    MESSAGE("peak RSS: ", small_kb, " KiB (a short event), ", big_kb, " KiB (", kEventInput >> 20,
            " MiB of one event)");
    check_peak(small_kb, big_kb, 24 * kMiB);
  }
}

TEST_CASE(
    "bounds: the outbox holds at most outbox_max records, the input waits for room, and every record is "
    "delivered once") {
  // A receiver that answers each POST after 150 ms: the decider makes 20
  // alerts at once, far faster than they are delivered, so the outbox
  // (outbox_max = 5, outbox_full = "block") fills and the decider waits.
  HttpReceiver hook;
  hook.otherwise(Reply(200, "", "", std::chrono::milliseconds(150)));
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"(
[settings]
time     = "log"
timezone = "UTC"

[delivery]
outbox_max  = 5
outbox_full = "block"
drain       = "60s"

[[rule]]
name      = "per-user"
kind      = "alert"
threshold = "1 per 1m"
key       = "{user}"
  [[rule.event]]
  name  = "e"
  match = 'failed user=(?P<user>\w+)'
)");
  std::string log;
  for (int u = 0; u < 20; ++u)
    log += "2026-11-20T10:00:" + std::to_string(10 + u) + "Z failed user=u" + std::to_string(u) + "\n";
  const std::string state = dir.file("state.json");
  Process p = Process::spawn({kBinary, "-r", rules, "--webhook", hook.url("/hook"), "--state", state, "-"});
  CHECK(p.write_stdin(log));
  p.close_stdin();
  // The records pending in the journal: adds not yet done (whole lines only).
  long most = 0;
  auto sample = [&] {
    std::ifstream f(state + ".outbox");
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    text.erase(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
    long pending = 0;
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t nl = text.find('\n', at);
      if (text.compare(at, 7, "{\"add\":") == 0) ++pending;
      if (text.compare(at, 8, "{\"done\":") == 0) --pending;
      at = nl + 1;
    }
    most = std::max(most, pending);
  };
  CHECK(swthrottle::test::poll_until(
      [&] {
        sample();
        return hook.count() >= 20;
      },
      std::chrono::seconds(60)));
  const RunResult r = p.wait(std::chrono::seconds(60));
  CHECK(r.exit_status == 0);
  CHECK(count_lines(r.out) == 20);  // the alert records, on stdout as well
  CHECK(most == 5);                 // the bound was reached, never passed
  std::set<std::string> ids;
  for (const auto& req : hook.requests()) ids.insert(req.header("Idempotency-Key").value_or(""));
  CHECK(ids.size() == 20);
  CHECK(hook.count() == 20);
}
