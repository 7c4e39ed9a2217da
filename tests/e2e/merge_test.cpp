// End-to-end: several inputs that are not followed, under time = "log", are
// merged by time (DESIGN.md §3; pipeline/time_merge.h) before they are decided.
// The real binary on real files.
//
// The merge rule, as the model below applies it: a line's key is the newest
// stamp its input has shown up to and including it (none yet: first); lines
// go in (key, input order) order. So the records of `swthrottle a b` are
// those of one run over the file that model writes, on every run.
#include <doctest/doctest.h>

#include <signal.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
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

constexpr int64_t kNone = INT64_MIN;

// A line of a generated input and the stamp written in it (kNone: none).
struct Line {
  std::string text;
  int64_t stamp;
};
using Input = std::vector<Line>;

// 2026-11-21T10:00:00.000Z plus `ms`.
std::string rfc3339(int64_t ms) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "2026-11-21T%02d:%02d:%02d.%03dZ", static_cast<int>(10 + ms / 3'600'000),
                static_cast<int>(ms / 60'000 % 60), static_cast<int>(ms / 1000 % 60), static_cast<int>(ms % 1000));
  return buf;
}

// An input of `n` lines whose stamps advance by 0-600 ms; some lines carry
// no stamp (stack-trace lines), some are late by 3 s, and a third of the
// lines are failures from a few addresses. Deterministic for a seed.
Input generate(const std::string& name, int n, unsigned seed, int64_t start_ms) {
  std::mt19937 rng(seed);
  Input in;
  int64_t t = start_ms;
  for (int i = 0; i < n; ++i) {
    const unsigned r = rng() % 100;
    if (r < 8 && !in.empty()) {
      in.push_back({"\tat com.example." + name + ".Frame" + std::to_string(i), kNone});
      continue;
    }
    t += static_cast<int64_t>(rng() % 600);
    const int64_t s = r < 12 ? t - 3000 : t;  // a late line, written by a slow thread
    const std::string what = r < 45 ? "FAIL from 10.0.0." + std::to_string(rng() % 4) : "ok " + name;
    in.push_back({rfc3339(s) + " " + what + " #" + std::to_string(i), s});
  }
  return in;
}

std::string text_of(const Input& in) {
  std::string s;
  for (const Line& l : in) s += l.text + "\n";
  return s;
}

// The model of the merge: keys as the file comment says, a stable sort by
// (key, input order).
std::string merged(const std::vector<Input>& inputs) {
  struct Keyed {
    int64_t key;
    std::size_t input;
    std::size_t pos;
  };
  std::vector<Keyed> all;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    int64_t newest = kNone;
    for (std::size_t p = 0; p < inputs[i].size(); ++p) {
      newest = std::max(newest, inputs[i][p].stamp);
      all.push_back({newest, i, p});
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Keyed& a, const Keyed& b) {
    return a.key < b.key || (a.key == b.key && a.input < b.input);
  });
  std::string s;
  for (const Keyed& k : all) s += inputs[k.input][k.pos].text + "\n";
  return s;
}

// Alerts per address with resolves, and a throttle of every failure: both
// depend on the order lines are decided in, and late lines are common when
// one input runs ahead of another.
const std::string kRules = R"toml(
[settings]
time = "log"
timezone = "UTC"

[[rule]]
name = "burst"
kind = "alert"
threshold = "4 per 10s"
key = "{ip}"
resolve = true
cooldown = "5s"
  [[rule.event]]
  name = "fail"
  match = 'FAIL from (?P<ip>\S+)'

[[rule]]
name = "flood"
kind = "throttle"
threshold = "3 per 5s"
  [[rule.event]]
  name = "fail"
  match = 'FAIL'
)toml";

// Every line decided is written, so the output shows the decided order.
const std::string kEveryLine = R"toml(
[settings]
time = "log"
timezone = "UTC"
[[rule]]
name = "all"
kind = "throttle"
threshold = "1000 per 1m"
  [[rule.event]]
  name = "any"
  match = '.'
)toml";

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("merge: two interleaved files give the same records on every run, those of the files merged by time") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::vector<Input> inputs = {generate("a", 1500, 1, 0), generate("b", 1500, 2, 0)};
  const std::string a = dir.write("a.log", text_of(inputs[0]));
  const std::string b = dir.write("b.log", text_of(inputs[1]));
  const RunResult want = swt({"-r", rules, "--format", "json", dir.write("merged.log", merged(inputs))});
  REQUIRE(want.exit_status == 0);
  // The scenario is worth its name: alerts, resolves and summaries, and an
  // order that matters (one file after the other gives other records).
  CHECK(count(want.out, R"("type":"alert")") > 5);
  CHECK(count(want.out, R"("type":"resolved")") > 5);
  CHECK(count(want.out, R"("type":"summary")") > 5);
  CHECK(swt({"-r", rules, "--format", "json", dir.write("cat.log", text_of(inputs[0]) + text_of(inputs[1]))}).out !=
        want.out);
  for (int run = 0; run < 10; ++run) {
    CAPTURE(run);
    const RunResult r = swt({"-r", rules, "--format", "json", a, b});
    CHECK(r.exit_status == 0);
    CHECK(r.err == "");
    CHECK(r.out == want.out);
  }
  // -j is shared among the inputs: the same records whatever it is.
  for (const std::string j : {"1", "2", "5"}) {
    CAPTURE(j);
    CHECK(swt({"-r", rules, "--format", "json", "-j", j, a, b}).out == want.out);
  }
  // Standard input is merged like a file.
  CHECK(swt({"-r", rules, "--format", "json", a, "-"}, text_of(inputs[1])).out == want.out);
}

TEST_CASE("merge: equal stamps go in the order the inputs are given") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kEveryLine);
  const std::string a = dir.write("a.log",
                                  "2026-11-21T10:00:00Z a1\n"
                                  "2026-11-21T10:00:01Z a2\n");
  const std::string b = dir.write("b.log",
                                  "2026-11-21T10:00:00Z b1\n"
                                  "2026-11-21T10:00:01Z b2\n");
  CHECK(swt({"-r", rules, a, b}).out ==
        "2026-11-21T10:00:00Z a1\n"
        "2026-11-21T10:00:00Z b1\n"
        "2026-11-21T10:00:01Z a2\n"
        "2026-11-21T10:00:01Z b2\n");
  CHECK(swt({"-r", rules, b, a}).out ==
        "2026-11-21T10:00:00Z b1\n"
        "2026-11-21T10:00:00Z a1\n"
        "2026-11-21T10:00:01Z b2\n"
        "2026-11-21T10:00:01Z a2\n");
}

TEST_CASE("merge: a line without a stamp, or a late one, stays behind the line before it in its input") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kEveryLine);
  // a: a2 has no stamp; a4 is late (10:00:02 after 10:00:05) and a5 follows it.
  const std::string a = dir.write("a.log",
                                  "2026-11-21T10:00:01Z a1\n"
                                  "\tat a2\n"
                                  "2026-11-21T10:00:05Z a3\n"
                                  "2026-11-21T10:00:02Z a4\n"
                                  "\tat a5\n");
  // b: b0 comes before any stamp of b, so it goes first of all.
  const std::string b = dir.write("b.log",
                                  "b0 starting\n"
                                  "2026-11-21T10:00:02Z b1\n"
                                  "2026-11-21T10:00:03Z b2\n"
                                  "2026-11-21T10:00:06Z b3\n");
  const RunResult r = swt({"-r", rules, "--stats", a, b});
  CHECK(r.exit_status == 0);
  CHECK(r.out ==
        "b0 starting\n"
        "2026-11-21T10:00:01Z a1\n"
        "\tat a2\n"
        "2026-11-21T10:00:02Z b1\n"
        "2026-11-21T10:00:03Z b2\n"
        "2026-11-21T10:00:05Z a3\n"
        "2026-11-21T10:00:02Z a4\n"
        "\tat a5\n"
        "2026-11-21T10:00:06Z b3\n");
  // --stats counts every line of both: b0 untimed, a2 and a5 took a time.
  CHECK(r.err.find("swthrottle: stats: lines 9 matched 9 written 9 truncated 0 untimed 1") != std::string::npos);
}

TEST_CASE("merge: a rotation set given oldest first, a .gz among it, is one history") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const Input history = generate("app", 3000, 7, 0);
  // Cut where a stamped line begins (logrotate cuts between lines; a stack
  // trace cut in two would start the newer file without a time).
  auto cut_at = [&history](std::size_t from) {
    while (history[from].stamp == kNone) ++from;
    return from;
  };
  const std::size_t c1 = cut_at(1000), c2 = cut_at(2000);
  const auto part = [&history](std::size_t from, std::size_t to) {
    return text_of(
        Input(history.begin() + static_cast<std::ptrdiff_t>(from), history.begin() + static_cast<std::ptrdiff_t>(to)));
  };
  const std::string oldest = dir.write("app.log.2.gz", swthrottle::test::gzip_bytes(part(0, c1)));
  const std::string older = dir.write("app.log.1", part(c1, c2));
  const std::string current = dir.write("app.log", part(c2, history.size()));
  const RunResult want = swt({"-r", rules, "--format", "json", dir.write("history.log", text_of(history))});
  REQUIRE(want.exit_status == 0);
  CHECK(count(want.out, R"("type":"alert")") > 5);
  const RunResult r = swt({"-r", rules, "--format", "json", oldest, older, current});
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  CHECK(r.out == want.out);
}

TEST_CASE("merge: three inputs, and an empty one among them") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::vector<Input> inputs = {generate("a", 800, 11, 0), generate("b", 800, 12, 20'000),
                                     generate("c", 800, 13, 500)};
  std::vector<std::string> files;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    files.push_back(dir.write("in" + std::to_string(i) + ".log", text_of(inputs[i])));
  const std::string empty = dir.write("empty.log", "");

  const RunResult want3 = swt({"-r", rules, "--format", "json", dir.write("m3.log", merged(inputs))});
  REQUIRE(want3.exit_status == 0);
  const RunResult r3 = swt({"-r", rules, "--format", "json", files[0], files[1], files[2]});
  CHECK(r3.exit_status == 0);
  CHECK(r3.out == want3.out);

  const RunResult want2 = swt({"-r", rules, "--format", "json", dir.write("m2.log", merged({inputs[0], inputs[2]}))});
  for (const auto& args :
       {std::vector<std::string>{files[0], empty, files[2]}, std::vector<std::string>{empty, files[0], files[2]}}) {
    std::vector<std::string> argv = {"-r", rules, "--format", "json"};
    argv.insert(argv.end(), args.begin(), args.end());
    const RunResult r = swt(argv);
    CHECK(r.exit_status == 0);
    CHECK(r.out == want2.out);
  }
}

TEST_CASE("merge: an unreadable input ends with exit 2 and its message, the others are decided to their end") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kEveryLine);
  const std::string a = dir.write("a.log",
                                  "2026-11-21T10:00:00Z a1\n"
                                  "2026-11-21T10:00:02Z a2\n");
  // A truncated gzip member: its lines decompressed so far, then a read error.
  const std::string gz = swthrottle::test::gzip_bytes("2026-11-21T10:00:01Z b1\n2026-11-21T10:00:03Z b2\n");
  const std::string b = dir.write("b.log.gz", gz.substr(0, gz.size() - 12));
  const RunResult r = swt({"-r", rules, a, b});
  CHECK(r.exit_status == 2);
  CHECK(r.err.find(b + ": ") != std::string::npos);
  // a is decided to its end.
  CHECK(r.out.find("2026-11-21T10:00:00Z a1\n") != std::string::npos);
  CHECK(r.out.find("2026-11-21T10:00:02Z a2\n") != std::string::npos);
}

TEST_CASE("merge: a pipe among the inputs holds the others back, SIGTERM ends the wait, exit 0") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kEveryLine);
  const std::string a = dir.write("a.log",
                                  "2026-11-21T10:00:01Z x1\n"
                                  "2026-11-21T10:00:02Z x2\n"
                                  "2026-11-21T10:00:09Z x3\n");
  Process p = Process::spawn({SWTHROTTLE_BINARY, "-r", rules, a, "-"});
  // Until standard input gives a line, nothing of a can be placed.
  REQUIRE(p.write_stdin("2026-11-21T10:00:05Z s1\n"));
  // x1, x2 come before s1; x3 waits for standard input's next line.
  const std::string before = "2026-11-21T10:00:01Z x1\n2026-11-21T10:00:02Z x2\n2026-11-21T10:00:05Z s1\n";
  CHECK(p.read_stdout_until([&](const std::string& out) { return out == before; }));
  REQUIRE(p.send_signal(SIGTERM));
  // Standard input stays open (wait() would close it): the run ends on the
  // signal alone, not at the end of its input.
  CHECK(p.read_to_eof());
  const RunResult r = p.wait();
  CHECK(r.exit_status == 0);
  CHECK(r.out == before);
}

TEST_CASE("merge: --explain names each line's input, in the merged order") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"toml(
[settings]
time = "log"
timezone = "UTC"
[[rule]]
name = "burst"
kind = "alert"
threshold = "2 per 10s"
key = "{ip}"
  [[rule.event]]
  name = "fail"
  match = 'FAIL from (?P<ip>\S+)'
)toml");
  const std::string a = dir.write("a.log", "2026-11-21T10:00:01Z FAIL from 1.2.3.4\n2026-11-21T10:00:03Z ok\n");
  const std::string b = dir.write("b.log", "2026-11-21T10:00:02Z FAIL from 1.2.3.4\n");
  const RunResult r = swt({"-r", rules, "--explain", a, b});
  CHECK(r.exit_status == 0);
  CHECK(r.out ==
        "explain: " + a +
            ":1: 2026-11-21T10:00:01Z FAIL from 1.2.3.4\n"
            "  time: 2026-11-21T10:00:01.000Z\n"
            "  rule burst: events fail; ip=1.2.3.4; key \"1.2.3.4\"; counts fail=1 -> counted; condition false\n"
            "explain: " +
            b +
            ":1: 2026-11-21T10:00:02Z FAIL from 1.2.3.4\n"
            "  time: 2026-11-21T10:00:02.000Z\n"
            "  rule burst: events fail; ip=1.2.3.4; key \"1.2.3.4\"; counts fail=2 -> alert\n"
            "swthrottle: alert burst key=1.2.3.4 count=2 threshold=2 window=10s suppressed=0 "
            "time=2026-11-21T10:00:02.000Z: 2026-11-21T10:00:02Z FAIL from 1.2.3.4\n");
}

TEST_CASE("merge: with --state, consecutive runs over merged slices write the records of the merged files") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::vector<Input> inputs = {generate("a", 1200, 21, 0), generate("b", 1200, 22, 0)};
  // Slices cut at 10:02:00 (a stamp-less line stays with the slice of the
  // line before it).
  std::vector<Input> first(2), second(2);
  for (std::size_t i = 0; i < 2; ++i) {
    bool later = false;
    for (const Line& l : inputs[i]) {
      if (l.stamp != kNone && l.stamp >= 120'000) later = true;
      (later ? second : first)[i].push_back(l);
    }
  }
  const std::string state = dir.file("state.json");
  const std::string merged_state = dir.file("merged.json");
  std::string out, want;
  for (const auto* slice : {&first, &second}) {
    const std::string n = slice == &first ? "1" : "2";
    const RunResult r =
        swt({"-r", rules, "--format", "json", "--state", state, dir.write("a" + n + ".log", text_of((*slice)[0])),
             dir.write("b" + n + ".log", text_of((*slice)[1]))});
    CHECK(r.exit_status == 0);
    CHECK(r.err == "");
    out += r.out;
    const RunResult m =
        swt({"-r", rules, "--format", "json", "--state", merged_state, dir.write("m" + n + ".log", merged(*slice))});
    REQUIRE(m.exit_status == 0);
    want += m.out;
  }
  CHECK(count(want, R"("type":"alert")") > 3);
  CHECK(out == want);
}

TEST_CASE("merge: lines matched before a SIGHUP and decided after it are matched again with the new rules") {
  TempDir dir;
  const auto rules_matching = [](const std::string& pattern) {
    return "[settings]\ntime = \"log\"\n[[rule]]\nname = \"all\"\nkind = \"throttle\"\nthreshold = \"1000 per 1m\"\n"
           "  [[rule.event]]\n  name = \"any\"\n  match = '" +
           pattern + "'\n";
  };
  const std::string rules = dir.write("rules.toml", rules_matching("."));
  // a is read (and matched) whole at once; x3 waits for standard input.
  const std::string a = dir.write("a.log",
                                  "2026-11-21T10:00:01Z x1 keep\n"
                                  "2026-11-21T10:00:02Z x2\n"
                                  "2026-11-21T10:00:09Z x3\n");
  Process p = Process::spawn({SWTHROTTLE_BINARY, "-r", rules, a, "-"});
  REQUIRE(p.write_stdin("2026-11-21T10:00:05Z s1\n"));
  const std::string before = "2026-11-21T10:00:01Z x1 keep\n2026-11-21T10:00:02Z x2\n2026-11-21T10:00:05Z s1\n";
  CHECK(p.read_stdout_until([&](const std::string& out) { return out == before; }));
  dir.write("rules.toml", rules_matching("keep"));
  REQUIRE(p.send_signal(SIGHUP));
  CHECK(p.read_stderr_until(
      [](const std::string& err) { return err.find("SIGHUP: reloaded 1 rules") != std::string::npos; }));
  // x3 was matched with the old rules, which pass it; decided now, it is
  // matched again with the new ones, which do not.
  REQUIRE(p.write_stdin("2026-11-21T10:00:10Z s2 keep\n"));
  const RunResult r = p.wait();
  CHECK(r.exit_status == 0);
  CHECK(r.out == before + "2026-11-21T10:00:10Z s2 keep\n");
}
