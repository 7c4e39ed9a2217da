// Bad input that hid lines or silenced a replay (issue 32, items 1 and 6),
// against the real binary:
// - a JSON line with one bad byte or escape in any string was "invalid
//   JSON", and no `fields` rule held on it: a client controlling one field
//   escaped every field alert. Such lines are read leniently now, counted
//   as json_repaired, apart from broken JSON, which still falls back to
//   text matching;
// - one line stamped "now" in an old log, replayed, was trusted because it
//   was near the wall clock, and made every later line late (and --state
//   carried it into the next slice). In a replay it waits for confirmation.
#include <doctest/doctest.h>

#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::read_file;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

RunResult swt(const std::vector<std::string>& args, const std::string& input = "") {
  return swthrottle::test::run_swthrottle(args, input);
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// An alert on every error line, keyed by its service (each line its own
// key); a throttle that passes any line holding "svc", JSON or not.
const std::string kJsonRules = R"toml(
[[rule]]
name = "errors"
kind = "alert"
threshold = "1 per 1m"
key = "{.svc}"
  [[rule.event]]
  name = "error"
  fields = { level = "error", "a.b.c" = "x" }

[[rule]]
name = "text"
kind = "throttle"
threshold = "100 per 1m"
  [[rule.event]]
  name = "svc"
  match = 'svc'
)toml";

}  // namespace

TEST_CASE("bad input: one bad byte or escape in a JSON string no longer hides the line from field rules") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kJsonRules);
  // The probe's line, then each form it found, in the string of svc.
  const std::vector<std::string> bad{
      "caf\xe9",            // an invalid byte (Latin-1)
      "x\xc0\xaf",          // an overlong '/'
      "x\xed\xa0\x80",      // an encoded surrogate
      "x\\ud800",           // a lone surrogate escape
      "x\\uZZZZ",           // an escape that is not one
      "\x1b[31mred\x1b[0m"  // a raw ESC (a colour code)
  };
  std::string input;
  for (const std::string& svc : bad)
    input += "{\"level\":\"error\",\"svc\":\"" + svc + "\",\"a\":{\"b\":{\"c\":\"x\"}}}\n";
  input += "{\"level\":\"error\",\"svc\":\"good\",\"a\":{\"b\":{\"c\":\"x\"}}}\n";
  input += "{\"level\":\"error\",\"svc\":\"broken\xe9\",\"a\":{\"b\":{\"c\":\"x\"}}\n";  // a brace short: broken
  const RunResult r = swt({"-r", rules, "--format", "json", "--stats", "--stats-format", "json"}, input);
  REQUIRE(r.exit_status == 0);
  std::vector<std::string> keys;
  int passed = 0;
  std::size_t at = 0;
  while (at < r.out.size()) {
    const std::size_t nl = r.out.find('\n', at);
    const auto rec = nlohmann::json::parse(r.out.substr(at, nl - at));
    at = nl + 1;
    if (rec["type"] == "alert") keys.push_back(rec["key"].get<std::string>());
    if (rec["type"] == "line") ++passed;
  }
  // Before: only "good" alerted; each line with a bad byte was invalid JSON.
  // Records write bytes that are not UTF-8 as U+FFFD, as for any line.
  CHECK(keys == std::vector<std::string>{"caf\xef\xbf\xbd", "x\xef\xbf\xbd\xef\xbf\xbd",
                                         "x\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "x\xef\xbf\xbd", "x\\uZZZZ",
                                         "\x1b[31mred\x1b[0m", "good"});
  // The broken line still falls back to text: `match` holds on all eight.
  CHECK(passed == 8);
  // Counted apart: 6 read leniently, 1 broken.
  const auto stats = nlohmann::json::parse(r.err.substr(r.err.find('{')));
  CHECK(stats["lines"]["json_repaired"] == 6);
  CHECK(stats["lines"]["invalid_json"] == 1);
  // And in the text of --stats.
  const RunResult text = swt({"-r", rules, "--stats"}, input);
  CHECK(text.err.find(" invalid_json 1 json_repaired 6\n") != std::string::npos);
}

TEST_CASE("bad input: a field with a bad byte is matched as UTF-8 and as Latin-1, as a line is") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"toml(
[[rule]]
name = "bots"
kind = "alert"
threshold = "1 per 1m"
key = "{.ua}"
  [[rule.event]]
  name = "bot"
  fields = { ua = { match = '^\S*bot\S*$' } }
)toml");
  // A user agent with a stray byte: \S reads it in the Latin-1 reading.
  const std::string input =
      "{\"ua\":\"evilbot\xff\"}\n{\"ua\":\"good browser\"}\n{\"ua\":\"crawl\\u00e9bot\\ud800\"}\n";
  const RunResult r = swt({"-r", rules}, input);
  REQUIRE(r.exit_status == 0);
  CHECK(count_of(r.out, "swthrottle: alert bots") == 2);
}

namespace {

// Log time, max_jump at its default (1d): alerts once 3 lines of a key come
// within 10 s; every line is counted.
const std::string kReplayRules = R"toml(
[settings]
time = "log"
timezone = "UTC"

[[rule]]
name = "burst"
kind = "alert"
threshold = "3 per 10s"
key = "{k}"
cooldown = "1ms"
  [[rule.event]]
  name = "e"
  match = 'k=(?P<k>\w+)'
)toml";

std::string stamp(std::time_t t) {
  char buf[32];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// 100 lines of an old log (a year ago): bursts of 3 lines of one key per
// 30 s, each burst an alert; with one line stamped "now" after line `at`.
std::string old_log(std::size_t lines, std::size_t at, std::time_t old_start) {
  std::string out;
  for (std::size_t i = 0; i < lines; ++i) {
    const std::time_t t = old_start + static_cast<std::time_t>(i / 3 * 30 + i % 3);
    out += stamp(t) + " k=key" + std::to_string(i / 3 % 4) + "\n";
    if (i + 1 == at) out += stamp(std::time(nullptr)) + " k=outlier\n";
  }
  return out;
}

}  // namespace

TEST_CASE("bad input: one line stamped now in an old log does not silence the rest of a replay") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kReplayRules);
  const std::time_t old_start = std::time(nullptr) - 400 * 86400;
  const std::string clean = dir.write("clean.log", old_log(120, 0, old_start));
  const std::string with_now = dir.write("now.log", old_log(120, 60, old_start));
  const RunResult want = swt({"-r", rules, clean});
  REQUIRE(want.exit_status == 0);
  REQUIRE(count_of(want.out, "swthrottle: alert burst") == 40);
  const RunResult r = swt({"-r", rules, "--stats", with_now});
  REQUIRE(r.exit_status == 0);
  // Before: the 20 bursts after the "now" line were late, without a word on stderr.
  CHECK(count_of(r.out, "swthrottle: alert burst") == 40);
  CHECK(r.out == want.out);
  CHECK(r.err.find("jumps more than 1d ahead of this input's times; not trusted unless the next timestamp "
                   "confirms it") != std::string::npos);
  CHECK(r.err.find(" untrusted 1") != std::string::npos);
  // Standard input from the file is a replay too.
  const RunResult redirected = swthrottle::test::run_process(
      {"/bin/sh", "-c", "exec '" + std::string(SWTHROTTLE_BINARY) + "' -r '" + rules + "' < '" + with_now + "'"}, "");
  CHECK(redirected.out == want.out);
  // Live input (a pipe) keeps the wall clock's excuse: the "now" line is
  // taken there, as a live log after a quiet weekend would be.
  const RunResult piped = swt({"-r", rules}, read_file(with_now));
  CHECK(piped.out != want.out);
}

TEST_CASE("bad input: --state does not carry an untrusted now into the next slice") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kReplayRules);
  const std::time_t old_start = std::time(nullptr) - 400 * 86400;
  const std::string whole = old_log(120, 60, old_start);
  // Two slices, cut just after the "now" line (it is the last line of the first).
  const std::size_t cut = whole.find(" k=outlier\n") + 11;
  const std::string first = dir.write("slice1.log", whole.substr(0, cut));
  const std::string second = dir.write("slice2.log", whole.substr(cut));
  const std::string state = dir.file("state.json");
  const RunResult a = swt({"-r", rules, "--state", state, first});
  const RunResult b = swt({"-r", rules, "--state", state, second});
  REQUIRE(a.exit_status == 0);
  REQUIRE(b.exit_status == 0);
  // The slices write what one run over the whole log writes.
  const RunResult one = swt({"-r", rules, dir.write("whole.log", whole)});
  CHECK(a.out + b.out == one.out);
  CHECK(count_of(b.out, "swthrottle: alert burst") == 20);  // before: 0, every line late
  // The state holds the log's time, not the outlier's.
  const auto saved = read_file(state);
  const std::size_t sealed = saved.rfind(",\n\"checksum\"");  // the file's last member, when it has one
  const auto st = nlohmann::json::parse(sealed == std::string::npos ? saved : saved.substr(0, sealed) + "}");
  CHECK(st["last_log_ms"].get<int64_t>() < (static_cast<int64_t>(old_start) + 86400) * 1000);
  CHECK(st["now_ms"].get<int64_t>() < (static_cast<int64_t>(old_start) + 86400) * 1000);
}
