// Bad input that hid lines (issue 32, item 1), against the real binary: a
// JSON line with one bad byte or escape in any string was "invalid JSON",
// and no `fields` rule held on it: a client controlling one field escaped
// every field alert. Such lines are read leniently now, counted as
// json_repaired, apart from broken JSON, which still falls back to text
// matching.
#include <doctest/doctest.h>

#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/process.h"
#include "support/temp_dir.h"

namespace {

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
