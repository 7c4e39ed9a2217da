// First contact (issue 32, item 8): what a new user met in the first
// minutes, each against the real binary. (The man page's glued words are
// tests/e2e/man_test.cpp's.)
#include <doctest/doctest.h>

#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "support/json.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

RunResult swt(const std::vector<std::string>& args, const std::string& input = "") {
  return swthrottle::test::run_swthrottle(args, input);
}

// Log time, UTC: one line a second from 10:00:00, "k=KEY".
std::string lines_for(const std::vector<std::string>& keys) {
  std::string out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    char stamp[64];
    std::snprintf(stamp, sizeof stamp, "2026-11-21T10:%02zu:%02zuZ", i / 60, i % 60);
    out += std::string(stamp) + " k=" + keys[i] + "\n";
  }
  return out;
}

// printf into a string.
std::string printed(const char* format, std::size_t n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, n);
  return buf;
}

// Each line of `out` as JSON.
std::vector<nlohmann::json> json_lines(const std::string& out) {
  std::vector<nlohmann::json> v;
  std::size_t at = 0;
  while (at < out.size()) {
    const std::size_t nl = out.find('\n', at);
    const auto j = swthrottle::test::parse_json(std::string_view(out).substr(at, nl - at));
    REQUIRE(j.has_value());
    v.push_back(*j);
    at = nl == std::string::npos ? out.size() : nl + 1;
  }
  return v;
}

}  // namespace

TEST_CASE("first contact: a backtest's throttle top keys count each key's summaries") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"toml(
[settings]
time = "log"
timezone = "UTC"

[[rule]]
name = "flood"
kind = "throttle"
threshold = "1 per 10s"
key = "{k}"
  [[rule.event]]
  name = "line"
  match = 'k=(?P<k>\w+)'
)toml");
  // Key a: 5 lines in one window (1 passed, 4 held back: one summary), then
  // 5 more 20 s later (another summary at the end). Key b: 1 line, none held.
  std::vector<std::string> keys{"a", "a", "a", "a", "a", "b"};
  for (int i = 0; i < 14; ++i) keys.emplace_back("x");
  for (int i = 0; i < 5; ++i) keys.emplace_back("a");
  const std::string log = dir.write("app.log", lines_for(keys));
  // The same log through the engine itself: the summaries per key.
  const RunResult plain = swt({"-r", rules, "--format", "json", log});
  REQUIRE(plain.exit_status == 0);
  std::map<std::string, int> summaries;
  for (const auto& rec : json_lines(plain.out))
    if (rec["type"] == "summary") ++summaries[rec["key"].get<std::string>()];
  REQUIRE(summaries["a"] == 2);

  const RunResult r = swt({"backtest", "-r", rules, "--format", "json", log});
  REQUIRE(r.exit_status == 0);
  const auto report = nlohmann::json::parse(r.out);
  const auto& top = report["rules"][0]["top_keys"];
  REQUIRE(top.size() == 3);
  for (const auto& k : top) {
    CAPTURE(k.dump());
    CHECK(k["alerts"] == summaries[k["key"].get<std::string>()]);  // before: always 0
  }
  // The text report's table says the same: "    a   5  2026-11-21 10:00:04   10   2".
  const RunResult text = swt({"backtest", "-r", rules, "--color", "never", log});
  REQUIRE(text.exit_status == 0);
  const std::size_t row = text.out.find("\n    a ");
  REQUIRE(row != std::string::npos);
  const std::string line = text.out.substr(row + 1, text.out.find('\n', row + 1) - row - 1);
  CAPTURE(line);
  CHECK(line.ends_with(" 10          2"));
}

TEST_CASE("first contact: a ratio rule with a minimum volume is swept, its guard kept") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"toml(
[settings]
time = "log"
timezone = "UTC"

[[rule]]
name = "ratio"
kind = "alert"
window = "1m"
when = "error / request > 0.05 and request >= 10"
  [[rule.event]]
  name = "request"
  match = 'k='
  [[rule.event]]
  name = "error"
  match = 'k=err'
)toml");
  // 10:00: 9 requests, 3 of them errors: a high ratio, below the volume.
  // 10:05: 12 requests, 3 errors (0.25): enough volume.
  std::string log_text;
  const std::vector<std::string> first{"ok", "err", "ok", "err", "ok", "err", "ok", "ok", "ok"};
  for (std::size_t i = 0; i < first.size(); ++i) log_text += printed("2026-11-21T10:00:%02zuZ k=", i) + first[i] + "\n";
  for (std::size_t i = 0; i < 12; ++i)
    log_text += printed("2026-11-21T10:05:%02zuZ k=", i) + (i % 2 == 1 && i < 6 ? "err" : "ok") + "\n";
  const std::string log = dir.write("app.log", log_text);
  const RunResult r = swt({"backtest", "-r", rules, "--sweep", "0.01,0.5", "--format", "json", log});
  REQUIRE(r.exit_status == 0);
  const auto rule = nlohmann::json::parse(r.out)["rules"][0];
  CHECK_FALSE(rule.contains("not_swept"));  // before: "its when is not one comparison"
  REQUIRE(rule["sweep"].size() == 3);
  // Each candidate keeps the guard: 10:00 alerts in none (without the guard,
  // 0.01 and 0.05 would alert there too); 10:05 in those whose ratio 0.25 passes.
  std::vector<std::pair<std::string, int>> got;
  for (const auto& c : rule["sweep"]) got.emplace_back(c["threshold"].get<std::string>(), c["alerts"].get<int>());
  CHECK(got == std::vector<std::pair<std::string, int>>{{"0.01", 1}, {"0.05", 1}, {"0.5", 0}});
}

TEST_CASE("first contact: a mistyped subcommand is said, not read as a file, and `help` works") {
  TempDir dir;
  const RunResult typo = swt({"backtst", "-r", "rules.toml", "app.log"});
  CHECK(typo.exit_status == 2);
  CHECK(typo.err == "swthrottle: backtst: not a file, nor a command (did you mean \"swthrottle backtest\"?)\n");
  // A file of that name is input, as any other.
  const std::string file = dir.write("backtst", "");
  const std::string rules = dir.write("rules.toml",
                                      "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"1 per "
                                      "1m\"\n  [[rule.event]]\n  name = \"e\"\n  match = 'x'\n");
  const RunResult as_file = swthrottle::test::run_process(
      {"/bin/sh", "-c",
       "cd '" + dir.path() + "' && exec '" + std::string(SWTHROTTLE_BINARY) + "' -r rules.toml backtst"},
      "");
  CHECK(as_file.exit_status == 0);
  CHECK(as_file.err == "");

  const RunResult help = swt({"help"});
  CHECK(help.exit_status == 0);
  CHECK(help.out == swt({"--help"}).out);
  const RunResult help_bt = swt({"help", "backtest"});
  CHECK(help_bt.exit_status == 0);
  CHECK(help_bt.out == swt({"backtest", "--help"}).out);
  const RunResult help_what = swt({"help", "nonsense"});
  CHECK(help_what.exit_status == 2);
  CHECK(help_what.err.find("no help on \"nonsense\"") != std::string::npos);
}

TEST_CASE("first contact: a regex in a double-quoted TOML string gets the hint to use single quotes") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml",
                                      "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"1 per 1m\"\n"
                                      "  [[rule.event]]\n  name = \"e\"\n  match = \"port \\d+\"\n");
  const RunResult r = swt({"-r", rules, "--check"});
  CHECK(r.exit_status == 2);
  CHECK(r.err.find("rules.toml:7:") != std::string::npos);
  CHECK(r.err.find("unknown escape sequence '\\d'") != std::string::npos);
  CHECK(r.err.find("write a regex in 'single quotes'") != std::string::npos);
}

TEST_CASE("first contact: -j abc says it is not a number") {
  const RunResult word = swt({"-j", "abc", "-r", "rules.toml"});
  CHECK(word.exit_status == 2);
  CHECK(word.err.find("--threads: \"abc\" is not a number (N: 0 to 1024)") != std::string::npos);
  const RunResult big = swt({"-j", "2000", "-r", "rules.toml"});
  CHECK(big.exit_status == 2);
  CHECK(big.err.find("--threads: 2000 is not in range 0 to 1024") != std::string::npos);
  const RunResult top = swt({"backtest", "--top", "many", "-r", "rules.toml"});
  CHECK(top.exit_status == 2);
  CHECK(top.err.find("--top: \"many\" is not a number (N: 0 to 1000)") != std::string::npos);
}
