#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <string_view>
#include <thread>

#include "config/rules.h"
#include "engine/record.h"
#include "output/writer.h"
#include "support/rule_fixtures.h"

using swthrottle::config::Rule;
using swthrottle::config::RuleKind;
using swthrottle::engine::Record;
using swthrottle::engine::RecordType;
using swthrottle::output::FdWriter;
using swthrottle::output::Format;
using swthrottle::output::render;

namespace {

using swthrottle::test::kT0;
using swthrottle::test::make_flood;
using swthrottle::test::make_ratio;
using swthrottle::test::make_ssh;

const Rule kSsh = make_ssh();
const Rule kRatio = make_ratio();
const Rule kFlood = make_flood();

Record ssh_alert() {
  Record r;
  r.type = RecordType::Alert;
  r.time_ms = kT0;
  r.rule = &kSsh;
  r.key = "203.0.113.9";
  r.count = 5;
  r.counts = {3, 2};
  r.suppressed = 0;
  r.message = "5 failed logins from 203.0.113.9 within 1m";
  r.has_message = true;
  r.line = "Failed password for root from 203.0.113.9 port 22";
  r.has_line = true;
  return r;
}

Record ratio_alert() {
  Record r;
  r.type = RecordType::Alert;
  r.time_ms = kT0 + 42;
  r.rule = &kRatio;
  r.count = 129;
  r.counts = {120, 9};
  r.suppressed = 3;
  r.line = R"(10.0.0.1 - - "GET /api HTTP/1.1" 502 17)";
  r.has_line = true;
  return r;
}

Record ssh_resolved() {
  Record r;
  r.type = RecordType::Resolved;
  r.time_ms = kT0 + 60'000;
  r.rule = &kSsh;
  r.key = "203.0.113.9";
  r.count = 2;
  r.counts = {2, 0};
  r.suppressed = 1;
  r.message = "2 failed logins from 203.0.113.9 within 1m";
  r.has_message = true;
  r.line = "must not be written for a resolved";
  r.has_line = true;
  return r;
}

Record flood_summary() {
  Record r;
  r.type = RecordType::Summary;
  r.time_ms = kT0 + 5'000;
  r.rule = &kFlood;
  r.suppressed = 42;
  r.counts = {42};  // a one-event rule: every suppressed line was its event
  r.first_ms = kT0 + 123;
  r.last_ms = kT0 + 4'999;
  return r;
}

// A throttle of two events: 120 suppressed lines, of which 100 timeouts and
// 25 refusals (5 lines were both).
const Rule kNetFlood = [] {
  Rule r = make_flood();
  r.name = "net-flood";
  r.events = {{"timeout", "timed out", {}}, {"refused", "refused", {}}};
  r.event_names = {"timeout", "refused"};
  return r;
}();

Record net_summary() {
  Record r;
  r.type = RecordType::Summary;
  r.time_ms = kT0 + 5'000;
  r.rule = &kNetFlood;
  r.key = "db1";
  r.suppressed = 120;
  r.counts = {100, 25};
  r.first_ms = kT0 + 123;
  r.last_ms = kT0 + 4'999;
  return r;
}

Record line_record(const Rule* rule, std::string_view text) {
  Record r;
  r.type = RecordType::Line;
  r.time_ms = kT0;
  r.rule = rule;
  r.line = text;
  r.has_line = true;
  return r;
}

std::string rendered(const Record& r, Format f) {
  std::string out;
  render(out, r, f);
  return out;
}

std::string read_all(int fd) {
  std::string got;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

}  // namespace

TEST_CASE("writer: JSON records, fields in the documented order") {
  struct {
    const char* name;
    Record rec;
    std::string_view want;
  } cases[] = {
      {"alert with key, message and two events", ssh_alert(),
       R"({"type":"alert","time":"2026-11-21T10:00:05.000Z","rule":"ssh-bruteforce","key":"203.0.113.9",)"
       R"("window":"1m","threshold":5,"count":5,"counts":{"failed":3,"invalid":2},"suppressed":0,)"
       R"("line":"Failed password for root from 203.0.113.9 port 22",)"
       R"("message":"5 failed logins from 203.0.113.9 within 1m"})"
       "\n"},
      {"alert of a when rule without key or message", ratio_alert(),
       R"({"type":"alert","time":"2026-11-21T10:00:05.042Z","rule":"nginx-5xx-ratio","key":"","window":"5m",)"
       R"("when":"error / request > 0.05 and request >= 100","count":129,"counts":{"request":120,"error":9},)"
       R"("suppressed":3,"line":"10.0.0.1 - - \"GET /api HTTP/1.1\" 502 17"})"
       "\n"},
      {"resolved has no line", ssh_resolved(),
       R"({"type":"resolved","time":"2026-11-21T10:01:05.000Z","rule":"ssh-bruteforce","key":"203.0.113.9",)"
       R"("window":"1m","threshold":5,"count":2,"counts":{"failed":2,"invalid":0},"suppressed":1,)"
       R"("message":"2 failed logins from 203.0.113.9 within 1m"})"
       "\n"},
      {"summary: counts last, after the fields it had before", flood_summary(),
       R"({"type":"summary","time":"2026-11-21T10:00:10.000Z","rule":"flood","key":"","window":"10s",)"
       R"("threshold":100,"suppressed":42,"first":"2026-11-21T10:00:05.123Z","last":"2026-11-21T10:00:09.999Z",)"
       R"("counts":{"any":42}})"
       "\n"},
      {"summary of two events: counts of the suppressed lines, every event", net_summary(),
       R"({"type":"summary","time":"2026-11-21T10:00:10.000Z","rule":"net-flood","key":"db1","window":"10s",)"
       R"("threshold":100,"suppressed":120,"first":"2026-11-21T10:00:05.123Z","last":"2026-11-21T10:00:09.999Z",)"
       R"("counts":{"timeout":100,"refused":25}})"
       "\n"},
      {"line passed by a throttle rule", line_record(&kFlood, "GET / 200"),
       R"({"type":"line","time":"2026-11-21T10:00:05.000Z","line":"GET / 200","rule":"flood"})"
       "\n"},
      {"line written by --passthrough", line_record(nullptr, "hello"),
       R"({"type":"line","time":"2026-11-21T10:00:05.000Z","line":"hello"})"
       "\n"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(rendered(c.rec, Format::Json) == c.want);
  }
}

TEST_CASE("writer: text records") {
  struct {
    const char* name;
    Record rec;
    std::string_view want;
  } cases[] = {
      {"alert with key, message and two events", ssh_alert(),
       "swthrottle: alert ssh-bruteforce key=203.0.113.9 count=5 counts=failed:3,invalid:2 threshold=5 "
       "window=1m suppressed=0 time=2026-11-21T10:00:05.000Z: 5 failed logins from 203.0.113.9 within 1m\n"},
      {"alert without message shows the line", ratio_alert(),
       "swthrottle: alert nginx-5xx-ratio count=129 counts=request:120,error:9 "
       "when=\"error / request > 0.05 and request >= 100\" window=5m suppressed=3 "
       "time=2026-11-21T10:00:05.042Z: 10.0.0.1 - - \"GET /api HTTP/1.1\" 502 17\n"},
      {"resolved", ssh_resolved(),
       "swthrottle: resolved ssh-bruteforce key=203.0.113.9 count=2 counts=failed:2,invalid:0 threshold=5 "
       "window=1m time=2026-11-21T10:01:05.000Z\n"},
      {"summary of one event: as before, no counts", flood_summary(),
       "swthrottle: summary flood suppressed=42 first=2026-11-21T10:00:05.123Z "
       "last=2026-11-21T10:00:09.999Z window=10s time=2026-11-21T10:00:10.000Z\n"},
      {"summary of two events: counts after suppressed, as alerts have them after count", net_summary(),
       "swthrottle: summary net-flood key=db1 suppressed=120 counts=timeout:100,refused:25 "
       "first=2026-11-21T10:00:05.123Z last=2026-11-21T10:00:09.999Z window=10s time=2026-11-21T10:00:10.000Z\n"},
      {"line", line_record(&kFlood, "GET / 200"), "GET / 200\n"},
      {"empty line", line_record(nullptr, ""), "\n"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(rendered(c.rec, Format::Text) == c.want);
  }
}

TEST_CASE("writer: a single-event rule shows no counts= in text") {
  Record r = ssh_alert();
  r.rule = &kFlood;
  r.key = "";
  r.count = 100;
  r.counts = {100};
  r.has_message = false;
  r.message.clear();
  r.line = "x";
  CHECK(rendered(r, Format::Text) ==
        "swthrottle: alert flood count=100 threshold=100 window=10s suppressed=0 "
        "time=2026-11-21T10:00:05.000Z: x\n");
  CHECK(rendered(r, Format::Json) ==
        R"({"type":"alert","time":"2026-11-21T10:00:05.000Z","rule":"flood","key":"","window":"10s",)"
        R"("threshold":100,"count":100,"counts":{"any":100},"suppressed":0,"line":"x"})"
        "\n");
}

TEST_CASE("writer: an alert with neither message nor line ends after time") {
  Record r = ssh_alert();
  r.has_message = false;
  r.has_line = false;
  CHECK(rendered(r, Format::Text) ==
        "swthrottle: alert ssh-bruteforce key=203.0.113.9 count=5 counts=failed:3,invalid:2 threshold=5 "
        "window=1m suppressed=0 time=2026-11-21T10:00:05.000Z\n");
  CHECK(rendered(r, Format::Json).find("\"line\"") == std::string::npos);
  CHECK(rendered(r, Format::Json).find("\"message\"") == std::string::npos);
}

TEST_CASE("writer: time is null (JSON) or - (text) before any log timestamp") {
  Record a = ssh_alert();
  a.has_time = false;
  CHECK(rendered(a, Format::Json).rfind(R"({"type":"alert","time":null,"rule":"ssh-bruteforce",)", 0) == 0);
  CHECK(rendered(a, Format::Text).find(" suppressed=0 time=-: 5 failed") != std::string::npos);

  Record s = flood_summary();
  s.has_time = false;
  CHECK(rendered(s, Format::Json) ==
        R"({"type":"summary","time":null,"rule":"flood","key":"","window":"10s",)"
        R"("threshold":100,"suppressed":42,"first":"2026-11-21T10:00:05.123Z","last":"2026-11-21T10:00:09.999Z",)"
        R"("counts":{"any":42}})"
        "\n");
  CHECK(rendered(s, Format::Text) ==
        "swthrottle: summary flood suppressed=42 first=2026-11-21T10:00:05.123Z "
        "last=2026-11-21T10:00:09.999Z window=10s time=-\n");

  Record l = line_record(nullptr, "x");
  l.has_time = false;
  CHECK(rendered(l, Format::Json) == "{\"type\":\"line\",\"time\":null,\"line\":\"x\"}\n");
}

TEST_CASE("writer: invalid UTF-8 and control bytes") {
  using namespace std::string_view_literals;
  const std::string_view raw = "bad \xFF\xE2\x82 \"q\"\t\0\x1b[1m end\r"sv;

  Record l = line_record(&kFlood, raw);
  CHECK(rendered(l, Format::Json) ==
        "{\"type\":\"line\",\"time\":\"2026-11-21T10:00:05.000Z\","
        "\"line\":\"bad \xEF\xBF\xBD\xEF\xBF\xBD \\\"q\\\"\\t\\u0000\\u001b[1m end\\r\",\"rule\":\"flood\"}\n");
  // A passed line is the user's data: written byte-for-byte.
  CHECK(rendered(l, Format::Text) == std::string(raw) + "\n");

  Record a = ratio_alert();
  a.line = raw;
  const std::string text = rendered(a, Format::Text);
  CHECK(text.substr(text.find("time=")) ==
        "time=2026-11-21T10:00:05.042Z: bad \xEF\xBF\xBD\xEF\xBF\xBD \"q\"\\t\\u0000\\u001b[1m end\\r\n"sv);

  Record k = ssh_alert();
  k.key = "a\nb\xC0";
  k.message = "two\nlines";
  CHECK(rendered(k, Format::Text) ==
        "swthrottle: alert ssh-bruteforce key=a\\nb\xEF\xBF\xBD count=5 counts=failed:3,invalid:2 threshold=5 "
        "window=1m suppressed=0 time=2026-11-21T10:00:05.000Z: two\\nlines\n");
  CHECK(rendered(k, Format::Json)
            .find(R"("key":"a\nb)"
                  "\xEF\xBF\xBD"
                  R"(",)") != std::string::npos);
}

TEST_CASE("writer: text records escape every control character, passed lines stay byte for byte") {
  using namespace std::string_view_literals;
  // Each class of byte, in the key, the message and (for a rule without a
  // message) the triggering line of an alert.
  const struct {
    const char* name;
    std::string_view raw;
    std::string_view text;  // as written inside a text record
  } cases[] = {
      {"ESC sequence", "\x1b[31mred\x1b[0m"sv, R"(\u001b[31mred\u001b[0m)"sv},
      {"TAB", "a\tb"sv, R"(a\tb)"sv},
      {"NUL", "a\0b"sv, R"(a\u0000b)"sv},
      {"LF and CR", "a\r\nb"sv, R"(a\r\nb)"sv},
      {"BS, FF, BEL, VT", "\b\f\a\v"sv, R"(\b\f\u0007\u000b)"sv},
      {"DEL",
       "a\x7f"
       "b"sv,
       R"(a\u007fb)"sv},
      {"C1 NEL and CSI as UTF-8",
       "a\xC2\x85"
       "b\xC2\x9B"
       "31m"sv,
       R"(a\u0085b\u009b31m)"sv},
      {"C1 range ends", "\xC2\x80\xC2\x9F\xC2\xA0"sv,
       "\\u0080\\u009f\xC2\xA0"sv},  // U+00A0 (no-break space) is not a control
      {"backslash", R"(C:\temp\x1b \\)"sv, R"(C:\\temp\\x1b \\\\)"sv},
      {"valid non-ASCII text", "é 日本 ✓"sv, "é 日本 ✓"sv},
      {"invalid UTF-8",
       "a\xFF"
       "b\xE2\x82"
       "c\x85"sv,
       "a\xEF\xBF\xBD"
       "b\xEF\xBF\xBD"
       "c\xEF\xBF\xBD"sv},
      {"quotes and plain ASCII", R"(say "hi" ~!)"sv, R"(say "hi" ~!)"sv},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    Record a = ssh_alert();
    a.key = c.raw;
    a.message = c.raw;
    CHECK(rendered(a, Format::Text) == "swthrottle: alert ssh-bruteforce key=" + std::string(c.text) +
                                           " count=5 counts=failed:3,invalid:2 threshold=5 window=1m "
                                           "suppressed=0 time=2026-11-21T10:00:05.000Z: " +
                                           std::string(c.text) + "\n");

    Record l = ratio_alert();
    l.line = c.raw;
    CHECK(rendered(l, Format::Text) ==
          "swthrottle: alert nginx-5xx-ratio count=129 counts=request:120,error:9 "
          "when=\"error / request > 0.05 and request >= 100\" window=5m suppressed=3 "
          "time=2026-11-21T10:00:05.042Z: " +
              std::string(c.text) + "\n");

    Record res = ssh_resolved();
    res.key = c.raw;
    CHECK(rendered(res, Format::Text) == "swthrottle: resolved ssh-bruteforce key=" + std::string(c.text) +
                                             " count=2 counts=failed:2,invalid:0 threshold=5 window=1m "
                                             "time=2026-11-21T10:01:05.000Z\n");

    Record sum = flood_summary();
    sum.key = c.raw;
    CHECK(rendered(sum, Format::Text) ==
          "swthrottle: summary flood key=" + std::string(c.text) +
              " suppressed=42 first=2026-11-21T10:00:05.123Z "
              "last=2026-11-21T10:00:09.999Z window=10s time=2026-11-21T10:00:10.000Z\n");

    // A passed line is the user's data: byte for byte, with or without a rule.
    CHECK(rendered(line_record(&kFlood, c.raw), Format::Text) == std::string(c.raw) + "\n");
    CHECK(rendered(line_record(nullptr, c.raw), Format::Text) == std::string(c.raw) + "\n");
  }
}

TEST_CASE("writer: JSON is unchanged by the text escapes (DEL and C1 stay raw UTF-8)") {
  using namespace std::string_view_literals;
  Record a = ssh_alert();
  a.key = "\x1b[31m\x7f\xC2\x85\\é"sv;
  a.has_message = false;
  a.line = a.key;
  CHECK(rendered(a, Format::Json) ==
        R"({"type":"alert","time":"2026-11-21T10:00:05.000Z","rule":"ssh-bruteforce","key":"\u001b[31m)"
        "\x7f\xC2\x85"
        R"(\\é","window":"1m","threshold":5,"count":5,"counts":{"failed":3,"invalid":2},"suppressed":0,)"
        R"("line":"\u001b[31m)"
        "\x7f\xC2\x85"
        R"(\\é"})"
        "\n");
}

TEST_CASE("writer: render appends, counts shorter than the events read as 0") {
  std::string out = "before\n";
  Record r = ssh_resolved();
  r.counts = {7};
  render(out, r, Format::Json);
  CHECK(out ==
        "before\n"
        R"({"type":"resolved","time":"2026-11-21T10:01:05.000Z","rule":"ssh-bruteforce","key":"203.0.113.9",)"
        R"("window":"1m","threshold":5,"count":2,"counts":{"failed":7,"invalid":0},"suppressed":1,)"
        R"("message":"2 failed logins from 203.0.113.9 within 1m"})"
        "\n");
}

TEST_CASE("writer: FdWriter writes each record whole") {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  {
    FdWriter w(fds[1], Format::Text);
    CHECK(w.write(flood_summary()));
    CHECK(w.write(line_record(&kFlood, "GET / 200")));
    CHECK_FALSE(w.closed());
    CHECK(w.error().empty());
  }
  ::close(fds[1]);
  CHECK(read_all(fds[0]) ==
        "swthrottle: summary flood suppressed=42 first=2026-11-21T10:00:05.123Z "
        "last=2026-11-21T10:00:09.999Z window=10s time=2026-11-21T10:00:10.000Z\n"
        "GET / 200\n");
  ::close(fds[0]);
}

TEST_CASE("writer: a record larger than the pipe, on a non-blocking descriptor") {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0);
  REQUIRE(::fcntl(fds[0], F_SETFL, 0) == 0);  // the reader blocks; only the writer is non-blocking
  const std::string big(1 << 20, 'z');
  std::string got;
  std::thread reader([&] { got = read_all(fds[0]); });
  FdWriter w(fds[1], Format::Json);
  const bool ok = w.write(line_record(nullptr, big));
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  CHECK(ok);
  CHECK(got == R"({"type":"line","time":"2026-11-21T10:00:05.000Z","line":")" + big + "\"}\n");
}

TEST_CASE("writer: a closed pipe closes the writer quietly") {
  std::signal(SIGPIPE, SIG_IGN);
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  ::close(fds[0]);
  FdWriter w(fds[1], Format::Json);
  CHECK_FALSE(w.write(ssh_alert()));
  CHECK(w.closed());
  CHECK(w.error() == "");
  CHECK_FALSE(w.write(line_record(nullptr, "x")));
  ::close(fds[1]);
}

TEST_CASE("writer: other write errors close the writer with the reason") {
  const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  REQUIRE(full >= 0);
  FdWriter w(full, Format::Text);
  CHECK_FALSE(w.write(line_record(nullptr, "x")));
  CHECK(w.closed());
  CHECK(w.error() == "No space left on device");
  ::close(full);

  const int ro = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  REQUIRE(ro >= 0);
  FdWriter w2(ro, Format::Text);
  CHECK_FALSE(w2.write(line_record(nullptr, "x")));
  CHECK(w2.error() == "Bad file descriptor");
  ::close(ro);
}
