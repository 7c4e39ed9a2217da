// End-to-end: JSON lines (DESIGN.md §1 `fields`, "{.path}"). The records of a JSON
// log equal those of the same events written as text lines, under rules that
// say the same with fields and with regexes. The real binary on real files.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

struct Logs {
  std::string json;
  std::string text;
};

// `n` events, a second or less apart, in both forms. JSON keys come in a
// random order; messages hold quotes and non-ASCII letters, which JSON escapes.
Logs generate(int n, unsigned seed) {
  std::mt19937 rng(seed);
  const std::vector<std::string> services{"pay", "search", "auth"};
  const std::vector<std::string> levels{"info", "info", "warn", "error"};
  const std::vector<int> statuses{200, 200, 404, 500, 503};
  const std::vector<std::pair<std::string, std::string>> msgs{
      {R"(caf\u00e9 closed)", "café closed"}, {R"(said \"no\")", R"(said "no")"}, {"timeout", "timeout"}};
  Logs logs;
  int64_t ms = 0;
  for (int i = 0; i < n; ++i) {
    ms += static_cast<int64_t>(rng() % 1000);
    char ts[40];
    std::snprintf(ts, sizeof ts, "2026-11-21T%02d:%02d:%02d.%03dZ", static_cast<int>(10 + ms / 3'600'000),
                  static_cast<int>(ms / 60'000 % 60), static_cast<int>(ms / 1000 % 60), static_cast<int>(ms % 1000));
    const std::string& svc = services[rng() % services.size()];
    const std::string& level = levels[rng() % levels.size()];
    const int status = statuses[rng() % statuses.size()];
    const auto& msg = msgs[rng() % msgs.size()];
    std::vector<std::string> fields{std::string(R"("ts":")") + ts + '"', R"("level":")" + level + '"',
                                    R"("service":{"name":")" + svc + R"(","pod":"p1"})",
                                    R"("status":)" + std::to_string(status), R"("msg":")" + msg.first + '"'};
    std::shuffle(fields.begin(), fields.end(), rng);
    std::string line = "{";
    for (std::size_t f = 0; f < fields.size(); ++f) line += (f ? "," : "") + fields[f];
    logs.json += line + "}\n";
    logs.text += std::string(ts) + " " + level + " service=" + svc + " status=" + std::to_string(status) +
                 " msg=" + msg.second + "\n";
  }
  return logs;
}

const char* const kSettings = R"([settings]
time = "log"
timestamp = "rfc3339"
)";

const char* const kJsonRules = R"(
[[rule]]
name = "server-errors"
kind = "alert"
threshold = "5 per 1m"
key = "{.service.name}"
message = "{.service.name} {code}: {.msg}"
[[rule.event]]
name = "e5xx"
fields = { level = "error", status = { match = '^(?P<code>5\d\d)$' } }

[[rule]]
name = "errors"
kind = "throttle"
threshold = "2 per 30s"
key = "{.service.name}"
[[rule.event]]
name = "error"
fields = { level = "error" }
[[rule.event]]
name = "not_found"
fields = { status = "404", "service.name" = { match = '^(pay|auth)$' } }
)";

const char* const kTextRules = R"(
[[rule]]
name = "server-errors"
kind = "alert"
threshold = "5 per 1m"
key = "{svc}"
message = "{svc} {code}: {msg}"
[[rule.event]]
name = "e5xx"
match = ' error service=(?P<svc>\S+) status=(?P<code>5\d\d) msg=(?P<msg>.*)$'

[[rule]]
name = "errors"
kind = "throttle"
threshold = "2 per 30s"
key = "{svc}"
[[rule.event]]
name = "error"
match = ' error service=(?P<svc>\S+) '
[[rule.event]]
name = "not_found"
match = ' service=(?P<svc>pay|auth) status=404 '
)";

// The records (lines that start "swthrottle:") and how many lines passed.
std::pair<std::string, int> records(const std::string& out) {
  std::istringstream in(out);
  std::string line, recs;
  int passed = 0;
  while (std::getline(in, line)) {
    if (line.rfind("swthrottle:", 0) == 0) recs += line + "\n";
    else ++passed;
  }
  return {recs, passed};
}

TEST_CASE("json e2e: a JSON log gives the records of the same events as text") {
  TempDir dir;
  const Logs logs = generate(4000, 12);
  const std::string json_log = dir.write("app.json", logs.json);
  const std::string text_log = dir.write("app.log", logs.text);
  const std::string json_rules = dir.write("json.toml", std::string(kSettings) + kJsonRules);
  const std::string text_rules = dir.write("text.toml", std::string(kSettings) + kTextRules);

  for (const char* jobs : {"1", "2"}) {
    INFO("-j " << jobs);
    const RunResult j = swthrottle::test::run_swthrottle({"-r", json_rules, "-j", jobs, json_log});
    const RunResult t = swthrottle::test::run_swthrottle({"-r", text_rules, "-j", jobs, text_log});
    REQUIRE(j.exit_status == 0);
    REQUIRE(t.exit_status == 0);
    const auto [json_records, json_passed] = records(j.out);
    const auto [text_records, text_passed] = records(t.out);
    CHECK(json_records.find("alert server-errors") != std::string::npos);
    CHECK(json_records.find("summary errors") != std::string::npos);
    CHECK(json_records.find("café") != std::string::npos);
    CHECK(json_records == text_records);
    CHECK(json_passed == text_passed);
    CHECK(json_passed > 0);
  }
}

TEST_CASE("json e2e: format = json counts lines that are not JSON, and still matches them as text") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"([[settings.input]]
path = "*.json"
format = "json"

[[rule]]
name = "boom"
kind = "alert"
threshold = "1 per 1m"
cooldown = "0"
message = "{.msg}"
[[rule.event]]
name = "json"
fields = { level = "error" }
[[rule.event]]
name = "raw"
match = 'BOOM'
)");
  const std::string log =
      dir.write("app.json", "{\"level\":\"error\",\"msg\":\"a\"}\nBOOM error, not json\n{\"level\":\"error\"\n");
  // Lines are read as JSON when a rule asks (here: lines holding "error" or a
  // backslash, the stand-in of `level = "error"`), so all three are read.
  const RunResult r = swthrottle::test::run_swthrottle({"-r", rules, "--stats", log});
  REQUIRE(r.exit_status == 0);
  CHECK(r.err.find(" invalid_json 2\n") != std::string::npos);
  CHECK(r.out.find(": a\n") != std::string::npos);
  CHECK(r.out.find("counts=json:1,raw:1 ") != std::string::npos);  // the bad line still matched as text
  // The same file under another name is read as auto: only the cut-short '{' line counts.
  const std::string other =
      dir.write("app.log", "{\"level\":\"error\",\"msg\":\"a\"}\nBOOM error, not json\n{\"level\":\"error\"\n");
  const RunResult a = swthrottle::test::run_swthrottle({"-r", rules, "--stats", other});
  CHECK(a.err.find(" invalid_json 1\n") != std::string::npos);
}

// Every way lines reach the decider counts the lines that are not JSON (a
// line is read as JSON when it holds the literal of a `fields` condition,
// here "error"):
// one file read in batches, -j, a followed backlog (--follow --from-start
// ends at SIGTERM, so it runs in live_test), and two files merged by log
// time, whose runs of lines are decided a few at a time.
TEST_CASE("json e2e: invalid_json counts the same for one file, -j and files merged by time") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"([settings]
time = "log"

[[settings.input]]
path = "*.json"
format = "json"

[[rule]]
name = "errors"
kind = "alert"
threshold = "1 per 1m"
[[rule.event]]
name = "error"
fields = { level = "error" }
)");
  const std::string a = dir.write("a.json",
                                  "{\"ts\":\"2026-11-21T10:00:00Z\",\"level\":\"error\"}\n"
                                  "2026-11-21T10:00:01Z error, not json\n"
                                  "{\"ts\":\"2026-11-21T10:00:03Z\",\"level\":\"info\"}\n");
  const std::string b = dir.write("b.json",
                                  "2026-11-21T10:00:00.500Z error, not json either\n"
                                  "{\"ts\":\"2026-11-21T10:00:02Z\",\"level\":\"error\"}\n"
                                  "2026-11-21T10:00:04Z error, still not json\n");
  struct Case {
    std::vector<std::string> args;
    const char* want;
  };
  for (const Case& c : std::vector<Case>{{{a}, " invalid_json 1\n"},
                                         {{"-j", "2", a}, " invalid_json 1\n"},
                                         {{b}, " invalid_json 2\n"},
                                         {{a, b}, " invalid_json 3\n"},
                                         {{"-j", "2", a, b}, " invalid_json 3\n"},
                                         {{b, a}, " invalid_json 3\n"}}) {
    std::vector<std::string> args{"-r", rules, "--stats"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CAPTURE(args.size());
    const RunResult r = swthrottle::test::run_swthrottle(args);
    REQUIRE(r.exit_status == 0);
    CAPTURE(r.err);
    CHECK(r.err.find(c.want) != std::string::npos);
  }
}

}  // namespace

namespace {

// The JSON text of `s` with some characters spelled as JSON also may: an
// ASCII letter as \u00XX, '/' as \/ (about one in `every`; never with 0);
// '"' and '\' are always escaped, non-ASCII bytes kept.
std::string odd_json(std::string_view s, std::mt19937& rng, unsigned every) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (every != 0 && u < 0x80 && std::isalpha(u) && rng() % every == 0) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04X", u);
      out += buf;
    } else if (every != 0 && c == '/' && rng() % 2 == 0) {
      out += "\\/";
    } else {
      out += c;
    }
  }
  return out;
}

const char* const kEscapeRules = R"toml(
[[rule]]
name = "timeouts"
kind = "throttle"
threshold = "3 per 10s"
message = "{.msg}"
[[rule.event]]
name = "t"
fields = { level = "error", msg = { match = 'timeout' } }

[[rule]]
name = "refused"
kind = "throttle"
threshold = "2 per 10s"
message = "{what}: {.msg}"
[[rule.event]]
name = "no"
fields = { msg = { match = 'said "(?P<what>\w+)"' } }

[[rule]]
name = "cafe"
kind = "alert"
threshold = "5 per 10s"
message = "{.msg}"
[[rule.event]]
name = "closed"
fields = { msg = { match = 'caf. closed' } }

[[rule]]
name = "ssh"
kind = "alert"
threshold = "4 per 10s"
key = "{ip}"
message = "{.msg}"
[[rule.event]]
name = "fail"
fields = { msg = { match = 'Failed password for \S+ from (?P<ip>[0-9.]+)' } }
)toml";

}  // namespace

TEST_CASE("json e2e: escaped spellings match as plain ones, with the literal prefilter on and off") {
  // The same events written plainly and with escapes (\u00XX letters, \/),
  // under rules whose field patterns give the prefilter literals ('"' among
  // them): the records are the same, and the same without the prefilter
  // (their messages are the fields' text; passed lines are counted, since
  // they are the lines as written).
  const std::vector<std::string> msgs{"db timeout after 30s",
                                      R"(GET /api/v1 said "no")",
                                      "café closed",
                                      "all fine",
                                      "Failed password for root from 1.2.3.4",
                                      "GET /health 200"};
  const std::vector<std::string> levels{"info", "warn", "error"};
  std::mt19937 rng(20261126);
  std::mt19937 unused(0);
  std::string plain, odd;
  for (int i = 0; i < 3000; ++i) {
    char ts[40];
    const int ms = i * 250;
    std::snprintf(ts, sizeof ts, "2026-11-21T10:%02d:%02d.%03dZ", ms / 60'000 % 60, ms / 1000 % 60, ms % 1000);
    const std::string& msg = msgs[rng() % msgs.size()];
    const std::string& level = levels[rng() % levels.size()];
    plain +=
        std::string(R"({"ts":")") + ts + R"(","level":")" + level + R"(","msg":")" + odd_json(msg, unused, 0) + "\"}\n";
    odd += std::string(R"({"ts":")") + ts + R"(","level":")" + odd_json(level, rng, 4) + R"(","msg":")" +
           odd_json(msg, rng, 8) + "\"}\n";
  }
  REQUIRE(odd.find("\\u00") != std::string::npos);
  REQUIRE(odd.find("\\/") != std::string::npos);
  TempDir dir;
  const std::string plain_log = dir.write("plain.json", plain);
  const std::string odd_log = dir.write("odd.json", odd);
  const std::string rules = dir.write("rules.toml", std::string(kSettings) + kEscapeRules);
  const RunResult base = swthrottle::test::run_swthrottle({"-r", rules, plain_log});
  REQUIRE(base.exit_status == 0);
  const auto [want, passed] = records(base.out);
  CHECK(want.find(" timeouts ") != std::string::npos);
  CHECK(want.find(" refused ") != std::string::npos);
  CHECK(want.find("alert ssh") != std::string::npos);
  CHECK(want.find("alert cafe") != std::string::npos);
  CHECK(passed > 100);
  for (const char* jobs : {"1", "2"}) {
    INFO("-j " << jobs);
    const RunResult r = swthrottle::test::run_swthrottle({"-r", rules, "-j", jobs, odd_log});
    CHECK(records(r.out).first == want);
    CHECK(records(r.out).second == passed);
    const RunResult off =
        swthrottle::test::run_process({SWTHROTTLE_BINARY, "-r", rules, "-j", jobs, odd_log}, "",
                                      swthrottle::test::kDefaultTimeout, {{"SWTHROTTLE_NO_PREFILTER", "1"}});
    CHECK(records(off.out).first == want);
    CHECK(records(off.out).second == passed);
  }
}
