// End-to-end tests of the swthrottle binary over standard input and files
// (DESIGN.md §1-§7): the real program, run as a child process.
//
// Every expectation below was worked out from the spec (the reasoning is in
// the comments), not copied from the program's output. Times in the inputs
// are RFC 3339 with `time = "log"`, so the records do not depend on speed.
// Windows use the default 10 buckets unless said otherwise, so "N per 10s"
// has 1 s buckets and the window at now covers the 10 whole seconds ending at
// now's second (DESIGN.md §2).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/json.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::Process;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

const std::string kBinary = SWTHROTTLE_BINARY;
const std::string kSourceDir = SWTHROTTLE_SOURCE_DIR;

std::string loghub(std::string_view name) { return kSourceDir + "/tests/data/loghub/" + std::string(name); }

RunResult swt(const std::vector<std::string>& args, const std::string& input = "") {
  return swthrottle::test::run_swthrottle(args, input);
}

// The settings every log-time scenario shares.
const std::string kLogTime = "[settings]\ntime = \"log\"\ntimezone = \"UTC\"\n\n";

// --- JSON records -----------------------------------------------------------
//
// Records are read with nlohmann-json (support/json.h) and compared with
// expectations written as JSON in canonical form, keys sorted: so the
// comparison is field by field, whatever order the fields come in.

// One record. rec["field"] is a string member's text, any other value as JSON
// writes it (a number, true, false, null), or "<absent>".
struct Json {
  nlohmann::json value;

  std::string operator[](std::string_view key) const {
    const auto it = value.find(std::string(key));
    if (it == value.end()) return "<absent>";
    return it->is_string() ? it->get<std::string>() : it->dump();
  }
};

std::string canon(const Json& v) { return swthrottle::test::canonical(v.value); }

std::optional<Json> parse_json(std::string_view s) {
  std::optional<nlohmann::json> j = swthrottle::test::parse_json(s);
  if (!j) return std::nullopt;
  return Json{std::move(*j)};
}

// Splits JSON Lines output; every line must be one JSON object.
std::vector<Json> records(const std::string& out) {
  std::vector<Json> recs;
  if (out.empty()) return recs;
  CHECK_MESSAGE(out.back() == '\n', "output does not end with a newline");
  std::size_t start = 0;
  while (start < out.size()) {
    std::size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    const std::string_view line(out.data() + start, end - start);
    std::optional<Json> j = parse_json(line);
    CHECK_MESSAGE(j.has_value(), "not a JSON line: " << line);
    if (j) {
      CHECK_MESSAGE(j->value.is_object(), "not a JSON object: " << line);
      recs.push_back(std::move(*j));
    }
    start = end + 1;
  }
  return recs;
}

std::string canon_all(const std::vector<Json>& recs) {
  std::string s;
  for (const Json& r : recs) s += canon(r) + "\n";
  return s;
}

std::string canon_expected(const std::vector<std::string>& expected) {
  std::string s;
  for (const std::string& e : expected) {
    std::optional<Json> j = parse_json(e);
    REQUIRE_MESSAGE(j.has_value(), "bad expectation: " << e);
    s += canon(*j) + "\n";
  }
  return s;
}

// The records of `out`, field by field, against the expected JSON objects.
void check_records(const std::string& out, const std::vector<std::string>& expected) {
  CHECK(canon_all(records(out)) == canon_expected(expected));
}

// Well-formed UTF-8 (RFC 3629): no stray continuation bytes, no overlong
// forms, no surrogates, nothing above U+10FFFF.
bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;  // the sequence is cut short
    for (std::size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = cp << 6 | (d & 0x3F);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000))
      return false;
    i += n + 1;
  }
  return true;
}

// Lists as text, so that a failed CHECK shows them.
std::string as_text(const std::vector<std::pair<std::string, std::string>>& v) {
  std::string s;
  for (const auto& [a, b] : v) s += a + " @ " + b + "\n";
  return s;
}
std::string as_text(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) s += a + "\n";
  return s;
}

// --- --stats ------------------------------------------------------------------

// The numbers of one stats line on stderr: the global line (rule "") or the
// line of one rule, as "name value" pairs.
std::map<std::string, long> stats_of(const std::string& err, const std::string& rule = "") {
  std::map<std::string, long> out;
  std::size_t start = 0;
  while (start < err.size()) {
    std::size_t end = err.find('\n', start);
    if (end == std::string::npos) end = err.size();
    const std::string line = err.substr(start, end - start);
    start = end + 1;
    const std::string prefix = rule.empty() ? "swthrottle: stats: lines " : "swthrottle: stats: rule " + rule + ": ";
    if (line.rfind(prefix, 0) != 0) continue;
    std::vector<std::string> words;
    std::size_t p = rule.empty() ? std::string("swthrottle: stats: ").size() : prefix.size();
    while (p < line.size()) {
      std::size_t q = line.find(' ', p);
      if (q == std::string::npos) q = line.size();
      if (q > p) words.push_back(line.substr(p, q - p));
      p = q + 1;
    }
    for (std::size_t i = 0; i + 1 < words.size(); ++i) {
      const std::string& v = words[i + 1];
      if (!v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
        out[words[i]] = std::stol(v);
    }
    return out;
  }
  FAIL_CHECK("no stats line for " << (rule.empty() ? "the run" : rule) << " in: " << err);
  return out;
}

// --- time helpers for the corpus models -----------------------------------------

int month_index(std::string_view mon) {
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; ++i)
    if (mon == kMonths[i]) return i;
  return -1;
}

int64_t utc_ms(int year, int mon0, int day, int h, int m, int s) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = mon0;
  tm.tm_mday = day;
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = s;
  return static_cast<int64_t>(::timegm(&tm)) * 1000;
}

std::string rfc3339(int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buf;
}

// The lines of a file as swthrottle sees them: split at "\n", a "\r" before
// it dropped, a last line without a newline kept.
std::vector<std::string> file_lines(const std::string& path) {
  const std::string data = swthrottle::test::read_file(path);
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < data.size()) {
    std::size_t end = data.find('\n', start);
    if (end == std::string::npos) end = data.size();
    std::string line = data.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

// "Dec 10 06:55:46 ..." in the given year, UTC.
int64_t syslog_ms(const std::string& line, int year) {
  char mon[4] = {};
  int day = 0, h = 0, m = 0, s = 0;
  REQUIRE(std::sscanf(line.c_str(), "%3s %d %d:%d:%d", mon, &day, &h, &m, &s) == 5);
  const int mi = month_index(mon);
  REQUIRE(mi >= 0);
  return utc_ms(year, mi, day, h, m, s);
}

// "[Sun Dec 04 04:47:44 2005] ...", UTC.
int64_t apache_ms(const std::string& line) {
  char mon[4] = {};
  int day = 0, h = 0, m = 0, s = 0, year = 0;
  REQUIRE(std::sscanf(line.c_str(), "[%*3s %3s %d %d:%d:%d %d]", mon, &day, &h, &m, &s, &year) == 6);
  const int mi = month_index(mon);
  REQUIRE(mi >= 0);
  return utc_ms(year, mi, day, h, m, s);
}

// --- naive models of DESIGN.md §2-§3, for the corpus replays -------------------------
//
// Deliberately simple: every event is kept as a time in a list, and the window
// at now is "events whose bucket floor(t/w) lies in floor(now/w)-B+1 ..
// floor(now/w)", counted from scratch each time. "Now" is the newest time of
// any line so far, matching or not.

struct ModelLine {
  int64_t t = 0;
  bool matched = false;
  std::string key;
};

struct AlertModel {
  int64_t width = 0;       // w = X / B
  int64_t buckets = 10;    // B
  uint64_t threshold = 0;  // Y
  int64_t cooldown = 0;

  struct Result {
    std::vector<std::pair<std::string, std::string>> alerts;  // (key, time)
    uint64_t matched = 0, late = 0, events = 0;
  };

  Result run(const std::vector<ModelLine>& lines) const {
    Result res;
    std::map<std::string, std::vector<int64_t>> events;
    std::map<std::string, int64_t> last_alert;
    int64_t now = -1;
    for (const ModelLine& l : lines) {
      now = std::max(now, l.t);
      if (!l.matched) continue;
      ++res.matched;
      const int64_t nb = now / width;
      if (l.t / width < nb - buckets + 1) {  // late: not added, not evaluated
        ++res.late;
        continue;
      }
      ++res.events;
      auto& list = events[l.key];
      list.push_back(l.t);
      uint64_t count = 0;
      for (int64_t e : list)
        if (e / width >= nb - buckets + 1 && e / width <= nb) ++count;
      if (count < threshold) continue;
      auto it = last_alert.find(l.key);
      if (it == last_alert.end() || now - it->second >= cooldown) {
        res.alerts.emplace_back(l.key, rfc3339(now));
        last_alert[l.key] = now;
      }
    }
    return res;
  }
};

struct ThrottleModel {
  int64_t width = 0;
  int64_t buckets = 10;
  uint64_t threshold = 0;

  struct Result {
    std::vector<std::string> passed;  // the lines written
    uint64_t suppressed = 0;
    uint64_t matched = 0;
  };

  // lines: (time, text, matched)
  Result run(const std::vector<std::pair<int64_t, std::string>>& lines,
             const std::function<bool(const std::string&)>& matches) const {
    Result res;
    std::vector<int64_t> passed_buckets;
    int64_t now = -1;
    for (const auto& [t, text] : lines) {
      now = std::max(now, t);
      if (!matches(text)) continue;
      ++res.matched;
      const int64_t nb = now / width;
      int64_t b = t / width;
      if (b < nb - buckets + 1) b = nb;  // too late for the window: decided and counted at now
      uint64_t count = 0;
      for (int64_t e : passed_buckets)
        if (e >= nb - buckets + 1 && e <= nb) ++count;
      if (count < threshold) {
        passed_buckets.push_back(b);
        res.passed.push_back(text);
      } else {
        ++res.suppressed;
      }
    }
    return res;
  }
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// 'Failed password for (?:invalid user )?\S+ from (?P<ip>[0-9a-fA-F.:]+)',
// matched by hand: the address, or nothing when the pattern does not match.
std::optional<std::string> ssh_failed_ip(const std::string& l) {
  const std::string head = "Failed password for ";
  for (std::size_t f = l.find(head); f != std::string::npos; f = l.find(head, f + 1)) {
    for (const bool invalid_user : {true, false}) {  // the regex tries the optional group first
      std::size_t p = f + head.size();
      if (invalid_user) {
        if (l.compare(p, 13, "invalid user ") != 0) continue;
        p += 13;
      }
      std::size_t u = p;  // \S+ then " from ": the user ends at the first space
      while (u < l.size() && !is_space(l[u])) ++u;
      if (u == p || l.compare(u, 6, " from ") != 0) continue;
      const std::size_t ip = u + 6;
      std::size_t e = ip;
      while (e < l.size() && (std::isxdigit(static_cast<unsigned char>(l[e])) || l[e] == '.' || l[e] == ':')) ++e;
      if (e > ip) return l.substr(ip, e - ip);
    }
  }
  return std::nullopt;
}

// 'authentication failure;.* rhost=(?P<rhost>\S*)' by hand: the greedy .*
// makes the capture follow the last " rhost=" after the first
// "authentication failure;".
std::optional<std::string> auth_failure_rhost(const std::string& l) {
  const std::string head = "authentication failure;";
  const std::size_t f = l.find(head);
  if (f == std::string::npos) return std::nullopt;
  const std::size_t h = l.rfind(" rhost=");
  if (h == std::string::npos || h < f + head.size()) return std::nullopt;
  std::size_t e = h + 7;
  while (e < l.size() && !is_space(l[e])) ++e;
  return l.substr(h + 7, e - (h + 7));
}

std::string ts(int sec) {  // input timestamp, sec seconds after 10:00:00
  char buf[32];
  std::snprintf(buf, sizeof buf, "2026-11-21T%02d:%02d:%02dZ", 10 + sec / 3600, sec / 60 % 60, sec % 60);
  return buf;
}

}  // namespace

// ================================================================================
// time = "log" replays, JSON output
// ================================================================================

TEST_CASE("e2e: throttle writes at most Y per window and summarizes the rest") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name      = "t"
kind      = "throttle"
threshold = "2 per 10s"
  [[rule.event]]
  name  = "e"
  match = 'ERR'
)");
  const std::string input =
      "2026-11-21T10:00:00Z ERR a\n"  // window empty: passes (1 in window)
      "2026-11-21T10:00:01Z ERR b\n"  // passes (2 in window)
      "2026-11-21T10:00:02Z ERR c\n"  // window holds 2: suppressed, tally 1, first = 10:00:02
      "2026-11-21T10:00:03Z ERR d\n"  // suppressed, tally 2, last = 10:00:03
      "2026-11-21T10:00:04Z ok\n"     // no match; window 09:59:55..10:00:04 still holds 2: no room, no summary
      "2026-11-21T10:00:10Z ERR e\n"  // window now 10:00:01..10:00:10 holds only b: the boundary check
                                      // writes the summary (2, 02..03), then e passes (2 in window)
      "2026-11-21T10:00:10Z ERR f\n"  // window holds b, e: suppressed, first = last = 10:00:10
      "2026-11-21T10:00:11Z ok\n"     // b leaves the window (10:00:02..10:00:11 holds e only): room again,
                                      // the boundary check writes the summary though no line passes
      "2026-11-21T10:00:12Z ERR g\n"  // passes (e, g)
      "2026-11-21T10:00:12Z ERR h";   // suppressed; end of input (no final newline) writes its summary at now
  RunResult r = swt({"-r", rules, "--format", "json"}, input);
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  check_records(
      r.out,
      {
          R"({"type":"line","time":"2026-11-21T10:00:00.000Z","line":"2026-11-21T10:00:00Z ERR a","rule":"t"})",
          R"({"type":"line","time":"2026-11-21T10:00:01.000Z","line":"2026-11-21T10:00:01Z ERR b","rule":"t"})",
          R"({"type":"summary","time":"2026-11-21T10:00:10.000Z","rule":"t","key":"","window":"10s","threshold":2,
          "suppressed":2,"first":"2026-11-21T10:00:02.000Z","last":"2026-11-21T10:00:03.000Z","counts":{"e":2}})",
          R"({"type":"line","time":"2026-11-21T10:00:10.000Z","line":"2026-11-21T10:00:10Z ERR e","rule":"t"})",
          R"({"type":"summary","time":"2026-11-21T10:00:11.000Z","rule":"t","key":"","window":"10s","threshold":2,
          "suppressed":1,"first":"2026-11-21T10:00:10.000Z","last":"2026-11-21T10:00:10.000Z","counts":{"e":1}})",
          R"({"type":"line","time":"2026-11-21T10:00:12.000Z","line":"2026-11-21T10:00:12Z ERR g","rule":"t"})",
          R"({"type":"summary","time":"2026-11-21T10:00:12.000Z","rule":"t","key":"","window":"10s","threshold":2,
          "suppressed":1,"first":"2026-11-21T10:00:12.000Z","last":"2026-11-21T10:00:12.000Z","counts":{"e":1}})",
      });

  // The same run as text: passed lines unchanged, summaries in the layout of
  // output/writer.h (no key= for a rule without key).
  RunResult t = swt({"-r", rules}, input);
  CHECK(t.exit_status == 0);
  CHECK(t.out ==
        "2026-11-21T10:00:00Z ERR a\n"
        "2026-11-21T10:00:01Z ERR b\n"
        "swthrottle: summary t suppressed=2 first=2026-11-21T10:00:02.000Z last=2026-11-21T10:00:03.000Z "
        "window=10s time=2026-11-21T10:00:10.000Z\n"
        "2026-11-21T10:00:10Z ERR e\n"
        "swthrottle: summary t suppressed=1 first=2026-11-21T10:00:10.000Z last=2026-11-21T10:00:10.000Z "
        "window=10s time=2026-11-21T10:00:11.000Z\n"
        "2026-11-21T10:00:12Z ERR g\n"
        "swthrottle: summary t suppressed=1 first=2026-11-21T10:00:12.000Z last=2026-11-21T10:00:12.000Z "
        "window=10s time=2026-11-21T10:00:12.000Z\n");

  // "-" is standard input, as no FILE is.
  CHECK(swt({"-r", rules, "-"}, input).out == t.out);

  // --stats: 10 lines read, 8 matched, 4 written (a, b, e, g); the rule
  // passed those 4 and suppressed 4 (c, d, f, h) in 3 summaries.
  RunResult s = swt({"-r", rules, "--stats"}, input);
  CHECK(s.out == t.out);  // stats go to stderr only
  auto g = stats_of(s.err);
  CHECK(g["lines"] == 10);
  CHECK(g["matched"] == 8);
  CHECK(g["written"] == 4);
  auto rs = stats_of(s.err, "t");
  CHECK(rs["passed"] == 4);
  CHECK(rs["suppressed"] == 4);
  CHECK(rs["summaries"] == 3);
}

TEST_CASE("e2e: alert with cooldown, suppressed tally and resolve") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name      = "a"
kind      = "alert"
threshold = "3 per 10s"
cooldown  = "20s"
resolve   = true
message   = "{count} in {window}"
  [[rule.event]]
  name  = "x"
  match = 'FAIL'
)");
  const std::string input =
      "2026-11-21T10:00:00Z FAIL 1\n"
      "2026-11-21T10:00:01Z FAIL 2\n"
      "2026-11-21T10:00:02Z FAIL 3\n"  // 3 in window: first alert (suppressed 0); last alert 10:00:02
      "2026-11-21T10:00:03Z FAIL 4\n"  // holds, inside the cooldown: tally 1
      "2026-11-21T10:00:04Z FAIL 5\n"  // tally 2
      "2026-11-21T10:00:14Z tick\n"    // window 10:00:05..14 is empty: the boundary check resolves the
                                       // announced episode (suppressed: its 2 unannounced lines)
      "2026-11-21T10:00:15Z FAIL 6\n"
      "2026-11-21T10:00:16Z FAIL 7\n"
      "2026-11-21T10:00:17Z FAIL 8\n"  // holds again, 15 s after the last alert < 20 s cooldown: tally 3,
                                       // a new episode that is not announced
      "2026-11-21T10:00:28Z tick\n"    // stops firing; not announced, so no resolved record
      "2026-11-21T10:00:30Z FAIL 9\n"
      "2026-11-21T10:00:31Z FAIL 10\n"
      "2026-11-21T10:00:32Z FAIL 11\n";  // holds, 30 s after the last alert: alert carrying the tally 3
  RunResult r = swt({"-r", rules, "--format", "json", "--exit-code"}, input);
  CHECK(r.exit_status == 1);  // --exit-code: an alert was raised
  CHECK(r.err == "");
  // A resolved record carries the message too (DESIGN.md §5: "message (when the
  // rule has one)"), rendered at the resolve, where {count} is 0.
  check_records(
      r.out,
      {
          R"({"type":"alert","time":"2026-11-21T10:00:02.000Z","rule":"a","key":"","window":"10s","threshold":3,
          "count":3,"counts":{"x":3},"suppressed":0,"line":"2026-11-21T10:00:02Z FAIL 3","message":"3 in 10s"})",
          R"({"type":"resolved","time":"2026-11-21T10:00:14.000Z","rule":"a","key":"","window":"10s","threshold":3,
          "count":0,"counts":{"x":0},"suppressed":2,"message":"0 in 10s"})",
          R"({"type":"alert","time":"2026-11-21T10:00:32.000Z","rule":"a","key":"","window":"10s","threshold":3,
          "count":3,"counts":{"x":3},"suppressed":3,"line":"2026-11-21T10:00:32Z FAIL 11","message":"3 in 10s"})",
      });

  // Text layout (output/writer.h): the message after ": ".
  RunResult t = swt({"-r", rules}, input);
  CHECK(t.exit_status == 0);  // no --exit-code: 0 even though alerts were raised
  CHECK(t.out ==
        "swthrottle: alert a count=3 threshold=3 window=10s suppressed=0 time=2026-11-21T10:00:02.000Z: 3 in 10s\n"
        "swthrottle: resolved a count=0 threshold=3 window=10s time=2026-11-21T10:00:14.000Z\n"
        "swthrottle: alert a count=3 threshold=3 window=10s suppressed=3 time=2026-11-21T10:00:32.000Z: 3 in 10s\n");
}

TEST_CASE("e2e: keyed windows, one per capture") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name      = "k"
kind      = "alert"
threshold = "2 per 10s"
key       = "{user}"
message   = "{user}: {count}"
  [[rule.event]]
  name  = "failed"
  match = 'login failed user=(?P<user>\w+)'

[[rule]]
name      = "kt"
kind      = "throttle"
threshold = "1 per 10s"
key       = "{user}"
  [[rule.event]]
  name  = "upload"
  match = 'upload by (?P<user>\w+)'
)");
  const std::string input =
      "2026-11-21T10:00:00Z login failed user=alice\n"  // alice 1
      "2026-11-21T10:00:01Z login failed user=bob\n"    // bob 1: a window of its own, no alert
      "2026-11-21T10:00:02Z login failed user=alice\n"  // alice 2: alert for key alice
      "2026-11-21T10:00:03Z login failed user=bob\n"    // bob 2: alert for key bob
      "2026-11-21T10:00:04Z login failed user=carol\n"  // carol 1
      "2026-11-21T10:00:05Z login failed user=alice\n"  // alice 3, inside alice's cooldown (default: the window)
      "2026-11-21T10:00:06Z upload by alice\n"          // kt alice: passes
      "2026-11-21T10:00:07Z upload by bob\n"            // kt bob: passes (its own window)
      "2026-11-21T10:00:08Z upload by alice\n"          // kt alice full: suppressed, first 08
      "2026-11-21T10:00:09Z upload by alice\n"          // suppressed, last 09
      "2026-11-21T10:00:09Z upload by bob\n";           // kt bob full: suppressed
  RunResult r = swt({"-r", rules, "--format", "json"}, input);
  CHECK(r.exit_status == 0);
  std::vector<Json> recs = records(r.out);
  REQUIRE(recs.size() == 6);
  // The end-of-input summaries (one per key with a tally) are written at now,
  // 10:00:09; the spec does not order keys, so they are compared as a set.
  std::vector<Json> tail(recs.begin() + 4, recs.end());
  recs.resize(4);
  CHECK(
      canon_all(recs) ==
      canon_expected({
          R"({"type":"alert","time":"2026-11-21T10:00:02.000Z","rule":"k","key":"alice","window":"10s","threshold":2,
          "count":2,"counts":{"failed":2},"suppressed":0,"line":"2026-11-21T10:00:02Z login failed user=alice",
          "message":"alice: 2"})",
          R"({"type":"alert","time":"2026-11-21T10:00:03.000Z","rule":"k","key":"bob","window":"10s","threshold":2,
          "count":2,"counts":{"failed":2},"suppressed":0,"line":"2026-11-21T10:00:03Z login failed user=bob",
          "message":"bob: 2"})",
          R"({"type":"line","time":"2026-11-21T10:00:06.000Z","line":"2026-11-21T10:00:06Z upload by alice","rule":"kt"})",
          R"({"type":"line","time":"2026-11-21T10:00:07.000Z","line":"2026-11-21T10:00:07Z upload by bob","rule":"kt"})",
      }));
  std::vector<std::string> got{canon(tail[0]) + "\n", canon(tail[1]) + "\n"};
  std::sort(got.begin(), got.end());
  std::vector<std::string> want{
      canon_expected({R"({"type":"summary","time":"2026-11-21T10:00:09.000Z","rule":"kt","key":"alice","window":"10s",
          "threshold":1,"suppressed":2,"first":"2026-11-21T10:00:08.000Z","last":"2026-11-21T10:00:09.000Z",
          "counts":{"upload":2}})"}),
      canon_expected({R"({"type":"summary","time":"2026-11-21T10:00:09.000Z","rule":"kt","key":"bob","window":"10s",
          "threshold":1,"suppressed":1,"first":"2026-11-21T10:00:09.000Z","last":"2026-11-21T10:00:09.000Z",
          "counts":{"upload":1}})"})};
  std::sort(want.begin(), want.end());
  CHECK(as_text(got) == as_text(want));

  // Text layout: key=KEY after the rule name.
  RunResult t = swt({"-r", rules}, input);
  CHECK(t.out.rfind("swthrottle: alert k key=alice count=2 threshold=2 window=10s suppressed=0 "
                    "time=2026-11-21T10:00:02.000Z: alice: 2\n",
                    0) == 0);
}

TEST_CASE("e2e: multi-event when rule (the nginx 5xx ratio of DESIGN.md §1)") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name    = "nginx-5xx-ratio"
kind    = "alert"
window  = "5m"
when    = "error / request > 0.05 and request >= 100"
resolve = true
  [[rule.event]]
  name  = "request"
  match = '"\w+ \S+ HTTP/[\d.]+" \d{3} '
  [[rule.event]]
  name  = "error"
  match = '"\w+ \S+ HTTP/[\d.]+" 5\d\d '
)");
  // One request a second from 10:00:00: 95 answered 200, then 500s. A 500
  // line is both a request and an error (DESIGN.md §1). All of it lies inside one
  // 5-minute window (30 s buckets, 10:00:00 is a bucket start).
  //   after line i=99:  request 100, error 5: 5/100 = 0.05 is not > 0.05
  //   after line i=100: request 101, error 6: 0.059 > 0.05 and 101 >= 100: alert
  //   line i=101 (200): request 102, error 6: 0.0588 still holds, inside the
  //                     cooldown (default: the window): tally 1
  // At 10:10:00 the window (10:05:30..10:10:00) holds nothing: the boundary
  // check finds 0/0, a division by zero, so the comparison is false and the
  // announced episode resolves; then that line's own request counts 1.
  std::string input;
  auto request = [](int sec, int status) {
    return ts(sec) + " 10.0.0.1 - - \"GET /i/" + std::to_string(sec) + " HTTP/1.1\" " + std::to_string(status) +
           " 512\n";
  };
  for (int i = 0; i <= 101; ++i) input += request(i, i >= 95 && i <= 100 ? 500 : 200);
  input += request(600, 200);
  RunResult r = swt({"-r", rules, "--format", "json"}, input);
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  const std::string alert_line = ts(100) + " 10.0.0.1 - - \"GET /i/100 HTTP/1.1\" 500 512";
  check_records(
      r.out,
      {
          R"({"type":"alert","time":"2026-11-21T10:01:40.000Z","rule":"nginx-5xx-ratio","key":"","window":"5m",
          "when":"error / request > 0.05 and request >= 100","count":107,"counts":{"request":101,"error":6},
          "suppressed":0,"line":"2026-11-21T10:01:40Z 10.0.0.1 - - \"GET /i/100 HTTP/1.1\" 500 512"})",
          R"({"type":"resolved","time":"2026-11-21T10:10:00.000Z","rule":"nginx-5xx-ratio","key":"","window":"5m",
          "when":"error / request > 0.05 and request >= 100","count":0,"counts":{"request":0,"error":0},
          "suppressed":1})",
      });
  std::vector<Json> recs = records(r.out);
  REQUIRE(!recs.empty());
  CHECK(recs[0]["line"] == alert_line);
}

TEST_CASE("e2e: records of one line come out in the four groups of DESIGN.md §3, each in rule file order") {
  TempDir dir;
  // File order: zr, yt, xt, wa, va, ut (names run backwards, so neither name
  // order nor record type order can pass for file order). The patterns are
  // words no timestamp contains ("T1" would match "21T10").
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name      = "zr"
kind      = "alert"
threshold = "2 per 10s"
resolve   = true
  [[rule.event]]
  name  = "r"
  match = 'ARR'

[[rule]]
name      = "yt"
kind      = "throttle"
threshold = "1 per 10s"
  [[rule.event]]
  name  = "t"
  match = 'TEE'

[[rule]]
name      = "xt"
kind      = "throttle"
threshold = "5 per 10s"
  [[rule.event]]
  name  = "x"
  match = 'X'

[[rule]]
name      = "wa"
kind      = "alert"
threshold = "1 per 10s"
message   = "wa {count}"
  [[rule.event]]
  name  = "w"
  match = 'X'

[[rule]]
name      = "va"
kind      = "alert"
threshold = "1 per 10s"
message   = "va {count}"
  [[rule.event]]
  name  = "v"
  match = 'X'

[[rule]]
name      = "ut"
kind      = "throttle"
threshold = "5 per 10s"
  [[rule.event]]
  name  = "u"
  match = 'X'
)");
  const std::string input =
      "2026-11-21T10:00:00Z TEE ARR\n"  // yt passes it (line, rule yt); zr counts 1
      "2026-11-21T10:00:01Z TEE ARR\n"  // zr counts 2: alert; yt suppresses it (tally 1): not written
      "2026-11-21T10:00:12Z X\n";       // group 1, boundary checks at 10:00:12 in file order: zr resolves
                                        // (window empty), yt has room: summary. Group 3: the line, passed
                                        // by xt and ut, named after xt (first in file order). Group 4: the
                                        // alerts of wa, then va.
  RunResult r = swt({"-r", rules, "--format", "json"}, input);
  CHECK(r.exit_status == 0);
  check_records(
      r.out,
      {
          R"({"type":"line","time":"2026-11-21T10:00:00.000Z","line":"2026-11-21T10:00:00Z TEE ARR","rule":"yt"})",
          R"({"type":"alert","time":"2026-11-21T10:00:01.000Z","rule":"zr","key":"","window":"10s","threshold":2,
          "count":2,"counts":{"r":2},"suppressed":0,"line":"2026-11-21T10:00:01Z TEE ARR"})",
          R"({"type":"resolved","time":"2026-11-21T10:00:12.000Z","rule":"zr","key":"","window":"10s","threshold":2,
          "count":0,"counts":{"r":0},"suppressed":0})",
          R"({"type":"summary","time":"2026-11-21T10:00:12.000Z","rule":"yt","key":"","window":"10s","threshold":1,
          "suppressed":1,"first":"2026-11-21T10:00:01.000Z","last":"2026-11-21T10:00:01.000Z","counts":{"t":1}})",
          R"({"type":"line","time":"2026-11-21T10:00:12.000Z","line":"2026-11-21T10:00:12Z X","rule":"xt"})",
          R"({"type":"alert","time":"2026-11-21T10:00:12.000Z","rule":"wa","key":"","window":"10s","threshold":1,
          "count":1,"counts":{"w":1},"suppressed":0,"line":"2026-11-21T10:00:12Z X","message":"wa 1"})",
          R"({"type":"alert","time":"2026-11-21T10:00:12.000Z","rule":"va","key":"","window":"10s","threshold":1,
          "count":1,"counts":{"v":1},"suppressed":0,"line":"2026-11-21T10:00:12Z X","message":"va 1"})",
      });
}

TEST_CASE("e2e: --passthrough writes every line a throttle did not suppress") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name      = "t"
kind      = "throttle"
threshold = "1 per 10s"
  [[rule.event]]
  name  = "e"
  match = 'ERR'

[[rule]]
name      = "a"
kind      = "alert"
threshold = "1 per 10s"
  [[rule.event]]
  name  = "b"
  match = 'BAD'
)");
  const std::string input =
      "2026-11-21T10:00:00Z hello\n"  // no rule: written only with --passthrough (no "rule")
      "2026-11-21T10:00:01Z ERR 1\n"  // t passes it
      "2026-11-21T10:00:02Z ERR 2\n"  // t suppresses it: never written
      "2026-11-21T10:00:03Z BAD\n";   // only an alert rule: the alert is written; with --passthrough the
                                      // line too, before the alert (group 3 before group 4)
  const std::string alert =
      R"({"type":"alert","time":"2026-11-21T10:00:03.000Z","rule":"a","key":"","window":"10s","threshold":1,
          "count":1,"counts":{"b":1},"suppressed":0,"line":"2026-11-21T10:00:03Z BAD"})";
  const std::string summary =
      R"({"type":"summary","time":"2026-11-21T10:00:03.000Z","rule":"t","key":"","window":"10s","threshold":1,
          "suppressed":1,"first":"2026-11-21T10:00:02.000Z","last":"2026-11-21T10:00:02.000Z","counts":{"e":1}})";
  RunResult p = swt({"-r", rules, "--format", "json", "--passthrough"}, input);
  CHECK(p.exit_status == 0);
  check_records(
      p.out, {
                 R"({"type":"line","time":"2026-11-21T10:00:00.000Z","line":"2026-11-21T10:00:00Z hello"})",
                 R"({"type":"line","time":"2026-11-21T10:00:01.000Z","line":"2026-11-21T10:00:01Z ERR 1","rule":"t"})",
                 R"({"type":"line","time":"2026-11-21T10:00:03.000Z","line":"2026-11-21T10:00:03Z BAD"})",
                 alert,
                 summary,
             });
  RunResult n = swt({"-r", rules, "--format", "json"}, input);
  CHECK(n.exit_status == 0);
  check_records(
      n.out, {
                 R"({"type":"line","time":"2026-11-21T10:00:01.000Z","line":"2026-11-21T10:00:01Z ERR 1","rule":"t"})",
                 alert,
                 summary,
             });
}

TEST_CASE("e2e: lines before any timestamp are untimed, later lines without one take the last") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name      = "t"
kind      = "throttle"
threshold = "1 per 10s"
  [[rule.event]]
  name  = "e"
  match = 'ERR'

[[rule]]
name      = "a"
kind      = "alert"
threshold = "1 per 10s"
  [[rule.event]]
  name  = "e"
  match = 'ERR'
)");
  const std::string input =
      "ERR boot 1\n"                      // no timestamp seen yet: not windowed; t passes it, a ignores it
      "ERR boot 2\n"                      // same: not counted, so t passes it again
      "2026-11-21T10:00:00Z ERR timed\n"  // t: window empty, passes; a: 1 in window: alert
      "ERR stack line\n";                 // takes 10:00:00: t suppresses it; a holds inside the cooldown
  RunResult r = swt({"-r", rules, "--format", "json", "--stats"}, input);
  CHECK(r.exit_status == 0);
  check_records(
      r.out,
      {
          R"({"type":"line","time":null,"line":"ERR boot 1","rule":"t"})",
          R"({"type":"line","time":null,"line":"ERR boot 2","rule":"t"})",
          R"({"type":"line","time":"2026-11-21T10:00:00.000Z","line":"2026-11-21T10:00:00Z ERR timed","rule":"t"})",
          R"({"type":"alert","time":"2026-11-21T10:00:00.000Z","rule":"a","key":"","window":"10s","threshold":1,
          "count":1,"counts":{"e":1},"suppressed":0,"line":"2026-11-21T10:00:00Z ERR timed"})",
          R"({"type":"summary","time":"2026-11-21T10:00:00.000Z","rule":"t","key":"","window":"10s","threshold":1,
          "suppressed":1,"first":"2026-11-21T10:00:00.000Z","last":"2026-11-21T10:00:00.000Z","counts":{"e":1}})",
      });
  CHECK(stats_of(r.err)["untimed"] == 2);
  CHECK(stats_of(r.err)["lines"] == 4);

  // Text: a record before any timestamp shows time=-, but a passed line is
  // just the line.
  RunResult t = swt({"-r", rules}, input);
  CHECK(t.out.rfind("ERR boot 1\nERR boot 2\n2026-11-21T10:00:00Z ERR timed\n", 0) == 0);
}

TEST_CASE("e2e: stack-trace lines are windowed at the timestamp of the line before") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name      = "trace"
kind      = "alert"
threshold = "3 per 10s"
  [[rule.event]]
  name  = "frame"
  match = '^\s+at '
)");
  // Three frames at 10:00:00 make 3 in the window: alert at 10:00:00. Three
  // more at 10:00:20 (the first three have left the window, and the default
  // cooldown, the window, has passed): a second alert at 10:00:20.
  const std::string input =
      "2026-11-21T10:00:00Z ERROR boom\n"
      "\tat a.B.c(B.java:1)\n"
      "\tat a.B.d(B.java:2)\n"
      "\tat a.B.e(B.java:3)\n"
      "2026-11-21T10:00:20Z ERROR boom again\n"
      "\tat a.B.c(B.java:1)\n"
      "\tat a.B.d(B.java:2)\n"
      "\tat a.B.e(B.java:3)\n";
  RunResult r = swt({"-r", rules, "--format", "json"}, input);
  CHECK(r.exit_status == 0);
  check_records(
      r.out,
      {
          R"J({"type":"alert","time":"2026-11-21T10:00:00.000Z","rule":"trace","key":"","window":"10s","threshold":3,
          "count":3,"counts":{"frame":3},"suppressed":0,"line":"\tat a.B.e(B.java:3)"})J",
          R"J({"type":"alert","time":"2026-11-21T10:00:20.000Z","rule":"trace","key":"","window":"10s","threshold":3,
          "count":3,"counts":{"frame":3},"suppressed":0,"line":"\tat a.B.e(B.java:3)"})J",
      });
  CHECK(stats_of(swt({"-r", rules, "--stats"}, input).err)["untimed"] == 0);
}

TEST_CASE("e2e: late lines: a throttle decides them at now, an alert ignores them") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name      = "t"
kind      = "throttle"
threshold = "1 per 10s"
  [[rule.event]]
  name  = "e"
  match = 'ERR'

[[rule]]
name      = "a"
kind      = "alert"
threshold = "2 per 10s"
  [[rule.event]]
  name  = "e"
  match = 'ERR'
)");
  const std::string input =
      "2026-11-21T10:00:30Z ERR one\n"     // t passes; a counts 1
      "2026-11-21T10:00:10Z ERR late\n"    // older than the window 10:00:21..30: late. t decides it at now:
                                           // suppressed, first = 10:00:30 (now). a: not added, not evaluated
      "2026-11-21T10:00:25Z ERR older\n";  // inside the window, its own bucket. t: suppressed at its own
                                           // time: first 10:00:25, the earliest. a: 2 in window: alert, at now
  RunResult r = swt({"-r", rules, "--format", "json", "--stats"}, input);
  CHECK(r.exit_status == 0);
  check_records(
      r.out,
      {
          R"({"type":"line","time":"2026-11-21T10:00:30.000Z","line":"2026-11-21T10:00:30Z ERR one","rule":"t"})",
          R"({"type":"alert","time":"2026-11-21T10:00:30.000Z","rule":"a","key":"","window":"10s","threshold":2,
          "count":2,"counts":{"e":2},"suppressed":0,"line":"2026-11-21T10:00:25Z ERR older"})",
          R"({"type":"summary","time":"2026-11-21T10:00:30.000Z","rule":"t","key":"","window":"10s","threshold":1,
          "suppressed":2,"first":"2026-11-21T10:00:25.000Z","last":"2026-11-21T10:00:30.000Z","counts":{"e":2}})",
      });
  CHECK(stats_of(r.err, "t")["late"] == 1);
  CHECK(stats_of(r.err, "a")["late"] == 1);
  CHECK(stats_of(r.err, "a")["events"] == 2);
}

TEST_CASE("e2e: ignore keeps lines from counting for a rule") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name      = "a"
kind      = "alert"
threshold = "2 per 10s"
ignore    = 'user=healthcheck\b'
  [[rule.event]]
  name  = "f"
  match = 'login failed user=(?P<user>\w+)'

[[rule]]
name      = "t"
kind      = "throttle"
threshold = "10 per 10s"
ignore    = 'healthcheck'
  [[rule.event]]
  name  = "f"
  match = 'login failed'
)");
  // Without ignore, a would alert at 10:00:01 and t would write all four.
  const std::string input =
      "2026-11-21T10:00:00Z login failed user=healthcheck\n"
      "2026-11-21T10:00:01Z login failed user=healthcheck\n"
      "2026-11-21T10:00:02Z login failed user=alice\n"  // a: 1; t passes it
      "2026-11-21T10:00:03Z login failed user=bob\n";   // a: 2: alert; t passes it
  RunResult r = swt({"-r", rules, "--format", "json"}, input);
  CHECK(r.exit_status == 0);
  check_records(
      r.out,
      {
          R"({"type":"line","time":"2026-11-21T10:00:02.000Z","line":"2026-11-21T10:00:02Z login failed user=alice",
          "rule":"t"})",
          R"({"type":"line","time":"2026-11-21T10:00:03.000Z","line":"2026-11-21T10:00:03Z login failed user=bob",
          "rule":"t"})",
          R"({"type":"alert","time":"2026-11-21T10:00:03.000Z","rule":"a","key":"","window":"10s","threshold":2,
          "count":2,"counts":{"f":2},"suppressed":0,"line":"2026-11-21T10:00:03Z login failed user=bob"})",
      });
}

TEST_CASE("e2e: max_keys evicts the least recently updated key and counts it") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name      = "k"
kind      = "alert"
threshold = "100 per 1m"
key       = "{u}"
max_keys  = 2
  [[rule.event]]
  name  = "e"
  match = 'u=(?P<u>\w+)'
)");
  // a, b fill the 2 keys; c evicts a (least recently updated); b is touched
  // again, so d evicts c.
  RunResult r = swt({"-r", rules, "--stats"},
                    "2026-11-21T10:00:00Z u=a\n2026-11-21T10:00:01Z u=b\n2026-11-21T10:00:02Z u=c\n"
                    "2026-11-21T10:00:03Z u=b\n2026-11-21T10:00:04Z u=d\n");
  CHECK(r.exit_status == 0);
  auto k = stats_of(r.err, "k");
  CHECK(k["evicted"] == 2);
  CHECK(k["keys"] == 2);
  CHECK(k["events"] == 5);
}

TEST_CASE("e2e: several input files share the rules' windows, accurate mode keeps the limit exact") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name      = "t"
kind      = "throttle"
threshold = "5 per 1m"
mode      = "accurate"
  [[rule.event]]
  name  = "e"
  match = 'ERR'
)");
  // 10 lines in each file, all inside one window (10:00:00 starts a 6 s
  // bucket; the window at 10:00:09 reaches back to 09:59:06). Decided
  // concurrently on one window: exactly 5 pass, 15 are suppressed, and with
  // no room again before the end, one end-of-input summary says 15.
  std::string a, b;
  for (int i = 0; i < 10; ++i) {
    a += ts(i) + " ERR from a " + std::to_string(i) + "\n";
    b += ts(i) + " ERR from b " + std::to_string(i) + "\n";
  }
  RunResult r = swt({"-r", rules, "--format", "json", dir.write("a.log", a), dir.write("b.log", b)});
  CHECK(r.exit_status == 0);
  int lines = 0, summaries = 0;
  long suppressed = 0;
  for (const Json& rec : records(r.out)) {
    if (rec["type"] == "line") ++lines;
    if (rec["type"] == "summary") {
      ++summaries;
      suppressed += std::stol(rec["suppressed"]);
    }
  }
  CHECK(lines == 5);
  CHECK(summaries == 1);
  CHECK(suppressed == 15);
}

TEST_CASE("e2e: timestamp forms found by timestamp = \"auto\" (DESIGN.md §4)") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"([settings]
time     = "log"
timezone = "UTC"
year     = 2026

[[rule]]
name      = "t"
kind      = "throttle"
threshold = "100 per 1m"
  [[rule.event]]
  name  = "e"
  match = 'ERR'
)");
  const int64_t base = utc_ms(2026, 10, 21, 10, 0, 0);  // 2026-11-21T10:00:00Z
  auto epoch_at = [&](int sec) { return std::to_string(base / 1000 + sec); };
  // Each line's record is written at now = its own time, since the times rise.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"2026-11-21T10:00:00Z ERR rfc3339", "2026-11-21T10:00:00.000Z"},
      {"2026-11-21 10:00:01,250 ERR space, comma fraction, no offset: UTC", "2026-11-21T10:00:01.250Z"},
      {"2026-11-21T12:00:02.5+02:00 ERR offset", "2026-11-21T10:00:02.500Z"},
      {"Nov 21 10:00:03 host ERR syslog, year from settings", "2026-11-21T10:00:03.000Z"},
      {epoch_at(4) + " ERR epoch seconds", "2026-11-21T10:00:04.000Z"},
      {epoch_at(5) + "500 ERR epoch milliseconds (13 digits)", "2026-11-21T10:00:05.500Z"},
      {epoch_at(6) + ".75 ERR epoch seconds with a fraction", "2026-11-21T10:00:06.750Z"},
      {"host - - [21/Nov/2026:10:00:07 +0000] \"GET / HTTP/1.1\" ERR clf", "2026-11-21T10:00:07.000Z"},
      // an epoch number counts only at the very start: no timestamp, so the last one (10:00:07)
      {"ERR at " + epoch_at(8) + " is not a timestamp", "2026-11-21T10:00:07.000Z"},
      // the leftmost timestamp wins
      {"Nov 21 10:00:09 host app: 2026-11-21T09:00:00Z ERR two stamps", "2026-11-21T10:00:09.000Z"},
  };
  std::string input;
  for (const auto& c : cases) input += c.first + "\n";
  RunResult r = swt({"-r", rules, "--format", "json"}, input);
  CHECK(r.exit_status == 0);
  std::vector<Json> recs = records(r.out);
  REQUIRE(recs.size() == cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(cases[i].first);
    CHECK(recs[i]["line"] == cases[i].first);
    CHECK(recs[i]["time"] == cases[i].second);
  }

  // timezone "+02:00" and "local" (the TZ of the process) for stamps without an offset.
  const std::string plus2 = dir.write("plus2.toml", R"([settings]
time     = "log"
timezone = "+02:00"
[[rule]]
name      = "t"
kind      = "throttle"
threshold = "100 per 1m"
  [[rule.event]]
  name  = "e"
  match = 'ERR'
)");
  std::vector<Json> p = records(swt({"-r", plus2, "--format", "json"}, "2026-11-21 12:00:00 ERR\n").out);
  REQUIRE(p.size() == 1);
  CHECK(p[0]["time"] == "2026-11-21T10:00:00.000Z");

  const std::string local = dir.write("local.toml", R"([settings]
time     = "log"
timezone = "local"
[[rule]]
name      = "t"
kind      = "throttle"
threshold = "100 per 1m"
  [[rule.event]]
  name  = "e"
  match = 'ERR'
)");
  // POSIX TZ "XYZ+3" is 3 hours behind UTC: local 07:00 is 10:00Z.
  RunResult l = swthrottle::test::run_process({kBinary, "-r", local, "--format", "json"}, "2026-11-21 07:00:00 ERR\n",
                                              std::chrono::seconds(20), {{"TZ", "XYZ+3"}});
  std::vector<Json> lr = records(l.out);
  REQUIRE(lr.size() == 1);
  CHECK(lr[0]["time"] == "2026-11-21T10:00:00.000Z");
}

TEST_CASE("e2e: syslog timestamps without settings.year take the current year, or the previous one") {
  // DESIGN.md §4: "the current year, or the previous one if that would put the
  // time more than a day ahead". Each case is a moment built from the test's
  // own clock; its month, day and time are written as a syslog stamp, and
  // the expected year follows from how far the moment is from now.
  TempDir dir;
  // max_future off: "12 hours ahead" is about the year, not trusted time.
  const std::string rules = dir.write("rules.toml", R"([settings]
time       = "log"
timezone   = "UTC"
max_future = "off"
[[rule]]
name      = "t"
kind      = "throttle"
threshold = "100 per 1m"
  [[rule.event]]
  name  = "e"
  match = 'ERR'
)");
  const int64_t now = static_cast<int64_t>(std::time(nullptr)) * 1000;
  const int64_t day = 86'400'000;
  struct Case {
    const char* what;
    int64_t offset;  // from now
    bool previous_year;
  };
  for (const Case& c : {Case{"30 days ago", -30 * day, false}, Case{"12 hours ahead", day / 2, false},
                        Case{"2 days ahead", 2 * day, true}}) {
    CAPTURE(c.what);
    const std::time_t secs = static_cast<std::time_t>((now + c.offset) / 1000);
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    if (tm.tm_mon == 1 && tm.tm_mday == 29) continue;  // Feb 29 has no twin in the year before
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%b %e %H:%M:%S", &tm);
    const int year = tm.tm_year + 1900 - (c.previous_year ? 1 : 0);
    const std::string want = rfc3339(utc_ms(year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec));
    std::vector<Json> recs = records(swt({"-r", rules, "--format", "json"}, std::string(stamp) + " host ERR\n").out);
    REQUIRE(recs.size() == 1);
    CHECK(recs[0]["time"] == want);
  }
}

TEST_CASE("e2e: trusted time: a line from 2099 and a lone jump in a replay move nothing, and say so") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"([settings]
time     = "log"
timezone = "UTC"
[[rule]]
name      = "burst"
kind      = "alert"
threshold = "2 per 10s"
  [[rule.event]]
  name  = "fail"
  match = 'FAIL'
)");
  // A live log: stamps of the last minute, and one from a broken clock.
  const int64_t now = static_cast<int64_t>(std::time(nullptr)) * 1000;
  const std::string live = rfc3339(now - 20'000) + " FAIL a\n2099-01-01T00:00:00Z INFO clock broken\n" +
                           rfc3339(now - 10'000) + " FAIL b\n" + rfc3339(now - 9'000) + " FAIL c\n";
  RunResult r = swt({"-r", rules, "--format", "json", "--stats"}, live);
  CHECK(r.exit_status == 0);
  std::vector<Json> recs = records(r.out);
  REQUIRE(recs.size() == 1);
  CHECK(recs[0]["type"] == "alert");
  CHECK(recs[0]["time"] == rfc3339(now - 9'000));
  CHECK(stats_of(r.err)["untrusted"] == 1);
  CHECK(stats_of(r.err, "burst")["late"] == 0);
  CHECK(r.err.find("swthrottle: (standard input): line 2: timestamp 2099-01-01T00:00:00.000Z is more than 1m ahead "
                   "of the wall clock (") != std::string::npos);
  CHECK(r.err.find("the line is decided at " + rfc3339(now - 20'000) + ": 2099-01-01T00:00:00Z INFO clock broken\n") !=
        std::string::npos);

  // A replay of an old file: a lone line a week ahead.
  const std::string old = dir.write("old.log",
                                    "2024-03-01T10:00:00Z FAIL a\n"
                                    "2024-03-09T10:00:00Z INFO clock jumped\n"
                                    "2024-03-01T10:00:05Z FAIL b\n");
  r = swt({"-r", rules, "--stats", old});
  CHECK(r.out ==
        "swthrottle: alert burst count=2 threshold=2 window=10s suppressed=0 time=2024-03-01T10:00:05.000Z: "
        "2024-03-01T10:00:05Z FAIL b\n");
  CHECK(stats_of(r.err)["untrusted"] == 1);
  CHECK(r.err.find("swthrottle: " + old +
                   ": line 2: timestamp 2024-03-09T10:00:00.000Z jumps more than 1d ahead of this input's times") !=
        std::string::npos);
  // Off: the line is taken, and the next one is late.
  const std::string trusting = dir.write("trusting.toml", "[settings]\nmax_jump = \"off\"\n");
  r = swt({"-r", rules, "-r", trusting, "--stats", old});
  CHECK(r.out.empty());
  CHECK(stats_of(r.err)["untrusted"] == 0);
  CHECK(stats_of(r.err, "burst")["late"] == 1);
  // --check shows a bound that is not the default; a bound must be a duration or "off".
  CHECK(swt({"-r", rules, "-r", trusting, "--check"}).out.find("timezone UTC, max_jump off\n") != std::string::npos);
  const std::string bad = dir.write("bad.toml", "[settings]\nmax_future = 60\n");
  r = swt({"-r", bad, "--check"});
  CHECK(r.exit_status == 2);
  CHECK(r.err.find("max_future must be a duration such as \"1m\" or \"1d\", or \"off\", not 60") != std::string::npos);
}

TEST_CASE("e2e: timezone = local: the hour repeated when DST ends is read as its second pass, not late") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"([settings]
time = "log"
[[rule]]
name      = "burst"
kind      = "alert"
threshold = "3 per 10s"
cooldown  = "0"
  [[rule.event]]
  name  = "fail"
  match = 'FAIL'
)");
  // Europe/Berlin, 2026-10-25: 03:00 CEST is followed by 02:00 CET.
  const std::string log = dir.write("dst.log",
                                    "2026-10-25 02:59:58 FAIL a\n"
                                    "2026-10-25 02:00:03 FAIL b\n"
                                    "2026-10-25 02:00:04+02:00 FAIL c\n"
                                    "2026-10-25 02:00:06 FAIL d\n");
  for (const char* j : {"1", "2"}) {
    CAPTURE(j);
    const RunResult r = swthrottle::test::run_process({SWTHROTTLE_BINARY, "-r", rules, "--stats", "-j", j, log}, "",
                                                      swthrottle::test::kDefaultTimeout, {{"TZ", "Europe/Berlin"}});
    CHECK(r.exit_status == 0);
    CHECK(r.out ==
          "swthrottle: alert burst count=3 threshold=3 window=10s suppressed=0 time=2026-10-25T01:00:06.000Z: "
          "2026-10-25 02:00:06 FAIL d\n");
    CHECK(stats_of(r.err, "burst")["late"] == 1);  // c: its own offset is kept
  }
}

// ================================================================================
// Real corpus replays (tests/data/loghub), against independent models
// ================================================================================

TEST_CASE("e2e: OpenSSH_2k: failed passwords per IP, 5 per 1m, cooldown 1m") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"([settings]
time     = "log"
timezone = "UTC"
year     = 2025  # a past year: Dec 10 2026 is ahead of the clock, not trusted

[[rule]]
name      = "ssh-failed"
kind      = "alert"
threshold = "5 per 1m"
key       = "{ip}"
cooldown  = "1m"
  [[rule.event]]
  name  = "failed"
  match = 'Failed password for (?:invalid user )?\S+ from (?P<ip>[0-9a-fA-F.:]+)'
)");
  // The model: every line's syslog time moves now; a line the pattern finds
  // (matched by hand, below) counts one event for its address.
  std::vector<ModelLine> lines;
  for (const std::string& l : file_lines(loghub("OpenSSH_2k.log"))) {
    ModelLine m;
    m.t = syslog_ms(l, 2025);
    if (std::optional<std::string> ip = ssh_failed_ip(l)) {
      m.matched = true;
      m.key = *ip;
    }
    lines.push_back(std::move(m));
  }
  REQUIRE(lines.size() == 2000);
  const AlertModel model{6000, 10, 5, 60000};  // 1m in 10 buckets of 6 s
  const AlertModel::Result want = model.run(lines);
  // grep -c 'Failed password' says 520, but one of them is "Failed password
  // for invalid user  0101 from" (two spaces): the pattern does not match it.
  REQUIRE(want.matched == 519);
  REQUIRE(want.alerts.size() >= 10);

  RunResult r = swt({"-r", rules, "--format", "json", "--stats", loghub("OpenSSH_2k.log")});
  CHECK(r.exit_status == 0);
  std::vector<std::pair<std::string, std::string>> got;
  for (const Json& rec : records(r.out)) {
    CHECK(rec["type"] == "alert");
    CHECK(rec["rule"] == "ssh-failed");
    got.emplace_back(rec["key"], rec["time"]);
  }
  CHECK(as_text(got) == as_text(want.alerts));
  auto rs = stats_of(r.err, "ssh-failed");
  CHECK(rs["lines"] == static_cast<long>(want.matched));
  CHECK(rs["late"] == static_cast<long>(want.late));
  CHECK(rs["alerts"] == static_cast<long>(want.alerts.size()));
}

TEST_CASE("e2e: Apache_2k: [error] lines throttled with a custom timestamp") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"([settings]
time      = "log"
timezone  = "UTC"
timestamp = { match = '^\[(.*?)\]', format = "%a %b %d %H:%M:%S %Y" }

[[rule]]
name      = "apache-errors"
kind      = "throttle"
threshold = "3 per 1m"
  [[rule.event]]
  name  = "error"
  match = '\[error\]'
)");
  std::vector<std::pair<int64_t, std::string>> lines;
  for (const std::string& l : file_lines(loghub("Apache_2k.log"))) lines.emplace_back(apache_ms(l), l);
  REQUIRE(lines.size() == 2000);
  // The log steps back by a second or two in places: those lines fall into
  // their own (older) bucket, as the model does.
  const ThrottleModel model{6000, 10, 3};
  const ThrottleModel::Result want =
      model.run(lines, [](const std::string& l) { return l.find("[error]") != std::string::npos; });
  REQUIRE(want.matched == 595);  // grep -c '\[error\]'
  REQUIRE(want.suppressed > 0);

  RunResult r = swt({"-r", rules, "--format", "json", "-j", "1", loghub("Apache_2k.log")});
  CHECK(r.exit_status == 0);
  std::vector<std::string> passed;
  uint64_t suppressed = 0, summaries = 0;
  for (const Json& rec : records(r.out)) {
    if (rec["type"] == "line") {
      CHECK(rec["rule"] == "apache-errors");
      passed.push_back(rec["line"]);
    } else {
      CHECK(rec["type"] == "summary");
      CHECK(std::stoul(rec["suppressed"]) > 0);
      suppressed += std::stoul(rec["suppressed"]);
      ++summaries;
    }
  }
  CHECK(as_text(passed) == as_text(want.passed));
  CHECK(suppressed == want.suppressed);
  CHECK(passed.size() + suppressed == 595);
  CHECK(summaries > 0);

  // One input is decided in input order whatever -j is (DESIGN.md §3).
  RunResult r4 = swt({"-r", rules, "--format", "json", "-j", "4", loghub("Apache_2k.log")});
  CHECK(r4.exit_status == 0);
  CHECK(r4.out == r.out);
  // ... and read from standard input the same as from a file.
  RunResult rin = swt({"-r", rules, "--format", "json"}, swthrottle::test::read_file(loghub("Apache_2k.log")));
  CHECK(rin.out == r.out);
}

TEST_CASE("e2e: Linux_2k: authentication failures per rhost and kernel lines") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"([settings]
time     = "log"
timezone = "UTC"
year     = 2026

[[rule]]
name      = "auth"
kind      = "alert"
threshold = "5 per 1m"
key       = "{rhost}"
cooldown  = "1m"
  [[rule.event]]
  name  = "failure"
  match = 'authentication failure;.* rhost=(?P<rhost>\S*)'

[[rule]]
name      = "kernel"
kind      = "alert"
threshold = "100000 per 1m"
  [[rule.event]]
  name  = "k"
  match = 'kernel:'
)");
  std::vector<ModelLine> auth, kernel;
  for (const std::string& l : file_lines(loghub("Linux_2k.log"))) {
    ModelLine a, k;
    a.t = k.t = syslog_ms(l, 2026);
    if (std::optional<std::string> rhost = auth_failure_rhost(l)) {
      a.matched = true;
      a.key = *rhost;
    }
    k.matched = l.find("kernel:") != std::string::npos;
    auth.push_back(std::move(a));
    kernel.push_back(std::move(k));
  }
  REQUIRE(auth.size() == 2000);
  const AlertModel::Result want_auth = AlertModel{6000, 10, 5, 60000}.run(auth);
  const AlertModel::Result want_kernel = AlertModel{6000, 10, 100000, 60000}.run(kernel);
  REQUIRE(want_auth.matched == 490);  // grep -c 'authentication failure'
  REQUIRE(want_auth.alerts.size() >= 5);
  REQUIRE(want_kernel.matched == 76);  // grep -c 'kernel:'

  RunResult r = swt({"-r", rules, "--format", "json", "--stats", loghub("Linux_2k.log")});
  CHECK(r.exit_status == 0);
  std::vector<std::pair<std::string, std::string>> got;
  for (const Json& rec : records(r.out)) {
    CHECK(rec["type"] == "alert");
    CHECK(rec["rule"] == "auth");
    got.emplace_back(rec["key"], rec["time"]);
  }
  CHECK(as_text(got) == as_text(want_auth.alerts));
  auto a = stats_of(r.err, "auth");
  CHECK(a["lines"] == 490);
  CHECK(a["events"] == static_cast<long>(want_auth.events));
  CHECK(a["late"] == static_cast<long>(want_auth.late));
  auto k = stats_of(r.err, "kernel");
  CHECK(k["lines"] == 76);
  CHECK(k["events"] == static_cast<long>(want_kernel.events));
  CHECK(k["late"] == static_cast<long>(want_kernel.late));
  CHECK(k["alerts"] == 0);
  CHECK(stats_of(r.err)["lines"] == 2000);
}

// ================================================================================
// --check, rules errors, command line
// ================================================================================

TEST_CASE("e2e: --check prints a summary of valid rules and exits 0 without reading input") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name      = "ssh-bruteforce"
kind      = "alert"
threshold = "5 per 1m"
key       = "{ip}"
  [[rule.event]]
  name  = "failed"
  match = 'Failed password .* from (?P<ip>\S+)'

[[rule]]
name      = "app-errors"
kind      = "throttle"
threshold = "3 per 10s"
  [[rule.event]]
  name  = "error"
  match = 'ERROR'
)");
  RunResult r = swt({"-r", rules, "--check"}, "2026-11-21T10:00:00Z ERROR not read\n");
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  CHECK(r.out.find("ssh-bruteforce") != std::string::npos);
  CHECK(r.out.find("app-errors") != std::string::npos);
  CHECK(r.out.find("not read") == std::string::npos);
  // The literals lines are searched for before RE2, quoted as JSON strings.
  CHECK(r.out.find("\nprefilter: 3 literals: ") != std::string::npos);
  for (const char* atom : {"\"failed password \"", "\" from \"", "\"error\""}) {
    CAPTURE(atom);
    CHECK(r.out.find(atom) != std::string::npos);
  }

  // A pattern without a literal every match contains: every line goes to RE2.
  const std::string digits = dir.write("digits.toml", R"(
[[rule]]
name = "numbers"
kind = "throttle"
threshold = "3 per 10s"
  [[rule.event]]
  name = "n"
  match = '[0-9]+ ms'
[[rule]]
name = "any"
kind = "throttle"
threshold = "3 per 10s"
  [[rule.event]]
  name = "n"
  match = '\bKO\b'
)");
  r = swt({"-r", digits, "--check"});
  CHECK(r.exit_status == 0);
  CHECK(r.out.find("\nprefilter: off: pattern '\\bKO\\b' has no literal of 3 bytes or more that every match "
                   "contains\n2 rules OK\n") != std::string::npos);
}

TEST_CASE("e2e: a bad rules file exits 2 with FILE:LINE:COL on stderr and nothing on stdout") {
  TempDir dir;
  struct Case {
    const char* name;
    std::string rules;
    std::string where;     // ":LINE:COL: " after the file name
    std::string contains;  // a part of the message
  };
  const std::string event = "  [[rule.event]]\n  name  = \"e\"\n  match = 'x'\n";
  const std::vector<Case> cases = {
      // Line 4: treshold starts in column 1; "threshold" is one edit away.
      {"unknown key", "[[rule]]\nname = \"r\"\nkind = \"alert\"\ntreshold = \"5 per 1m\"\n" + event,
       ":4:1: ", "(did you mean \"threshold\"?)"},
      // Line 7: match = 'x[a' -- the quote is column 9, the pattern starts at 10, the
      // unclosed "[" (RE2's error argument) at 11.
      {"bad regex",
       "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"5 per 1m\"\n  [[rule.event]]\n"
       "  name  = \"e\"\nmatch = 'x[a'\n",
       ":7:11: ", "invalid regex 'x[a'"},
      // Line 5: cooldown = "10x" -- the quote is column 12, "x" the 3rd character after it.
      {"bad duration",
       "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"5 per 1m\"\ncooldown = \"10x\"\n" + event,
       ":5:15: ", "invalid duration \"10x\": unknown unit \"x\""},
      // Line 5: when = "eror > 1" -- the quote is column 8, "eror" starts at 9.
      {"when names an unknown event",
       "[[rule]]\nname = \"r\"\nkind = \"alert\"\nwindow = \"1m\"\nwhen = \"eror > 1\"\n  [[rule.event]]\n"
       "  name  = \"error\"\n  match = 'x'\n",
       ":5:9: ", "unknown event \"eror\""},
      // Line 7: a lookahead, which RE2 does not support; the "(?=" starts at column 10.
      {"lookaround",
       "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"5 per 1m\"\n  [[rule.event]]\n"
       "  name  = \"e\"\nmatch = '(?=x)y'\n",
       ":7:10: ", "(?="},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string path = dir.write("bad.toml", c.rules);
    for (const bool check : {false, true}) {
      std::vector<std::string> args{"-r", path};
      if (check) args.push_back("--check");
      RunResult r = swt(args, "x\n");
      CHECK(r.exit_status == 2);
      CHECK(r.out == "");
      CHECK_MESSAGE(r.err.find(path + c.where) != std::string::npos, r.err);
      CHECK_MESSAGE(r.err.find(c.contains) != std::string::npos, r.err);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one message, one line
    }
  }
}

TEST_CASE("e2e: command line: --help, --version, usage errors, missing files") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"(
[[rule]]
name      = "t"
kind      = "throttle"
threshold = "5 per 1m"
  [[rule.event]]
  name  = "e"
  match = 'ERR'
)");
  RunResult help = swt({"--help"});
  CHECK(help.exit_status == 0);
  for (const char* opt : {"--rule", "--follow", "--from-start", "--time", "--mode", "--format", "--passthrough",
                          "--exec", "--exec-jobs", "--exec-timeout", "--state", "--threads", "--check", "--explain",
                          "--stats", "--exit-code", "--version", "--max-line"}) {
    CAPTURE(opt);
    CHECK(help.out.find(opt) != std::string::npos);
  }

  RunResult version = swt({"--version"});
  CHECK(version.exit_status == 0);
  CHECK(version.out.rfind("swthrottle ", 0) == 0);
  CHECK(version.out.find_first_of("0123456789") != std::string::npos);

  RunResult unknown = swt({"-r", rules, "--bogus"});
  CHECK(unknown.exit_status == 2);
  CHECK(unknown.out == "");
  CHECK(unknown.err.find("--bogus") != std::string::npos);

  RunResult no_rules = swt({}, "ERR\n");
  CHECK(no_rules.exit_status == 2);
  CHECK(no_rules.out == "");
  CHECK(no_rules.err != "");

  const std::string missing_rules = dir.file("no-such-rules.toml");
  RunResult mr = swt({"-r", missing_rules}, "ERR\n");
  CHECK(mr.exit_status == 2);
  CHECK(mr.out == "");
  CHECK(mr.err.find(missing_rules) != std::string::npos);

  const std::string missing_input = dir.file("no-such.log");
  RunResult mi = swt({"-r", rules, missing_input});
  CHECK(mi.exit_status == 2);
  CHECK(mi.out == "");
  CHECK(mi.err.find(missing_input) != std::string::npos);

  // A directory cannot be read as a log: an input error naming it.
  RunResult d = swt({"-r", rules, dir.path()});
  CHECK(d.exit_status == 2);
  CHECK(d.err.find(dir.path()) != std::string::npos);

  RunResult bad_format = swt({"-r", rules, "--format", "xml"}, "ERR\n");
  CHECK(bad_format.exit_status == 2);
  CHECK(bad_format.out == "");

  RunResult bad_interval = swt({"-r", rules, "--state-interval", "soon"}, "ERR\n");
  CHECK(bad_interval.exit_status == 2);
  CHECK(bad_interval.out == "");
  CHECK(bad_interval.err.rfind("swthrottle: --state-interval: ", 0) == 0);
}

TEST_CASE("e2e: an unknown option gets a did-you-mean, exit 2, even before the missing --rule") {
  const std::string try_help = "Try 'swthrottle --help' for more information.\n";
  RunResult typo = swt({"--folow"});
  CHECK(typo.exit_status == 2);
  CHECK(typo.out == "");
  CHECK(typo.err == "swthrottle: unknown option --folow (did you mean --follow?)\n" + try_help);

  RunResult with_value = swt({"-r", "rules.toml", "--state-wiat=1s"});
  CHECK(with_value.exit_status == 2);
  CHECK(with_value.err == "swthrottle: unknown option --state-wiat=1s (did you mean --state-wait?)\n" + try_help);

  RunResult far = swt({"-r", "rules.toml", "--nosuch"});
  CHECK(far.exit_status == 2);
  CHECK(far.err == "swthrottle: unknown option --nosuch\n" + try_help);
}

TEST_CASE("e2e: --help shows value types, defaults, exit statuses, every signal and examples") {
  RunResult help = swt({"--help"});
  CHECK(help.exit_status == 0);
  for (const char* part : {"--state-wait DUR", "--format text|json", "--time arrival|log", "--max-line SIZE",
                           "--exec-jobs N", "-j,--threads N", "--exec CMD", "--state FILE", "(default 1m; 0, forever)",
                           "(default 30s)", "INT, TERM:", "HUP:", "USR1:", "3 an exec command gave up", "4 the --state",
                           "tail -F /var/log/app.log | swthrottle -r rules.toml", "--time log --format json app.log"}) {
    CAPTURE(part);
    CHECK(help.out.find(part) != std::string::npos);
  }
  RunResult bad = swt({"-r", "rules.toml", "--state-wait", "soon"});
  CHECK(bad.exit_status == 2);
  CHECK(bad.err == "swthrottle: --state-wait: invalid duration \"soon\" (e.g. 0, 200ms, 1m, forever)\n");
}

TEST_CASE("e2e: an unreadable input file exits 2 naming it") {
  if (::geteuid() == 0) {
    MESSAGE("skipped: running as root, which can read a file with mode 000");
    return;
  }
  TempDir dir;
  const std::string rules = dir.write("rules.toml",
                                      "[[rule]]\nname = \"t\"\nkind = \"throttle\"\nthreshold = \"5 per 1m\"\n"
                                      "  [[rule.event]]\n  name = \"e\"\n  match = 'ERR'\n");
  const std::string log = dir.write("secret.log", "ERR\n");
  REQUIRE(::chmod(log.c_str(), 0) == 0);
  RunResult r = swt({"-r", rules, log});
  CHECK(r.exit_status == 2);
  CHECK(r.out == "");
  CHECK(r.err.find(log) != std::string::npos);
}

TEST_CASE("e2e: --exit-code is 0 when no alert was raised") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name      = "a"
kind      = "alert"
threshold = "2 per 10s"
  [[rule.event]]
  name  = "e"
  match = 'ERR'
)");
  // One ERR in the window: the condition never holds.
  RunResult r = swt({"-r", rules, "--exit-code"}, "2026-11-21T10:00:00Z ERR\n2026-11-21T10:00:30Z ERR\n");
  CHECK(r.exit_status == 0);
  CHECK(r.out == "");
  RunResult a = swt({"-r", rules, "--exit-code"}, "2026-11-21T10:00:00Z ERR\n2026-11-21T10:00:01Z ERR\n");
  CHECK(a.exit_status == 1);
}

TEST_CASE("e2e: --explain shows events, captures, key, counts and decision for matching lines only") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name      = "ssh"
kind      = "alert"
threshold = "2 per 1m"
key       = "{ip}"
  [[rule.event]]
  name  = "failed"
  match = 'Failed password for (?:invalid user )?\S+ from (?P<ip>[0-9.]+)'

[[rule]]
name      = "accepted"
kind      = "throttle"
threshold = "1 per 1m"
  [[rule.event]]
  name  = "ok"
  match = 'Accepted password'
)");
  const std::string input =
      "2026-11-21T10:00:00Z sshd: Failed password for root from 10.1.1.1 port 22\n"            // ssh: 1, no alert
      "2026-11-21T10:00:01Z sshd: Accepted password for bob from 10.2.2.2 port 22\n"           // accepted: passed
      "2026-11-21T10:00:02Z sshd: Failed password for invalid user x from 10.1.1.1 port 22\n"  // ssh: 2: alert
      "2026-11-21T10:00:03Z sshd: session closed\n";                                           // matches nothing
  RunResult r = swt({"-r", rules, "--explain"}, input);
  CHECK(r.exit_status == 0);
  const std::string& out = r.out;
  // One explanation per matching line.
  std::vector<std::size_t> at;
  for (std::size_t p = out.find("explain: "); p != std::string::npos; p = out.find("explain: ", p + 1)) at.push_back(p);
  REQUIRE(at.size() == 3);
  at.push_back(out.size());
  const std::string first = out.substr(at[0], at[1] - at[0]);
  const std::string second = out.substr(at[1], at[2] - at[1]);
  const std::string third = out.substr(at[2], at[3] - at[2]);
  CHECK(out.find("session closed") == std::string::npos);

  CHECK(first.find("Failed password for root") != std::string::npos);
  CHECK(first.find("ssh") != std::string::npos);
  CHECK(first.find("failed") != std::string::npos);        // the event
  CHECK(first.find("ip=10.1.1.1") != std::string::npos);   // the capture
  CHECK(first.find("\"10.1.1.1\"") != std::string::npos);  // the key
  CHECK(first.find("failed=1") != std::string::npos);      // the count
  CHECK(first.find("alert") == std::string::npos);

  CHECK(second.find("accepted") != std::string::npos);
  CHECK(second.find("passed") != std::string::npos);

  CHECK(third.find("failed=2") != std::string::npos);
  CHECK(third.find("alert") != std::string::npos);
  // The records are still written: the passed line and the alert.
  CHECK(out.find("\n2026-11-21T10:00:01Z sshd: Accepted password for bob from 10.2.2.2 port 22\n") !=
        std::string::npos);
  CHECK(out.find("swthrottle: alert ssh key=10.1.1.1 count=2") != std::string::npos);
}

// ================================================================================
// DESIGN.md §7: bad input
// ================================================================================

TEST_CASE("e2e: invalid UTF-8, NUL bytes, CRLF and a last line without newline") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"(
[[rule]]
name      = "t"
kind      = "throttle"
threshold = "100 per 1m"
  [[rule.event]]
  name  = "e"
  match = '^ERR'

[[rule]]
name      = "crlf"
kind      = "alert"
threshold = "1 per 1m"
  [[rule.event]]
  name  = "c"
  match = 'crlf$'
)");
  using namespace std::string_literals;
  const std::string input =
      "ERR bad \xff here\n"    // a byte that is never UTF-8
      "ERR half \xc3( done\n"  // a lead byte without its continuation
      "ERR nul a\0b\n"s        // a NUL inside the line
      "ERR crlf\r\n"           // \r is not part of the line: crlf$ matches
      "ERR last";              // no final newline: still a line
  // Text: passed lines byte for byte, without the \r, each ending "\n".
  RunResult t = swt({"-r", rules}, input);
  CHECK(t.exit_status == 0);
  // The NUL makes the input look binary: said once on stderr, and every line is read all the same.
  CHECK(t.err == "swthrottle: -: looks binary (a NUL byte in its first " + std::to_string(input.size()) +
                     " bytes); its lines are read and matched as text\n");
  const std::string want_text =
      "ERR bad \xff here\n"
      "ERR half \xc3( done\n"
      "ERR nul a\0b\n"s
      "ERR crlf\n";
  REQUIRE(t.out.size() > want_text.size());
  CHECK(t.out.substr(0, want_text.size()) == want_text);
  // then the alert (after its line), then the last line
  CHECK(t.out.find("swthrottle: alert crlf") == want_text.size());
  CHECK(t.out.substr(t.out.size() - 9) == "ERR last\n");

  // JSON: valid UTF-8 throughout, U+FFFD for each bad sequence, NUL escaped.
  RunResult j = swt({"-r", rules, "--format", "json"}, input);
  CHECK(j.exit_status == 0);
  CHECK(valid_utf8(j.out));
  std::vector<Json> recs = records(j.out);
  REQUIRE(recs.size() == 6);
  CHECK(recs[0]["line"] == "ERR bad \xEF\xBF\xBD here");
  CHECK(recs[1]["line"] == "ERR half \xEF\xBF\xBD( done");
  CHECK(recs[2]["line"] == "ERR nul a\0b"s);
  CHECK(recs[3]["line"] == "ERR crlf");
  CHECK(recs[4]["type"] == "alert");
  CHECK(recs[4]["line"] == "ERR crlf");
  CHECK(recs[5]["line"] == "ERR last");
  for (const Json& rec : recs) CHECK(rec["type"] != "<absent>");
}

TEST_CASE("e2e: control bytes are escaped in text records, passed lines stay byte for byte") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kLogTime + R"(
[[rule]]
name      = "esc"
kind      = "alert"
threshold = "1 per 10s"
key       = "{k}"
message   = "{k} seen"
  [[rule.event]]
  name  = "e"
  match = 'ERR (?P<k>\S+)'

[[rule]]
name      = "raw"
kind      = "alert"
threshold = "1 per 10s"
  [[rule.event]]
  name  = "t"
  match = 'TAB'
)");
  // A log line that would turn the reader's terminal red, and one with a TAB,
  // a backslash, DEL and a C1 control (U+009B, CSI, as UTF-8).
  const std::string line1 = "2026-11-21T10:00:00Z ERR \x1b[31mred\x1b[0m";
  const std::string line2 =
      "2026-11-21T10:00:01Z TAB\there C:\\dir\x7f\xC2\x9B"
      "31m";
  const std::string input = line1 + "\n" + line2 + "\n";

  // Text with --passthrough: each line byte for byte, then its alert (DESIGN.md §3
  // group 3 before group 4), every control character of the alert escaped.
  RunResult t = swt({"-r", rules, "--passthrough"}, input);
  CHECK(t.exit_status == 0);
  CHECK(t.err == "");
  CHECK(t.out == line1 + "\n" +
                     R"(swthrottle: alert esc key=\u001b[31mred\u001b[0m count=1 threshold=1 window=10s )"
                     R"(suppressed=0 time=2026-11-21T10:00:00.000Z: \u001b[31mred\u001b[0m seen)"
                     "\n" +
                     line2 + "\n" +
                     R"(swthrottle: alert raw count=1 threshold=1 window=10s suppressed=0 )"
                     R"(time=2026-11-21T10:00:01.000Z: 2026-11-21T10:00:01Z TAB\there C:\\dir\u007f\u009b31m)"
                     "\n");

  // JSON does not change: the same key, message and lines as raw text.
  RunResult j = swt({"-r", rules, "--format", "json", "--passthrough"}, input);
  CHECK(j.exit_status == 0);
  std::vector<Json> recs = records(j.out);
  REQUIRE(recs.size() == 4);
  CHECK(recs[0]["line"] == line1);
  CHECK(recs[1]["key"] == "\x1b[31mred\x1b[0m");
  CHECK(recs[1]["message"] == "\x1b[31mred\x1b[0m seen");
  CHECK(recs[2]["line"] == line2);
  CHECK(recs[3]["line"] == line2);
  CHECK(j.out.find(R"("key":"\u001b[31mred\u001b[0m")") != std::string::npos);

  // --explain escapes the line, the captures and the key as text records do.
  RunResult x = swt({"-r", rules, "--explain"}, line1 + "\n");
  CHECK(x.exit_status == 0);
  CHECK(x.out.find('\x1b') == std::string::npos);
  CHECK(x.out.rfind(R"(explain: (standard input):1: 2026-11-21T10:00:00Z ERR \u001b[31mred\u001b[0m)"
                    "\n",
                    0) == 0);
  CHECK(x.out.find(R"(; k=\u001b[31mred\u001b[0m; key "\u001b[31mred\u001b[0m")") != std::string::npos);
}

TEST_CASE("e2e: a line longer than --max-line is cut for matching, counted, and memory stays bounded") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"(
[[rule]]
name      = "t"
kind      = "throttle"
threshold = "100 per 1m"
  [[rule.event]]
  name  = "e"
  match = '^START'

[[rule]]
name      = "tail"
kind      = "alert"
threshold = "1 per 1m"
  [[rule.event]]
  name  = "t"
  match = 'TAIL'
)");
  // 24 MiB of 'a' between START and TAIL: with --max-line 64K, TAIL lies far
  // beyond the cut, so the alert rule never sees it. The next line is read
  // as a line of its own.
  const std::string long_line = "START " + std::string(24u << 20, 'a') + " TAIL\n";
  const std::vector<std::string> args{kBinary, "-r", rules, "--max-line", "64K", "--stats"};
  // The peak memory is read while swthrottle still runs, once it has written
  // the record of the last line (it then waits for more input).
  auto run = [&](const std::string& first_line, long& peak_kb) {
    Process p = Process::spawn(args);
    CHECK(p.write_stdin(first_line + "START next\n"));
    CHECK(p.read_stdout_until([](const std::string& out) {
      return out.size() >= 11 && out.compare(out.size() - 11, 11, "START next\n") == 0;
    }));
    peak_kb = p.peak_rss_kb();
    return p.wait();
  };
  long small_kb = 0, long_kb = 0;
  RunResult small = run("START short\n", small_kb);
  RunResult r = run(long_line, long_kb);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_status == 0);
  auto g = stats_of(r.err);
  CHECK(g["lines"] == 2);
  CHECK(g["truncated"] == 1);
  CHECK(stats_of(small.err)["truncated"] == 0);
  CHECK(r.out.find("swthrottle: alert") == std::string::npos);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);
  CHECK(r.out.rfind("START aaaa", 0) == 0);
  // Holding the whole line would take 24 MiB more than the short run.
  CAPTURE(small_kb);
  CAPTURE(long_kb);
  REQUIRE(small_kb > 0);  // /proc is there
  CHECK(long_kb < small_kb + 12 * 1024);
}

TEST_CASE("e2e: empty input: exit 0, no output") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"(
[[rule]]
name      = "t"
kind      = "throttle"
threshold = "1 per 1m"
  [[rule.event]]
  name  = "e"
  match = 'ERR'
)");
  RunResult r = swt({"-r", rules}, "");
  CHECK(r.exit_status == 0);
  CHECK(r.out == "");
  CHECK(r.err == "");
  const std::string empty = dir.write("empty.log", "");
  RunResult f = swt({"-r", rules, "--format", "json", empty});
  CHECK(f.exit_status == 0);
  CHECK(f.out == "");
  CHECK(f.err == "");
}

TEST_CASE("e2e: a closed output pipe ends swthrottle quietly") {
  TempDir dir;
  // A rule that never matches: with --passthrough every line is written.
  const std::string rules = dir.write("rules.toml", R"(
[[rule]]
name      = "never"
kind      = "alert"
threshold = "1 per 1m"
  [[rule.event]]
  name  = "e"
  match = 'no line has this'
)");
  Process p = Process::spawn({kBinary, "-r", rules, "--passthrough"});
  REQUIRE(p.write_stdin("first line\n"));
  REQUIRE(p.read_stdout_lines(1));  // written at once: output is flushed after every record
  CHECK(p.out() == "first line\n");
  p.close_stdout();  // the next program of the pipeline exits

  // Keep feeding: swthrottle must notice EPIPE on its next write and exit,
  // so it stops reading long before 256 MiB of input were offered.
  std::string chunk;
  for (int i = 0; i < 16384; ++i) chunk += "another line to write " + std::to_string(i) + "\n";
  bool accepted = true;
  std::size_t offered = 0;
  while (accepted && offered < (256u << 20)) {
    accepted = p.write_stdin(chunk, std::chrono::seconds(20));
    offered += chunk.size();
  }
  RunResult r = p.wait(std::chrono::seconds(20));
  CHECK_FALSE(r.timed_out);
  CHECK_FALSE(accepted);  // it stopped reading: it ended because of the closed output
  CHECK(r.signal == 0);   // not killed by SIGPIPE
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
}

TEST_CASE("e2e: records do not depend on -j over a replay of many batches (DESIGN.md §3)") {
  // 30,000 sshd lines: the sample replayed 15 times with the day moved on
  // each time, so the replay spans many 2048-line batches and every -j
  // exercises the reader -> workers -> decider pipeline with out-of-order
  // completion. A throttle, a keyed alert with resolve, and a when-rule.
  TempDir dir;
  const std::string sample = swthrottle::test::read_file(loghub("OpenSSH_2k.log"));
  std::string log;
  for (int day = 10; day < 25; ++day) {
    std::string copy = sample;
    for (std::size_t p = copy.find("Dec 10 "); p != std::string::npos; p = copy.find("Dec 10 ", p + 7))
      copy.replace(p, 7, "Dec " + std::to_string(day) + " ");
    log += copy;
    if (log.back() != '\n') log += '\n';
  }
  const std::string logfile = dir.write("big.log", log);
  const std::string rules =
      dir.write("r.toml", kLogTime + R"(year = 2025  # a past year: Dec 2026 is ahead of the clock, not trusted

[[rule]]
name = "noise"
kind = "throttle"
threshold = "3 per 10s"
  [[rule.event]]
  name = "pam"
  match = 'authentication failure'

[[rule]]
name = "brute"
kind = "alert"
threshold = "4 per 1m"
key = "{ip}"
resolve = true
message = "{count} from {ip}"
  [[rule.event]]
  name = "failed"
  match = 'Failed password for (?:invalid user )?\S+ from (?P<ip>[0-9.]+)'

[[rule]]
name = "ratio"
kind = "alert"
window = "5m"
when = "invalid * 2 > failed and failed >= 3"
  [[rule.event]]
  name = "failed"
  match = 'Failed password'
  [[rule.event]]
  name = "invalid"
  match = 'Invalid user'
)");
  const RunResult one = swt({"-r", rules, "--format", "json", "-j", "1", logfile});
  REQUIRE(one.exit_status == 0);
  CHECK(std::count(one.out.begin(), one.out.end(), '\n') > 1000);  // real work: many records
  for (const char* j : {"2", "3", "8"}) {
    CAPTURE(j);
    const RunResult r = swt({"-r", rules, "--format", "json", "-j", j, logfile});
    CHECK(r.exit_status == 0);
    CHECK(r.out == one.out);
  }
  // Through a pipe too (the reader hands batches on as they fill).
  const RunResult piped = swt({"-r", rules, "--format", "json", "-j", "2"}, log);
  CHECK(piped.out == one.out);
  // And with RE2 alone on every line: the literal prefilter changes nothing
  // (it is on for these rules: --check lists its literals).
  CHECK(swt({"-r", rules, "--check"}).out.find("\nprefilter: 5 literals: ") != std::string::npos);
  for (const char* j : {"1", "2"}) {
    CAPTURE(j);
    const RunResult plain =
        swthrottle::test::run_process({SWTHROTTLE_BINARY, "-r", rules, "--format", "json", "-j", j, logfile}, "",
                                      swthrottle::test::kDefaultTimeout, {{"SWTHROTTLE_NO_PREFILTER", "1"}});
    CHECK(plain.exit_status == 0);
    CHECK(plain.out == one.out);
  }
  // And read with read(2) instead of mapped (the log is over 1 MiB, so the
  // runs above read it through a mapping).
  for (const char* j : {"1", "2"}) {
    CAPTURE(j);
    const RunResult copied =
        swthrottle::test::run_process({SWTHROTTLE_BINARY, "-r", rules, "--format", "json", "-j", j, logfile}, "",
                                      swthrottle::test::kDefaultTimeout, {{"SWTHROTTLE_NO_MMAP", "1"}});
    CHECK(copied.exit_status == 0);
    CHECK(copied.out == one.out);
  }
}

TEST_CASE("e2e: arrival time: a line is never late, whatever -j and the timer do") {
  // In arrival time a line is decided at the moment it is read, so it can
  // never be older than the window (DESIGN.md §4). With a 10 ms window of one
  // bucket the timer moves "now" constantly; an early -j pipeline stamped
  // lines when their batch was read and dropped ~17 % of them as late.
  TempDir dir;
  const std::string rules = dir.write("r.toml", R"([settings]
buckets = 1

[[rule]]
name = "x"
kind = "alert"
threshold = "1000000000 per 10ms"
  [[rule.event]]
  name = "x"
  match = 'x'
)");
  std::string input;
  for (int i = 0; i < 300000; ++i) input += "x " + std::to_string(i) + "\n";
  const std::string file = dir.write("in.txt", input);
  for (const char* j : {"1", "2"}) {
    CAPTURE(j);
    const RunResult r = swt({"-r", rules, "--stats", "-j", j, file});
    CHECK(r.exit_status == 0);
    CHECK(r.err.find("rule x: lines 300000 events 300000 alerts 0 resolved 0 suppressed 0 late 0 ") !=
          std::string::npos);
  }
}
