// Expected epoch values were computed independently with GNU date, e.g.
// `date -u -d "2026-11-21 10:00:05" +%s%3N` (and TZ=... date -d for local zones).
#include "match/logtime.h"

#include <doctest/doctest.h>
#include <stdlib.h>
#include <time.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "support/logtime_model.h"
#include "support/scoped_tz.h"
#include "support/seed.h"

using swthrottle::config::TimestampSpec;
using swthrottle::config::TimezoneSpec;
using swthrottle::match::LogTime;
using Form = TimestampSpec::Form;
using swthrottle::test::ScopedTz;

namespace {

constexpr int64_t kNone = -1;                        // "no timestamp" in the tables
constexpr int64_t kNow = 1795262400000;              // 2026-11-21 12:00:00Z
constexpr int64_t k20261121_100005 = 1795255205000;  // 2026-11-21 10:00:05Z
constexpr int64_t k20261121_100000 = 1795255200000;  // 2026-11-21 10:00:00Z

TimezoneSpec zone(int offset_minutes) {
  TimezoneSpec z;
  z.local = false;
  z.offset_minutes = offset_minutes;
  z.text = "fixed";
  return z;
}

TimezoneSpec local_zone() { return TimezoneSpec{}; }

TimestampSpec spec(Form form, std::string format = "", std::string match = "") {
  TimestampSpec s;
  s.form = form;
  s.format = std::move(format);
  s.match = std::move(match);
  return s;
}

LogTime make(const TimestampSpec& s, const TimezoneSpec& tz = zone(0), int year = 2026) {
  auto r = LogTime::make(s, tz, year);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().what));
  return *r;
}

std::string make_error(const TimestampSpec& s) {
  auto r = LogTime::make(s, zone(0), 0);
  REQUIRE(!r.ok());
  CHECK(r.error().file.empty());
  CHECK(r.error().line == 0);
  CHECK(r.error().col == 0);
  return r.error().what;
}

struct Row {
  const char* line;
  int64_t want;  // ms since the epoch, or kNone
};

void check_rows(const LogTime& lt, const std::vector<Row>& rows, int64_t now = kNow) {
  for (const Row& row : rows) {
    const std::string line = row.line;
    CAPTURE(line);
    CHECK(lt.parse(row.line, now).value_or(kNone) == row.want);
  }
}

}  // namespace

TEST_CASE("logtime: RFC 3339 / ISO 8601") {
  const LogTime lt = make(spec(Form::Auto));
  check_rows(lt,
             {
                 {"2026-11-21T10:00:05Z", k20261121_100005},
                 {"2026-11-21t10:00:05z", k20261121_100005},
                 {"2026-11-21 10:00:05", k20261121_100005},  // no offset: the configured zone (UTC here)
                 {"2026-11-21 10:00:05,123", k20261121_100005 + 123},
                 {"2026-11-21 10:00:05.123 INFO x", k20261121_100005 + 123},
                 {"2026-11-21T10:00:05.5Z", k20261121_100005 + 500},
                 {"2026-11-21T10:00:05.12Z", k20261121_100005 + 120},
                 {"2026-11-21T10:00:05.123456789Z", k20261121_100005 + 123},  // truncated, not rounded
                 {"2026-11-21T10:00:05.999999+00:00", k20261121_100005 + 999},
                 {"2026-11-21T10:00:05.123456+02:00", 1795248005000 + 123},  // 08:00:05.123Z
                 {"2026-11-21T10:00:05+0200", 1795248005000},
                 {"2026-11-21T10:00:05+02", 1795248005000},
                 {"2026-11-21T10:00:05,25+02", 1795248005000 + 250},
                 {"2026-11-21T10:00:05-05:30", 1795275005000},     // 15:30:05Z
                 {"2026-11-21T10:00Z", k20261121_100000},          // seconds may be left out
                 {"2026-11-21 10:00:05.", k20261121_100005},       // a full stop ending a sentence
                 {"2026-11-21 10:00:05 +0200", k20261121_100005},  // an offset must be attached
                 {"2015-07-29 17:41:44,747 - INFO  [QuorumPeer[myid=1]/0:0:0:0:0:0:0:0:2181:FastLeaderElection@774]",
                  1438191704000 + 747},  // Zookeeper (loghub)
                 {"2015-10-18 18:01:47,978 INFO [main] org.apache.hadoop.mapreduce.v2.app.MRAppMaster: Created",
                  1445191307000 + 978},  // Hadoop (loghub)
                 {"level=info ts=2026-11-21T10:00:05Z msg=\"up\"", k20261121_100005},
                 {"T2026-11-21T10:00:05Z", k20261121_100005},
             });
}

TEST_CASE("logtime: RFC 3339 stamps that are not there or out of range") {
  const LogTime lt = make(spec(Form::Rfc3339));
  check_rows(lt, {
                     {"", kNone},
                     {"no stamp here", kNone},
                     {"backup of 2026-11-21 failed", kNone},  // a date alone is not a time
                     {"2026-11-21T", kNone},
                     {"2026-11-21T10", kNone},
                     {"2026-11-21T10:0", kNone},
                     {"12026-11-21 10:00:05Z", kNone},  // five-digit year
                     {"2026-11-21 10:00:055", kNone},
                     {"2026-11-21 10:00:05:", k20261121_100005},
                     {"2026-11-21 10:00:5", kNone},
                     {"2026-1-21 10:00:05", kNone},
                     {"2026-13-01 10:00:00", kNone},
                     {"2026-00-10 10:00:00", kNone},
                     {"2026-11-00 10:00:00", kNone},
                     {"2026-11-31 10:00:00", kNone},
                     {"2026-04-31 10:00:00", kNone},
                     {"2026-02-29 10:00:00", kNone},  // 2026 is not a leap year
                     {"2028-02-29 10:00:00", 1835431200000},
                     {"2026-11-21 24:00:00", kNone},
                     {"2026-11-21 10:60:00", kNone},
                     {"2026-11-21 10:00:61", kNone},
                     {"2026-11-21 23:59:60", 1795305599000 + 999},  // leap second: :59.999
                     {"2026-11-21 23:59:60.5", 1795305599000 + 999},
                     {"2026-11-21T10:00:05+24:00", kNone},
                     {"2026-11-21T10:00:05+02:60", kNone},
                     {"2026-11-21T10:00:05+02001", kNone},
                     // an invalid stamp is skipped and the search goes on to the right
                     {"2026-13-01 00:00:00 then 2026-11-21 10:00:05Z", k20261121_100005},
                     {"2026-11-21T10:00:05+24:00 2026-11-21T10:00:05+02", 1795248005000},
                 });
}

TEST_CASE("logtime: syslog") {
  const LogTime lt = make(spec(Form::Syslog), zone(0), 2026);
  check_rows(lt, {
                     {"Nov 21 10:00:00 host sshd[1]: x", k20261121_100000},
                     {"Nov 21 10:00:00", k20261121_100000},
                     {"Jul  1 09:00:55 calvisitor-10-105-160-95 kernel[0]: IOThunderboltSwitch", 1782896455000},  // Mac
                     {"Jul 1 09:00:55 host", 1782896455000},
                     {"Jul 01 09:00:55 host", 1782896455000},
                     {"Nov 21 10:00:00.250 host", k20261121_100000 + 250},
                     {"Nov 21 10:00:00,250123 host", k20261121_100000 + 250},
                     {"<34>Nov 21 10:00:00 host", k20261121_100000},
                     {"[Sun Dec 04 04:47:44 2005] [notice]", 1133671664000},  // ctime(): the year is in the line
                     {"Dec 04 04:47:44 2005", 1133671664000},
                     {"Dec 04 04:47:44 2005x", 1796359664000},  // "2005x" is not a year: 2026-12-04, then text
                     {"Nov 21 10:00:00 2026host", k20261121_100000},
                     {"Nov 21 10:00:00 20261 x", k20261121_100000},
                     {"Dec 10 06:55:46 LabSZ sshd[24200]: reverse mapping checking", 1796885746000},  // OpenSSH
                     {"Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication failure;", 1781450161000},  // Linux
                     {"Feb 29 10:00:00 host", kNone},
                     {"Feb 30 10:00:00 host", kNone},
                     {"Nov 31 10:00:00 host", kNone},
                     {"Nov 21 25:00:00 host", kNone},
                     {"Nov 21 10:00:000 host", kNone},
                     {"Nov  21 10:00:00 host", kNone},
                     {"Nov 123 10:00:00 host", kNone},
                     {"Nov 21  10:00:00 host", kNone},
                     {"xNov 21 10:00:00", kNone},
                     {"November 21 10:00:00", kNone},
                     {"NOV 21 10:00:00", kNone},
                     {"Nov 21 10:00", kNone},
                     {"Now 21 10:00:00", kNone},
                     {"Nov 21 24:00:00 then Nov 21 10:00:00", k20261121_100000},
                 });
}

TEST_CASE("logtime: common log format") {
  const LogTime lt = make(spec(Form::Clf), zone(120));
  check_rows(lt, {
                     {"127.0.0.1 - - [21/Nov/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 5", k20261121_100000},
                     {"[21/Nov/2026:10:00:00 -0700]", 1795280400000},  // 17:00Z
                     {"[21/Nov/2026:10:00:00 +02:00]", k20261121_100000 - 7200000},
                     {"[21/Nov/2026:10:00:00]", k20261121_100000 - 7200000},  // no offset: the configured +02:00
                     {"[21/Nov/2026:10:00:00 +0000", kNone},
                     {"[21/Nov/2026:10:00:00 +00000]", kNone},
                     {"[21/Nov/2026:10:00:00 x]", kNone},
                     {"[31/Nov/2026:10:00:00 +0000]", kNone},
                     {"[21/nov/2026:10:00:00 +0000]", kNone},
                     {"[1/Nov/2026:10:00:00 +0000]", kNone},
                     {"[x] [21/Nov/2026:10:00:00 +0000]", k20261121_100000},
                 });
}

TEST_CASE("logtime: epoch only at the start of the line") {
  const LogTime lt = make(spec(Form::Epoch));
  check_rows(lt, {
                     {"1700000000 x", 1700000000000},
                     {"1700000000", 1700000000000},
                     {"1700000000.5 x", 1700000000500},
                     {"1700000000.123456 x", 1700000000123},
                     {"1700000000. x", 1700000000000},
                     {"1700000000,5 x", 1700000000000},  // only '.' starts a fraction
                     {"1700000000123 x", 1700000000123},
                     {"1700000000123", 1700000000123},
                     {"1700000000abc", 1700000000000},
                     {"170000000 x", kNone},     // 9 digits
                     {"17000000000 x", kNone},   // 11 digits
                     {"170000000012 x", kNone},  // 12 digits
                     {"17000000001234 x", kNone},
                     {"x 1700000000", kNone},
                     {" 1700000000", kNone},
                     {"2026-11-21T10:00:05Z", kNone},
                 });
}

TEST_CASE("logtime: auto takes the leftmost stamp of any form") {
  const LogTime lt = make(spec(Form::Auto), zone(0), 2026);
  check_rows(lt, {
                     {"Nov 21 10:00:00 host app: started at 2026-11-22T00:00:00Z", k20261121_100000},
                     {"2026-11-22T00:00:00Z seen Nov 21 10:00:00", 1795305600000},
                     {"1700000000 2026-11-21T10:00:05Z", 1700000000000},
                     {"x 1700000000 2026-11-21T10:00:05Z", k20261121_100005},  // epoch not mid-line
                     {"job 170000000 at Nov 21 10:00:00", k20261121_100000},
                     {"[21/Nov/2026:10:00:00 +0000] Nov 22 10:00:00 2026-11-23T00:00:00Z", k20261121_100000},
                     {"id=17 Nov 21 10:00:00 [21/Nov/2026:00:00:00 +0000]", k20261121_100000},
                     {"[Sun Dec 04 04:47:44 2005] [error] mod_jk child workerEnv in error state 6", 1133671664000},
                     {"081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1",
                      kNone},  // HDFS: not a known form
                     {"Feb 30 10:00:00 then 2026-11-21 10:00:05", k20261121_100005},
                 });
}

TEST_CASE("logtime: YYYY/MM/DD, basic ISO 8601 and epoch numbers in JSON fields") {
  const LogTime lt = make(spec(Form::Auto), zone(0), 2026);
  check_rows(lt, {
                     // nginx's error.log, Go's log package (a fraction, as with log.Lmicroseconds)
                     {"2026/11/21 10:00:05 [error] 1234#0: *5 open() failed", k20261121_100005},
                     {"2026/11/21 10:00:05.123456 main.go:12: started", k20261121_100005 + 123},
                     {"2026/11/21 10:00:05+02:00 x", 1795248005000},
                     {"2026/11/21T10:00:05 x", kNone},  // a space, and only a space, after the date
                     {"2026/11/21 10:00 x", kNone},     // seconds are needed
                     {"2026/13/21 10:00:05 x", kNone},
                     {"2026/11/21 10:00:051 x", kNone},
                     // basic ISO 8601
                     {"20261121T100005Z", k20261121_100005},
                     {"20261121T100005.5+0200 end", 1795248005500},
                     {"begin 20261121T100005Z", kNone},                            // at the start of the line only
                     {"20261321T100005Z 2026-11-21T10:00:05Z", k20261121_100005},  // else the search goes on
                     {"20261121T100005,25-01:00 x", k20261121_100005 + 3600000 + 250},
                     {"20261121T100005 x", k20261121_100005},  // no offset: the configured zone
                     {"20261121T1000 x", kNone},
                     {"20261121t100005Z", kNone},
                     {"120261121T100005Z", kNone},
                     {"20261121T1000051Z", kNone},
                     // epoch numbers as JSON values; the digits give the unit
                     {R"({"ts":1795255205.5,"level":"info"})", k20261121_100005 + 500},
                     {R"({"level":"info","time":1795255205123})", k20261121_100005 + 123},
                     {R"({"timestamp":"1795255205123456"})", k20261121_100005 + 123},
                     {R"({ "__REALTIME_TIMESTAMP" : "1795255205123456", "MESSAGE" : "x" })", k20261121_100005 + 123},
                     {R"({"@timestamp":1795255205123456789})", k20261121_100005 + 123},
                     {R"({"time": 1795255205})", k20261121_100005},
                     {R"({"ts":1795255205123.9})", k20261121_100005 + 123},  // below a ms: dropped
                     {R"({"id":1795255205})", kNone},                        // not a time key
                     {R"({"xts":1795255205})", kNone},
                     {R"({"ts":17952552051})", 17952552051000},  // by magnitude: seconds (year 2538)
                     {R"({"ts":99999999})", kNone},              // below 1e8: a count, not a time
                     {R"({"ts":1795255205e3})", kNone},
                     {R"({"ts":"1795255205})", kNone},  // the quote does not close
                     {R"({"ts":"1795255205"x})", k20261121_100005},
                     {"ts=1795255205 x", kNone},         // not JSON
                     {R"(x {"ts":1795255205})", kNone},  // a line that is no JSON object
                     {R"(20261121T100005Z {"ts":1},)", k20261121_100005},
                     // a JSON object: its stamp field, wherever it is, not a stamp in the message
                     {R"({"ts":1795255205,"msg":"at 2026-11-22T00:00:00Z"})", k20261121_100005},
                     {R"({"msg":"at 2026-11-22T00:00:00Z","ts":1795255205})", k20261121_100005},
                     // leftmost, whatever the form
                     {"2026/11/22 00:00:00 {\"ts\":1795255205}", 1795305600000},
                     {"20261122T000000Z Nov 21 10:00:05", 1795305600000},
                 });
}

TEST_CASE("logtime: the named forms ymd_slash, iso_basic and json_epoch look only for theirs") {
  const std::string line = R"({"x":"2026-11-24T10:00:00Z","ts":1795341605,"y":"2026/11/22 10:00:00"})";
  CHECK(make(spec(Form::YmdSlash)).parse(line, kNow).value_or(kNone) == k20261121_100000 + 86400000);
  CHECK(make(spec(Form::JsonEpoch)).parse(line, kNow).value_or(kNone) == k20261121_100005 + 86400000);
  CHECK(make(spec(Form::Rfc3339)).parse(line, kNow).value_or(kNone) == k20261121_100000 + 3 * 86400000);
  CHECK(make(spec(Form::Auto)).parse(line, kNow).value_or(kNone) == k20261121_100005 + 86400000);  // its "ts"
  const std::string basic = "20261123T100000Z 2026-11-24T10:00:00Z";
  CHECK(make(spec(Form::IsoBasic)).parse(basic, kNow).value_or(kNone) == k20261121_100000 + 2 * 86400000);
  CHECK(make(spec(Form::Rfc3339)).parse(basic, kNow).value_or(kNone) == k20261121_100000 + 3 * 86400000);
  CHECK(make(spec(Form::IsoBasic)).parse("x " + basic, kNow).value_or(kNone) == kNone);
  // Next to `match`, format names them too.
  CHECK(make(spec(Form::Strptime, "iso_basic", R"(at (\S+))")).parse("x 20261122T100000Z at 20261123T100000Z", kNow) ==
        k20261121_100000 + 2 * 86400000);  // at the start of the group
}

TEST_CASE("logtime: a named form looks only for that form") {
  const std::string line = "1700000000 Nov 21 10:00:00 [22/Nov/2026:10:00:00 +0000] 2026-11-23T10:00:00Z";
  CHECK(make(spec(Form::Epoch)).parse(line, kNow).value_or(kNone) == 1700000000000);
  CHECK(make(spec(Form::Syslog)).parse(line, kNow).value_or(kNone) == k20261121_100000);
  CHECK(make(spec(Form::Clf)).parse(line, kNow).value_or(kNone) == k20261121_100000 + 86400000);
  CHECK(make(spec(Form::Rfc3339)).parse(line, kNow).value_or(kNone) == k20261121_100000 + 2 * 86400000);
  CHECK(make(spec(Form::Auto)).parse(line, kNow).value_or(kNone) == 1700000000000);
}

TEST_CASE("logtime: strptime formats at the start of the line") {
  struct Case {
    const char* format;
    const char* line;
    int64_t want;
  };
  const std::vector<Case> cases = {
      {"%y%m%d %H%M%S", "081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1", 1226262975000},
      {"%y/%m/%d %H:%M:%S", "17/06/09 20:10:40 INFO executor.CoarseGrainedExecutorBackend: Registered", 1497039040000},
      {"%d/%b/%Y:%H:%M:%S %z", "21/Nov/2026:10:00:00 +0100 GET", k20261121_100000 - 3600000},
      {"%Y-%m-%dT%H:%M:%S.%f%z", "2026-11-21T10:00:05.123456-0130", 1795260605000 + 123},  // 11:30:05.123Z
      {"%Y-%m-%dT%H:%M:%S%z", "2026-11-21T10:00:05Z", k20261121_100005},
      {"%F %T", "2026-11-21 10:00:05 x", k20261121_100005},
      {"%D %R", "11/21/26 10:00", k20261121_100000},
      {"%m/%d/%Y %I:%M:%S %p", "11/21/2026 12:05:00 AM", 1795219500000},
      {"%m/%d/%Y %I:%M:%S %p", "11/21/2026 12:05:00 PM", 1795262700000},
      {"%m/%d/%Y %I:%M:%S %p", "11/21/2026 01:05:00 pm", 1795266300000},
      {"%m/%d/%Y %I:%M:%S %p", "11/21/2026 13:05:00 pm", kNone},
      {"%m/%d/%Y %I:%M:%S %p", "11/21/2026 00:05:00 am", kNone},
      {"%s", "1700000000", 1700000000000},
      {"%s.%f", "1700000000.123 x", 1700000000123},
      // %s: seconds of at most 11 digits (to the year 5138); epoch
      // milliseconds (13 digits) are not read as seconds (12 of them: 7658).
      {"%s", "17952552050 x", 17952552050000},
      {"%s", "179525520512 x", kNone},
      {"%s", "1795255205123 x", kNone},
      {"%s.%f", "1795255205123.5", kNone},
      {"%Y %j %H:%M", "2026 325 10:00", k20261121_100000},
      {"%Y %j %H:%M", "2026 366 10:00", kNone},
      {"%Y %j %H:%M", "2028 366 10:00", 1861869600000},  // 2028-12-31 10:00Z
      {"%A, %d %B %Y %H:%M:%S", "Saturday, 21 November 2026 10:00:00", k20261121_100000},
      {"%a, %d %b %Y %H:%M:%S", "sat, 21 NOV 2026 10:00:00", k20261121_100000},
      {"%a %b %e %H:%M:%S %Y", "Sat Nov  1 10:00:00 2026", 1793527200000},
      {"%b %d %Y %H:%M:%S", "September 01 2026 00:00:00", 1788220800000},
      {"%b %d %Y %H:%M:%S", "Sep 01 2026 00:00:00", 1788220800000},
      {"%b %d %Y %H:%M:%S", "Sept 01 2026 00:00:00", kNone},
      {"%% %Y-%m-%d", "% 2026-11-21", 1795219200000},
      {"%Y-%m-%d  %H:%M", "2026-11-21 10:00", k20261121_100000},  // format whitespace: any run
      {"%Y-%m-%d %H:%M", "2026-11-21\t\t10:00", k20261121_100000},
      {"%Y-%m-%d %H:%M", "2026-11-2110:00", k20261121_100000},  // %d reads two digits; ' ' matches none
      {"%Y-%m-%d", "2026-11-21", 1795219200000},
      {"%Y-%m-%d", "2026-11-31", kNone},
      {"%Y-%m-%d %H:%M:%S", "2026-11-21 10:00:60", 1795255259999},
      {"%Y-%m-%d %H:%M:%S", "2026-11-21 10:61:00", kNone},
      {"%y%m%d %H%M%S", "x 081109 203615", kNone},  // anchored at the start
      {"%y%m%d %H%M%S", "0811", kNone},
      {"%Y-%m-%d", "2026-00-21", kNone},
  };
  for (const Case& c : cases) {
    const std::string format = c.format;
    const std::string line = c.line;
    CAPTURE(format);
    CAPTURE(line);
    CHECK(make(spec(Form::Strptime, c.format)).parse(c.line, kNow).value_or(kNone) == c.want);
  }
}

TEST_CASE("logtime: %Z names UTC, other zone names are read and ignored") {
  const LogTime lt = make(spec(Form::Strptime, "%A, %d %B %Y %H:%M:%S %Z"), zone(120));
  check_rows(lt, {
                     {"Saturday, 21 November 2026 10:00:00 GMT", k20261121_100000},
                     {"Saturday, 21 November 2026 10:00:00 UTC", k20261121_100000},
                     {"Saturday, 21 November 2026 10:00:00 CET", k20261121_100000 - 7200000},  // the configured +02:00
                     {"Saturday, 21 November 2026 10:00:00 +0100", kNone},
                 });
}

TEST_CASE("logtime: a fixed zone applies only to stamps without an offset") {
  const LogTime east = make(spec(Form::Auto), zone(120));
  CHECK(east.parse("2026-11-21 10:00:05", kNow).value_or(kNone) == k20261121_100005 - 7200000);
  CHECK(east.parse("2026-11-21 10:00:05Z", kNow).value_or(kNone) == k20261121_100005);
  const LogTime west = make(spec(Form::Auto), zone(-(3 * 60 + 30)));
  CHECK(west.parse("2026-11-21 10:00:05", kNow).value_or(kNone) == k20261121_100005 + 12600000);
  CHECK(west.parse("2026-11-21 10:00:05-03:30", kNow).value_or(kNone) == k20261121_100005 + 12600000);
}

TEST_CASE("logtime: match + format parses the first capture group") {
  // Apache (loghub)
  const LogTime apache = make(spec(Form::Strptime, "%a %b %d %H:%M:%S %Y", R"(^\[(.*?)\])"));
  check_rows(apache, {
                         {"[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok /etc/httpd/conf/workers2.properties",
                          1133671664000},
                         {"x [Sun Dec 04 04:47:44 2005]", kNone},  // the regex does not match
                         {"[Sun Dec 04 04:47:44] x", kNone},       // the format does not match the capture
                         {"[Sun Dec 32 04:47:44 2005]", kNone},
                     });

  const LogTime named = make(spec(Form::Strptime, "rfc3339", R"(ts=(\S+))"));
  CHECK(named.parse("a=2026-01-01T00:00:00Z ts=2026-11-21T10:00:05Z", kNow).value_or(kNone) == k20261121_100005);
  CHECK(named.parse("ts=none, 2026-11-21T10:00:05Z", kNow).value_or(kNone) == kNone);

  const LogTime rfc_form = make(spec(Form::Rfc3339, "", R"(ts=(\S+))"));
  CHECK(rfc_form.parse("a=2026-01-01T00:00:00Z ts=2026-11-21T10:00:05Z", kNow).value_or(kNone) == k20261121_100005);

  // epoch is at the start of the capture, not of the line
  const LogTime epoch = make(spec(Form::Strptime, "epoch", R"(at (\d+))"));
  CHECK(epoch.parse("job 5 at 1700000000 done", kNow).value_or(kNone) == 1700000000000);
  CHECK(epoch.parse("job 5 at 17000000001 done", kNow).value_or(kNone) == kNone);

  const LogTime syslog = make(spec(Form::Strptime, "syslog", R"(\|(.*)\|)"), zone(0), 2026);
  CHECK(syslog.parse("x|Nov 21 10:00:00|y", kNow).value_or(kNone) == k20261121_100000);

  // a group that took no part in the match
  const LogTime optional = make(spec(Form::Rfc3339, "", R"((?:ts=(\S+))?!)"));
  CHECK(optional.parse("2026-11-21T10:00:05Z !", kNow).value_or(kNone) == kNone);

  // a copy compiles its own regex and still works after the original is gone
  std::optional<LogTime> original(make(spec(Form::Strptime, "%a %b %d %H:%M:%S %Y", R"(^\[(.*?)\])")));
  const LogTime copy = *original;
  original.reset();
  CHECK(copy.parse("[Sun Dec 04 04:47:44 2005]", kNow).value_or(kNone) == 1133671664000);
  LogTime assigned = make(spec(Form::Epoch));
  assigned = copy;
  CHECK(assigned.parse("[Sun Dec 04 04:47:44 2005]", kNow).value_or(kNone) == 1133671664000);
}

TEST_CASE("logtime: errors") {
  CHECK(make_error(spec(Form::Strptime, "%Y-%q")) ==
        "invalid timestamp format \"%Y-%q\": unsupported conversion %q (supported: %Y %y %m %d %e %j %H %I %M %S "
        "%f %p %b %h %B %a %A %z %Z %s %T %R %D %F %n %t %%)");
  CHECK(make_error(spec(Form::Strptime, "%Y-%m-%d %")) ==
        "invalid timestamp format \"%Y-%m-%d %\": it ends with a lone %");
  CHECK(make_error(spec(Form::Strptime, "%H:%M:%S")) ==
        "invalid timestamp format \"%H:%M:%S\": it has no date (it needs %d with %m or %b, or %F, %D, %j or %s)");
  CHECK(make_error(spec(Form::Strptime, "%d %H:%M:%S")) ==
        "invalid timestamp format \"%d %H:%M:%S\": it has no date (it needs %d with %m or %b, or %F, %D, %j or %s)");
  CHECK(make_error(spec(Form::Strptime, "")) ==
        "invalid timestamp format \"\": it has no date (it needs %d with %m or %b, or %F, %D, %j or %s)");
  CHECK(make_error(spec(Form::Strptime, "%Y-%m-%d", "abc(")) == "invalid timestamp match 'abc(': missing ): abc(");
  CHECK(make_error(spec(Form::Strptime, "%Y-%m-%d", R"(\[.*?\])")) ==
        "timestamp match '\\[.*?\\]' has no capture group: put the timestamp in ( )");
  CHECK(make_error(spec(Form::Auto, "", "(?:x)")) ==
        "timestamp match '(?:x)' has no capture group: put the timestamp in ( )");
}

TEST_CASE("logtime: syslog year inference at New Year") {
  const LogTime lt = make(spec(Form::Auto), zone(0), 0);
  const int64_t now = 1798763400000;  // 2027-01-01 00:30:00Z
  check_rows(lt,
             {
                 {"Dec 31 23:59:00 host", 1798761540000},  // 2026: 2027-12-31 would be a year ahead
                 {"Jan  1 00:00:00 host", 1798761600000},  // 2027
                 {"Jan  1 00:30:00 host", now},
                 // 2027-01-02 00:30:00 is exactly one day ahead: not more than a day, so 2027
                 {"Jan  2 00:30:00 host", 1798849800000},
                 // one ms later it is more than a day ahead: the year before
                 {"Jan  2 00:30:00.001 host", 1767313800000 + 1},
                 {"2027-01-05 00:00:00 explicit years are kept", 1799107200000},
             },
             now);
  // settings.year wins over inference
  const LogTime fixed = make(spec(Form::Auto), zone(0), 2026);
  CHECK(fixed.parse("Jan  2 00:30:00 host", now).value_or(kNone) == 1767313800000);
  CHECK(fixed.parse("Dec 31 23:59:00 host", now).value_or(kNone) == 1798761540000);
  // mid-year: a November stamp in June is last year's
  CHECK(lt.parse("Nov 21 10:00:00 host", 1781524800000).value_or(kNone) == 1763719200000);
  // the same inference for a strptime format without a year
  const LogTime noyear = make(spec(Form::Strptime, "%b %d %H:%M:%S"), zone(0), 0);
  CHECK(noyear.parse("Dec 31 23:59:00 host", now).value_or(kNone) == 1798761540000);
  CHECK(noyear.parse("Jan 02 00:30:00 host", now).value_or(kNone) == 1798849800000);
}

TEST_CASE("logtime: the inferred year is the year of now in the configured zone") {
  const int64_t now = 1798758000000;  // 2026-12-31 23:00:00Z = 2027-01-01 01:00 at +02:00
  const LogTime east = make(spec(Form::Syslog), zone(120), 0);
  CHECK(east.parse("Jan  1 00:30:00 host", now).value_or(kNone) == 1798756200000);  // 2027-01-01 00:30+02
  const LogTime utc = make(spec(Form::Syslog), zone(0), 0);
  CHECK(utc.parse("Jan  1 00:30:00 host", now).value_or(kNone) == 1767227400000);  // 2026-01-01 00:30Z
}

TEST_CASE("logtime: Feb 29 without a year") {
  const LogTime lt = make(spec(Form::Syslog), zone(0), 0);
  CHECK(lt.parse("Feb 29 12:00:00 host", 1867017600000).value_or(kNone) == 1835438400000);  // now 2029-03-01
  CHECK(lt.parse("Feb 29 12:00:00 host", 1803859200000).value_or(kNone) == kNone);          // now 2027-03-01
  CHECK(make(spec(Form::Syslog), zone(0), 2028).parse("Feb 29 12:00:00", kNow).value_or(kNone) == 1835438400000);
  CHECK(make(spec(Form::Syslog), zone(0), 2026).parse("Feb 29 12:00:00", kNow).value_or(kNone) == kNone);
}

TEST_CASE("logtime: the local zone follows TZ, across DST changes") {
  const ScopedTz tz("CET-1CEST,M3.5.0,M10.5.0/3");  // a POSIX rule: needs no tzdata files
  const LogTime lt = make(spec(Form::Auto), local_zone(), 0);
  check_rows(lt, {
                     {"2026-07-01 12:00:00", 1782900000000},             // CEST: 10:00Z
                     {"2026-01-15 12:00:00", 1768474800000},             // CET: 11:00Z
                     {"2026-03-29 01:59:59", 1774745999000},             // the last second of CET
                     {"2026-03-29 03:00:00", 1774746000000},             // the first of CEST
                     {"2026-10-25 03:00:00", 1792893600000},             // CET again
                     {"2026-07-01 12:00:00Z", 1782900000000 + 7200000},  // an offset in the stamp wins
                     {"[21/Nov/2026:10:00:00 +0000]", k20261121_100000},
                 });
  // the same lines again come from the cache
  check_rows(lt, {
                     {"2026-07-01 12:00:00", 1782900000000},
                     {"2026-01-15 12:00:00", 1768474800000},
                 });
  // year inference in the local zone: 2026-12-31 23:30Z is 2027-01-01 00:30 CET
  const LogTime syslog = make(spec(Form::Syslog), local_zone(), 0);
  CHECK(syslog.parse("Jan  1 00:10:00 host", 1798759800000).value_or(kNone) == 1798758600000);
}

namespace {

TimezoneSpec named_zone(const char* name) {
  TimezoneSpec z;
  z.local = false;
  z.name = name;
  z.text = name;
  return z;
}

}  // namespace

// Zones by name, from the tz database: the machine's zone (TZ, here another
// one altogether) plays no part. A repeated local time reads as its first
// pass; a skipped one with the offset before the change (the man page's
// timezone).
TEST_CASE("logtime: a named zone across DST, north (Europe/Berlin) and south (Australia/Sydney)") {
  const ScopedTz elsewhere("America/Santiago");
  const LogTime berlin = make(spec(Form::Auto), named_zone("Europe/Berlin"), 0);
  check_rows(berlin, {
                         {"2026-07-01 12:00:00", 1782900000000},             // CEST: 10:00Z
                         {"2026-01-15 12:00:00", 1768474800000},             // CET: 11:00Z
                         {"2026-03-29 01:59:59", 1774745999000},             // the last second of CET
                         {"2026-03-29 02:30:00", 1774747800000},             // skipped: +01:00, 01:30Z
                         {"2026-03-29 03:00:00", 1774746000000},             // the first second of CEST, 01:00Z
                         {"2026-10-25 02:30:00", 1792888200000},             // repeated: the first pass, CEST, 00:30Z
                         {"2026-10-25 03:00:00", 1792893600000},             // CET again, 02:00Z
                         {"2026-07-01 12:00:00Z", 1782900000000 + 7200000},  // an offset in the stamp wins
                     });
  const LogTime sydney = make(spec(Form::Auto), named_zone("Australia/Sydney"), 0);
  check_rows(sydney, {
                         {"2026-01-15 12:00:00", 1768438800000},  // AEDT, +11: 01:00Z
                         {"2026-07-01 12:00:00", 1782871200000},  // AEST, +10: 02:00Z
                         {"2026-04-05 02:30:00", 1775316600000},  // repeated: the first pass, AEDT, 15:30Z
                         {"2026-04-05 03:00:00", 1775322000000},  // AEST, 17:00Z
                         {"2026-10-04 02:30:00", 1791045000000},  // skipped: +10:00, 16:30Z
                         {"2026-10-04 03:00:00", 1791043200000},  // the first second of AEDT, 16:00Z
                     });
  // The year of a syslog stamp is the year in the named zone: 2026-12-31
  // 14:00Z is already 2027-01-01 01:00 in Sydney.
  const LogTime syslog = make(spec(Form::Syslog), named_zone("Australia/Sydney"), 0);
  CHECK(syslog.parse("Jan  1 00:10:00 host", 1798725600000).value_or(kNone) == 1798722600000);
}

TEST_CASE("logtime: loghub first lines") {
  struct Case {
    TimestampSpec spec;
    int year;
    const char* line;
    int64_t want;
  };
  const std::vector<Case> cases = {
      {spec(Form::Auto), 2026,
       "Dec 10 06:55:46 LabSZ sshd[24200]: reverse mapping checking getaddrinfo for ns.marryaldkfaczcz.com "
       "[173.234.31.186] failed - POSSIBLE BREAK-IN ATTEMPT!",
       1796885746000},
      {spec(Form::Auto), 2026,
       "Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication failure; logname= uid=0 euid=0 tty=NODEVssh "
       "ruser= rhost=218.188.2.4 ",
       1781450161000},
      {spec(Form::Auto), 2026,
       "Jul  1 09:00:55 calvisitor-10-105-160-95 kernel[0]: IOThunderboltSwitch<0>(0x0)::listenerCallback - "
       "Thunderbolt HPD packet for route = 0x0 port = 11 unplug = 0",
       1782896455000},
      {spec(Form::Auto), 0,
       "2015-07-29 17:41:44,747 - INFO  [QuorumPeer[myid=1]/0:0:0:0:0:0:0:0:2181:FastLeaderElection@774] - "
       "Notification time out: 3200",
       1438191704747},
      {spec(Form::Auto), 0,
       "2015-10-18 18:01:47,978 INFO [main] org.apache.hadoop.mapreduce.v2.app.MRAppMaster: Created MRAppMaster "
       "for application appattempt_1445144423722_0020_000001",
       1445191307978},
      {spec(Form::Strptime, "%y%m%d %H%M%S"), 0,
       "081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 for block blk_38865049064139660 "
       "terminating",
       1226262975000},
      {spec(Form::Strptime, "%y/%m/%d %H:%M:%S"), 0,
       "17/06/09 20:10:40 INFO executor.CoarseGrainedExecutorBackend: Registered signal handlers for [TERM, HUP, "
       "INT]",
       1497039040000},
      {spec(Form::Strptime, "%a %b %d %H:%M:%S %Y", R"(^\[(.*?)\])"), 0,
       "[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok /etc/httpd/conf/workers2.properties", 1133671664000},
  };
  for (const Case& c : cases) {
    const std::string line = c.line;
    CAPTURE(line);
    CHECK(make(c.spec, zone(0), c.year).parse(c.line, kNow).value_or(kNone) == c.want);
  }
}

namespace {

// Random lines built from fragments of every form the parser knows, valid
// and not: stamps with fields in and out of range, digits, colons, letters
// and brackets, glued with and without spaces, cut short, stamps at any
// offset, and runs of lines that repeat a stamp's head with another
// fraction, offset or tail, as logs do, so that the memos are exercised.
class LineMaker {
 public:
  explicit LineMaker(uint64_t seed) : rng_(seed) {}

  std::string line() {
    std::string out;
    if (!last_.empty() && one_in(20)) {
      out = last_;  // the same line again, or its stamp with another ending
      if (one_in(2)) out = out.substr(0, pick(out.size() + 1)) + noise();
    } else {
      switch (pick(10)) {
        case 0: out = epoch(); break;
        case 1: out = rfc3339(); break;
        case 2: out = syslog(); break;
        case 3: out = clf().substr(1); break;     // a strptime "%d/%b/%Y:%H:%M:%S %z" at the start
        case 4: out = "{" + json_epoch(); break;  // a JSON object, where epoch numbers count
        case 5: out = iso_basic(); break;         // at the start, where basic ISO 8601 counts
        case 6:
          out = json_object();  // a whole JSON object: its stamp fields come first
          last_ = out;
          return out;
        default: break;
      }
      const size_t parts = 1 + pick(6);
      for (size_t k = 0; k < parts; ++k) {
        if (!out.empty()) out += separator();
        out += pick(100) < 45 ? stamp() : noise();
      }
      if (one_in(10)) out.resize(pick(out.size() + 1));  // cut short, maybe inside a stamp
    }
    last_ = out;
    return out;
  }

 private:
  size_t pick(size_t n) { return static_cast<size_t>(rng_() % n); }
  bool one_in(size_t n) { return pick(n) == 0; }
  template <size_t N>
  const char* any(const char* const (&options)[N]) {
    return options[pick(N)];
  }

  std::string digits(size_t n) {
    std::string s;
    for (size_t k = 0; k < n; ++k) s += static_cast<char>('0' + pick(10));
    return s;
  }
  static std::string padded(int v, int width) {
    std::string s = std::to_string(v);
    while (static_cast<int>(s.size()) < width) s.insert(0, "0");
    return s;
  }
  // Mostly in range; now and then just out of it, or anything two digits hold.
  std::string field(int lo, int hi) {
    const size_t r = pick(100);
    if (r < 85) return padded(lo + static_cast<int>(pick(static_cast<size_t>(hi - lo + 1))), 2);
    if (r < 92) return padded(r % 2 ? hi + 1 : lo - 1 < 0 ? 0 : lo - 1, 2);
    return digits(2);
  }
  std::string year() {
    static const char* const kYears[] = {"1969", "1970", "1600", "2000", "2024", "2027", "2028", "2038",
                                         "2099", "2100", "2400", "0000", "9999", "1893", "1900"};
    const size_t r = pick(100);
    if (r < 80) return "2026";
    if (r < 93) return any(kYears);
    return digits(4);
  }
  std::string month_abbr() {
    static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    static const char* const kOdd[] = {"NOV", "nov", "Now", "Sept", "November", "Xyz", "No"};
    return one_in(12) ? any(kOdd) : any(kMonths);
  }
  std::string hms() { return field(0, 23) + ":" + field(0, 59) + ":" + field(0, 60); }
  std::string fraction() {
    switch (pick(8)) {
      case 0: return ".";
      case 1: return "," + digits(1 + pick(9));
      case 2:
      case 3: return "." + digits(3);
      case 4: return "." + digits(1 + pick(9));
      default: return "";
    }
  }
  std::string offset() {
    static const char* const kOffsets[] = {"Z",      "z",      "+00:00", "+02:00", "-05:30", "+0200", "+02", "-0700",
                                           "+24:00", "+02:60", "+02001", "+2",     "+",      "-",     "Zx",  "+14:45"};
    return one_in(3) ? "" : any(kOffsets);
  }
  // Swaps one byte of a stamp for one that often appears in stamps.
  std::string mangle(std::string s) {
    static const char kBytes[] = "0123456789-:T /[]+.,Z";
    if (!s.empty() && one_in(15)) s[pick(s.size())] = kBytes[pick(sizeof kBytes - 1)];
    return s;
  }

  std::string rfc3339() {
    if (rfc_head_.empty() || pick(10) >= 7) {
      static const char* const kSeparators[] = {"T", "T", "T", " ", "t", "x", "  "};
      rfc_head_ = year() + "-" + (one_in(30) ? "1" : field(1, 12)) + "-" + field(1, 31) + any(kSeparators) +
                  field(0, 23) + ":" + field(0, 59);
      if (!one_in(8)) rfc_head_ += ":" + field(0, 60);
      rfc_head_ = mangle(rfc_head_);
    }
    std::string s = rfc_head_ + fraction() + offset();
    if (one_in(25)) s += digits(1);
    return s;
  }
  std::string syslog() {
    if (syslog_head_.empty() || pick(10) >= 7) {
      std::string day;
      switch (pick(8)) {
        case 0: day = " " + std::to_string(1 + pick(9)); break;  // "Jul  1"
        case 1: day = std::to_string(1 + pick(9)); break;        // "Jul 1"
        case 2: day = digits(3); break;
        case 3: day = "  " + field(1, 31); break;
        default: day = field(1, 31); break;
      }
      syslog_head_ = mangle(month_abbr() + " " + day + " " + hms());
    }
    std::string s = syslog_head_;
    if (one_in(4)) s += fraction();
    if (one_in(6)) {
      static const char* const kAfter[] = {" ", "\t", "]", ")", "x", "", "0"};
      s += " " + year() + any(kAfter);
    }
    if (one_in(25)) s += digits(1);
    return s;
  }
  std::string clf() {
    if (clf_head_.empty() || pick(10) >= 7) {
      clf_head_ = mangle("[" + (one_in(30) ? std::to_string(1 + pick(9)) : field(1, 31)) + "/" + month_abbr() + "/" +
                         year() + ":" + hms());
    }
    static const char* const kEnds[] = {" +0000]", " +0000]", " -0700]", " +02:00]", "]", " +00000]",
                                        " x]",     " +0000",  " +2400]", " Z]",      "",  " -0130]"};
    return clf_head_ + any(kEnds);
  }
  std::string epoch() {
    std::string s = "1" + digits(8 + pick(6));  // 9 to 14 digits
    if (one_in(3)) s += "." + digits(1 + pick(6));
    if (one_in(10)) s += ",5";
    return s;
  }
  std::string ymd_slash() {
    static const char* const kSeparators[] = {" ", " ", " ", "T", "  ", "/"};
    std::string s = mangle(year() + "/" + field(1, 12) + "/" + field(1, 31) + any(kSeparators) + hms());
    if (one_in(8)) s = s.substr(0, s.size() - 3);  // no seconds
    s += fraction();
    if (one_in(4)) s += offset();
    if (one_in(25)) s += digits(1);
    return s;
  }
  std::string iso_basic() {
    static const char* const kSeparators[] = {"T", "T", "T", "t", " "};
    std::string s =
        mangle(year() + field(1, 12) + field(1, 31) + any(kSeparators) + field(0, 23) + field(0, 59) + field(0, 60));
    s += fraction() + offset();
    if (one_in(25)) s += digits(1);
    return s;
  }
  // A valid JSON object whose keys include stamp fields, in any order and
  // with values that read as a time or not, and a message quoting a stamp.
  std::string json_object() {
    static const char* const kKeys[] = {"ts",   "time",  "timestamp", "@timestamp", "datetime",
                                        "date", "T",     "t",         "eventTime",  "__REALTIME_TIMESTAMP",
                                        "msg",  "level", "TS",        "when"};
    auto quoted = [](const std::string& text) {
      std::string q = "\"";
      for (const char c : text) {
        if (c == '"' || c == '\\') q += '\\';
        if (static_cast<unsigned char>(c) < 0x20) continue;
        q += c;
      }
      return q + "\"";
    };
    std::string s = "{";
    const size_t n = 1 + pick(5);
    for (size_t k = 0; k < n; ++k) {
      if (k > 0) s += one_in(2) ? "," : ", ";
      s += quoted(any(kKeys)) + (one_in(3) ? " : " : ":");
      switch (pick(7)) {
        case 0: s += quoted(rfc3339()); break;
        case 1: {
          // (A fraction only on seconds: the model reads a JSON float through
          // a double, exact to 17 digits.)
          const size_t d = kEpochDigits[pick(7)];
          s += "1" + digits(d) + (d == 9 && one_in(2) ? "." + digits(1 + pick(4)) : "");
          break;
        }
        case 2: s += quoted("1" + digits(kEpochDigits[pick(7)])); break;
        case 3: s += quoted("cert expired at " + stamp()); break;
        case 4: s += "1" + digits(pick(5)); break;  // a count, not a time
        case 5: s += one_in(2) ? "{\"ts\":1767294000}" : "[1767294000,\"x\"]"; break;
        default: s += quoted(noise()); break;
      }
    }
    return s + "}";
  }
  static constexpr size_t kEpochDigits[] = {9, 12, 15, 18, 8, 10, 6};
  std::string json_epoch() {
    static const char* const kKeys[] = {"ts", "time",  "timestamp", "@timestamp", "__REALTIME_TIMESTAMP",
                                        "TS", "times", "t",         "xts",        "timestamp_ms"};
    static const char* const kColons[] = {":", ":", ":", " : ", ": ", "=", ":\t"};
    static const size_t kDigits[] = {9, 12, 15, 18, 8, 10, 13};  // after the "1": 10, 13, 16, 19 digits, or not
    std::string number = "1" + digits(kDigits[pick(7)]);
    if (one_in(3)) number += "." + digits(1 + pick(6));
    if (one_in(12)) number += any({"e3", "E", ".", "x"});
    const bool quoted = one_in(2);
    std::string s = "\"" + std::string(any(kKeys)) + "\"" + any(kColons);
    s += quoted ? "\"" + number + (one_in(10) ? "" : "\"") : number;
    if (one_in(2)) s += one_in(2) ? "}" : ",\"level\":\"info\"}";
    return s;
  }
  std::string stamp() {
    const size_t r = pick(100);
    std::string s = r < 30   ? rfc3339()
                    : r < 50 ? syslog()
                    : r < 68 ? clf()
                    : r < 75 ? epoch()
                    : r < 83 ? ymd_slash()
                    : r < 91 ? iso_basic()
                             : json_epoch();
    if (one_in(10)) s = "ts=" + s;
    if (one_in(10)) s = "at " + s;
    return s;
  }
  std::string noise() {
    static const char* const kWords[] = {"Nov",    "Dec",  "Jan", "abc", "com", "INFO",   "ERROR",
                                         "sshd",   "host", "at",  "T",   "Z",   "web-02", "java",
                                         "Caused", "by",   "x",   "Sun", "May"};
    static const char* const kClocks[] = {"10:00", "12:34:56",       "99:99",     "1:2", "0:0:0:0", "00:00:00:00",
                                          "23:59", "port 49772:11:", "java:682)", "::",  "1:23:45"};
    static const char kPunct[] = " -[]():/.,+Z\tT=\"'<>|";
    switch (pick(9)) {
      case 0:
      case 1: return any(kWords);
      case 2: return digits(1 + pick(14));
      case 3: return any(kClocks);
      case 4: return std::string(1, kPunct[pick(sizeof kPunct - 1)]);
      case 5:
        return std::to_string(pick(256)) + "." + std::to_string(pick(256)) + "." + std::to_string(pick(256)) + "." +
               std::to_string(pick(256));
      case 6: return std::string(1, static_cast<char>(pick(256)));  // any byte, NUL and >= 0x80 too
      case 7: return "\tat com.example.orders.OrderService.place(OrderService.java:" + digits(3) + ")";
      default: return digits(2) + ":" + digits(2);
    }
  }
  std::string separator() {
    switch (pick(10)) {
      case 0:
      case 1: return "";
      case 2: return "\t";
      case 3: return std::string(1, "-[]:/,"[pick(6)]);
      default: return " ";
    }
  }

  std::mt19937_64 rng_;
  std::string last_, rfc_head_, syslog_head_, clf_head_;
};

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> real_lines() {
  std::vector<std::string> lines;
  const std::string root = SWTHROTTLE_SOURCE_DIR;
  for (const char* f :
       {"tests/data/loghub/Apache_2k.log", "tests/data/loghub/Linux_2k.log", "tests/data/loghub/OpenSSH_2k.log",
        "examples/app.log", "examples/cron.txt", "examples/app-errors/app.log", "examples/kernel/syslog",
        "examples/nginx/access.log", "examples/sshd/auth.log", "examples/systemd/journal.txt"}) {
    const auto file = read_lines(root + "/" + f);
    INFO(f);
    CHECK(!file.empty());
    lines.insert(lines.end(), file.begin(), file.end());
  }
  return lines;
}

// "Now" for each line: a value held for a run of lines (the program reads the
// clock now and then), around New Year, Feb 29, the epoch, and anywhere.
std::vector<int64_t> walls_for(size_t n, uint64_t seed) {
  static const int64_t kWalls[] = {
      kNow, 1798763400000, 1798758000000, 1867017600000, 1803859200000,   1835438400000, 1767227400000,
      0,    -34560000000,  1782896455000, 1774746000000, 253402300799000, 1438191704747};
  std::mt19937_64 rng(seed);
  std::vector<int64_t> walls;
  while (walls.size() < n) {
    const int64_t wall = rng() % 3 != 0 ? kWalls[rng() % std::size(kWalls)]
                                        : static_cast<int64_t>(rng() % 4102444800000u);  // 1970..2100
    walls.insert(walls.end(), 1 + rng() % 200, wall);
  }
  walls.resize(n);
  return walls;
}

struct Kind {
  const char* name;
  TimestampSpec spec;
};

// Every kind of `timestamp`; strptime and match in a few variants each.
std::vector<std::vector<Kind>> kinds() {
  return {
      {{"auto", spec(Form::Auto)}},
      {{"rfc3339", spec(Form::Rfc3339)}},
      {{"syslog", spec(Form::Syslog)}},
      {{"epoch", spec(Form::Epoch)}},
      {{"clf", spec(Form::Clf)}},
      {{"ymd_slash", spec(Form::YmdSlash)}},
      {{"iso_basic", spec(Form::IsoBasic)}},
      {{"json_epoch", spec(Form::JsonEpoch)}},
      {{"strptime %d/%b/%Y:%H:%M:%S %z", spec(Form::Strptime, "%d/%b/%Y:%H:%M:%S %z")},
       {"strptime %b %d %H:%M:%S", spec(Form::Strptime, "%b %d %H:%M:%S")},
       {"strptime %Y-%m-%dT%H:%M:%S.%f%z", spec(Form::Strptime, "%Y-%m-%dT%H:%M:%S.%f%z")}},
      {{"match clf", spec(Form::Strptime, "clf", R"((\[.*))")},
       {"match auto", spec(Form::Auto, "", R"((?:at |ts=)(.*))")},
       {"match rfc3339", spec(Form::Strptime, "rfc3339", R"(ts=(\S+))")},
       {"match %d/%b/%Y:%H:%M:%S %z", spec(Form::Strptime, "%d/%b/%Y:%H:%M:%S %z", R"(\[([^\]]*)\])")}},
  };
}

struct Zone {
  const char* name;
  TimezoneSpec tz;
};

// A line for a message: bytes outside printable ASCII as \xNN.
std::string escaped(std::string_view line) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : line) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') {
      out += c;
    } else {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

// Compares LogTime with the model line by line; reports the first difference.
// Returns on how many lines the model found a stamp.
size_t compare_all(const Kind& kind, const Zone& zone, int year, const std::vector<std::string>& lines,
                   const std::vector<int64_t>& walls) {
  const swthrottle::test::LogTimeModel model(kind.spec, zone.tz, year);
  const LogTime lt = make(kind.spec, zone.tz, year);
  size_t differ = 0, stamps = 0;
  std::string first;
  for (size_t k = 0; k < lines.size(); ++k) {
    // A copy of exactly the line's bytes: AddressSanitizer catches a read past its end.
    const std::unique_ptr<char[]> copy(new char[lines[k].size()]);
    std::memcpy(copy.get(), lines[k].data(), lines[k].size());
    const std::string_view line(copy.get(), lines[k].size());
    const auto want = model.parse(line, walls[k]);
    const auto got = lt.parse(line, walls[k]);
    stamps += want.has_value();
    if (want != got && differ++ == 0) {
      first = "line " + std::to_string(k) + " \"" + escaped(line) + "\" now=" + std::to_string(walls[k]) + ": want " +
              (want ? std::to_string(*want) : "none") + ", got " + (got ? std::to_string(*got) : "none");
    }
  }
  INFO(std::string(kind.name) << ", zone " << std::string(zone.name) << ", year " << year << ": " << differ
                              << " differ; first: " << first);
  CHECK(differ == 0);
  return stamps;
}

}  // namespace

// A named zone is read as the machine's zone is when TZ names it: the
// model (which reads TZ through mktime) agrees line by line, in a northern,
// a southern and a zone whose rules changed often. Over 1970 to 2037 only:
// the date library reads the transitions the zone files list (Debian writes
// them up to 2037) and not the rule after them, which glibc extends.
TEST_CASE("logtime: a named zone gives what the local zone gives when TZ names it, 1970 to 2037") {
  const uint64_t seed = swthrottle::test::base_seed(20260405);
  MESSAGE("seed " << seed << " (SWTHROTTLE_SEED=N replays)");
  LineMaker maker(seed);
  std::vector<std::string> lines;
  for (size_t k = 0; k < 30000; ++k) lines.push_back(maker.line());
  const std::vector<int64_t> walls = walls_for(lines.size(), seed + 1);
  constexpr int64_t k2038 = 2145916800000;  // 2038-01-01T00:00:00Z
  for (const char* name : {"Europe/Berlin", "Australia/Sydney", "America/Santiago"}) {
    CAPTURE(name);
    const ScopedTz tz(name);
    const swthrottle::test::LogTimeModel model(spec(Form::Auto), local_zone(), 0);
    const LogTime lt = make(spec(Form::Auto), named_zone(name), 0);
    size_t compared = 0, differ = 0;
    std::string first;
    for (size_t k = 0; k < lines.size(); ++k) {
      const auto want = model.parse(lines[k], walls[k]);
      // A day's margin: a stamp near either end may be read in one zone and not the other.
      if (want && (*want < 86'400'000 || *want > k2038 - 86'400'000)) continue;
      ++compared;
      const auto got = lt.parse(lines[k], walls[k]);
      if (want != got && differ++ == 0)
        first = escaped(lines[k]) + ": want " + (want ? std::to_string(*want) : "none") + ", got " +
                (got ? std::to_string(*got) : "none");
    }
    INFO("first difference: " << first);
    CHECK(differ == 0);
    CHECK(compared > lines.size() / 2);
  }
}

// Every kind of `timestamp` in every zone (UTC, a fixed offset, local) and
// with year 0 and a fixed year, over the real lines and 240 000 generated
// ones, a sixth of them for each zone and year.
TEST_CASE("logtime: the same results as the model, over real and generated lines") {
  const uint64_t seed = swthrottle::test::base_seed(20261121);
  MESSAGE("seed " << seed << " (SWTHROTTLE_SEED=N replays)");
  const std::vector<std::string> real = real_lines();
  REQUIRE(real.size() > 6000);
  constexpr size_t kSlice = 40000;
  LineMaker maker(seed);
  std::vector<std::string> generated;
  for (size_t k = 0; k < 6 * kSlice; ++k) generated.push_back(maker.line());
  const std::vector<int64_t> real_walls(real.size(), kNow);
  const std::vector<int64_t> walls = walls_for(generated.size(), seed + 1);

  // Europe/Berlin has had offsets that are no whole quarter hours (LMT +00:53:28 until 1893).
  const ScopedTz berlin("Europe/Berlin");
  const std::vector<Zone> zones = {{"UTC", zone(0)}, {"+02:00", zone(120)}, {"local Europe/Berlin", local_zone()}};
  size_t variant = 0;
  for (const auto& variants : kinds()) {
    size_t slice = 0;
    for (const Zone& z : zones) {
      for (const int year : {0, 2026}) {
        const Kind& kind = variants[variant++ % variants.size()];
        compare_all(kind, z, year, real, real_walls);
        const std::vector<std::string> lines(generated.begin() + static_cast<std::ptrdiff_t>(slice * kSlice),
                                             generated.begin() + static_cast<std::ptrdiff_t>((slice + 1) * kSlice));
        const std::vector<int64_t> line_walls(walls.begin() + static_cast<std::ptrdiff_t>(slice * kSlice),
                                              walls.begin() + static_cast<std::ptrdiff_t>((slice + 1) * kSlice));
        ++slice;
        // The generator must keep making stamps of every kind (about 1 % to 40 % of its lines have one).
        INFO(std::string(kind.name));
        CHECK(compare_all(kind, z, year, lines, line_walls) > kSlice / 500);
      }
    }
  }
}

// The strptime subset beyond the formats above: lines written by strftime()
// with the same format (a random fraction for %f), a third of them with one
// byte changed, read by LogTime and by the model in every zone and with and
// without a year.
TEST_CASE("logtime: strptime formats give the model's results") {
  const uint64_t seed = swthrottle::test::base_seed(1969);
  MESSAGE("seed " << seed << " (SWTHROTTLE_SEED=N replays)");
  std::mt19937_64 rng(seed);
  const ScopedTz berlin("Europe/Berlin");
  const std::vector<Zone> zones = {{"UTC", zone(0)}, {"+02:00", zone(120)}, {"local Europe/Berlin", local_zone()}};
  for (const char* format : {"%Y-%m-%d %H:%M:%S", "%d/%m/%y %I:%M:%S %p", "%j %T %Y", "%s.%f", "%b %e %T",
                             "%a, %e %B %Y %R %Z", "%D %T %z", "%F%t%T,%f", "%A %h %d %H:%M:%S", "%y%m%d %H%M%S %%"}) {
    std::vector<std::string> lines;
    for (int k = 0; k < 3000; ++k) {
      std::string fmt = format;
      if (const size_t f = fmt.find("%f"); f != std::string::npos) fmt.replace(f, 2, std::to_string(rng() % 1000000));
      const time_t t = static_cast<time_t>(rng() % 4102444800u);
      struct tm tm {};
      gmtime_r(&t, &tm);
      char buf[128];
      std::string line(buf, std::strftime(buf, sizeof buf, fmt.c_str(), &tm));
      static const char kBytes[] = " 0123456789:-/+ZAPMapm\t";
      if (rng() % 3 == 0 && !line.empty()) line[rng() % line.size()] = kBytes[rng() % (sizeof kBytes - 1)];
      lines.push_back(line + (rng() % 2 ? " rest of the line" : ""));
    }
    const std::vector<int64_t> walls = walls_for(lines.size(), rng());
    for (const Zone& z : zones) {
      for (const int year : {0, 2026}) {
        INFO(format);
        CHECK(compare_all({format, spec(Form::Strptime, format)}, z, year, lines, walls) > lines.size() / 2);
      }
    }
  }
}

// parse() is const and safe to call from several threads at once (the memos
// are seqlocks): threads that share one LogTime, each walking the lines in
// another order so that they keep replacing each other's memos, all get the
// model's results.
TEST_CASE("logtime: threads sharing one LogTime get the model's results") {
  const uint64_t seed = swthrottle::test::base_seed(4711);
  MESSAGE("seed " << seed << " (SWTHROTTLE_SEED=N replays)");
  LineMaker maker(seed);
  std::vector<std::string> lines;
  for (int k = 0; k < 20000; ++k) lines.push_back(maker.line());
  const std::vector<int64_t> walls = walls_for(lines.size(), seed + 1);
  for (const Form form : {Form::Auto, Form::Syslog}) {
    const swthrottle::test::LogTimeModel model(spec(form), zone(0), 0);
    std::vector<std::optional<int64_t>> want;
    for (size_t k = 0; k < lines.size(); ++k) want.push_back(model.parse(lines[k], walls[k]));
    const LogTime shared = make(spec(form), zone(0), 0);
    constexpr size_t kThreads = 4;
    std::array<size_t, kThreads> differ{};
    std::vector<std::thread> threads;
    for (size_t t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (size_t step = 0; step < lines.size(); ++step) {
          const size_t k = (step * (2 * t + 1) + t * 997) % lines.size();  // strides coprime to 20000
          if (shared.parse(lines[k], walls[k]) != want[k]) ++differ[t];
        }
      });
    }
    for (auto& th : threads) th.join();
    for (size_t t = 0; t < kThreads; ++t) {
      INFO("thread " << t);
      CHECK(differ[t] == 0);
    }
  }
}

// The search skips to a little before the first "dd:dd" of the line; the
// stamp may come after other clocks, and the skip may land inside a run of
// digits or letters, which the scan must see whole.
TEST_CASE("logtime: stamps after other clocks, digit runs and words") {
  const LogTime lt = make(spec(Form::Auto), zone(0), 2026);
  check_rows(lt, {
                     {"12345678901234567890 Nov 21 10:00:00 host", k20261121_100000},
                     {"abcdefghijklmnopqrstuvwxyz2026-11-21T10:00:05Z", k20261121_100005},
                     {"abcdefghijklmnopqrstuvwxyzNov 21 10:00:00", kNone},  // one word, not "Nov"
                     {"1234567890123452026-11-21T10:00:05Z", kNone},        // one run of digits, not a year
                     {"id 12:3 and 1:23:45 then [21/Nov/2026:10:00:00 +0000]", k20261121_100000},
                     {"12:34 2026-11-21T10:00:05Z", k20261121_100005},
                     {"took 12:34 ms on port 80:443", kNone},
                     {"\tat com.example.orders.OrderService.place(OrderService.java:682)", kNone},
                     {"x 2026-11-21T10:00", k20261121_100000},  // the stamp ends the line
                     {"2026-11-21T10:00", k20261121_100000},
                     {"Nov 21 10:00:00", k20261121_100000},
                     {"10:00:00 Nov 21 10:00:01", k20261121_100000 + 1000},
                     {"::::::::::: 2026-11-21 10:00:05", k20261121_100005},
                 });
}

// The memo of the last head: what follows the head is read anew every time.
TEST_CASE("logtime: lines that repeat a stamp's date and time") {
  const LogTime lt = make(spec(Form::Auto), zone(120), 2026);
  check_rows(lt, {
                     {"2026-11-21T10:00:05.123Z a", k20261121_100005 + 123},
                     {"2026-11-21T10:00:05.5+02:00 b", 1795248005000 + 500},  // 08:00:05.5Z
                     {"2026-11-21T10:00:05 c", 1795248005000},                // the configured +02:00
                     {"2026-11-21T10:00:05,7-05:30 d", 1795275005000 + 700},  // 15:30:05.7Z
                     {"2026-11-21T10:00:059", kNone},                         // a digit after the seconds
                     {"2026-11-21T10:00:05+24:00 then Nov 21 10:00:00", k20261121_100000 - 7200000},
                     {"2026-11-21T10:00:05.250Z", k20261121_100005 + 250},
                     {"2026-11-21T10:00Z", k20261121_100000},  // no seconds: not the memo's head
                     {"2026-11-21T10:00:05Z", k20261121_100005},
                     {"x 2026-11-21T10:00:05Z", k20261121_100005},  // the same head further on
                     {"2026-11-21 23:59:60.5Z", 1795305599999},     // a leap second, twice
                     {"2026-11-21 23:59:60.5Z", 1795305599999},
                     {"2026-11-21 23:59:60+01:00", 1795301999999},  // 22:59:59.999Z
                     {"[21/Nov/2026:10:00:00 +0000]", k20261121_100000},
                     {"[21/Nov/2026:10:00:00 -0700]", 1795280400000},  // 17:00Z
                     {"[21/Nov/2026:10:00:00]", 1795248000000},        // the configured +02:00
                     {"[21/Nov/2026:10:00:00 +0000", kNone},
                     {"[21/Nov/2026:10:00:00 +00000]", kNone},
                     {"[21/Nov/2026:10:00:00 +0000]", k20261121_100000},
                 });
}

// A syslog stamp's year depends on now: the memo of its head is good for one
// value of now only.
TEST_CASE("logtime: lines that repeat a syslog stamp as now moves") {
  const LogTime lt = make(spec(Form::Syslog), zone(0), 0);
  const int64_t new_year = 1798763400000;                                                  // 2027-01-01 00:30:00Z
  CHECK(lt.parse("Jan  2 00:30:00 host", new_year).value_or(kNone) == 1798849800000);      // a day ahead: 2027
  CHECK(lt.parse("Jan  2 00:30:00 host", new_year - 1).value_or(kNone) == 1767313800000);  // more: 2026
  CHECK(lt.parse("Jan  2 00:30:00 host", new_year).value_or(kNone) == 1798849800000);
  CHECK(lt.parse("Jan  2 00:30:00.001 host", new_year).value_or(kNone) == 1767313800001);
  CHECK(lt.parse("Feb 29 12:00:00 host", 1867017600000).value_or(kNone) == 1835438400000);  // now 2029-03-01
  CHECK(lt.parse("Feb 29 12:00:00 host", 1803859200000).value_or(kNone) == kNone);          // now 2027-03-01
  CHECK(lt.parse("Feb 29 12:00:00 host", 1867017600000).value_or(kNone) == 1835438400000);
  CHECK(lt.parse("Dec 04 04:47:44 host", kNow).value_or(kNone) == 1764823664000);       // 2026-12-04 is 13 days ahead
  CHECK(lt.parse("Dec 04 04:47:44 2005 host", kNow).value_or(kNone) == 1133671664000);  // the year in the line
  CHECK(lt.parse("Dec 04 04:47:44.5 host", kNow).value_or(kNone) == 1764823664500);
  CHECK(lt.parse("Dec 04 04:47:445 host", kNow).value_or(kNone) == kNone);
  const LogTime fixed = make(spec(Form::Syslog), zone(0), 2026);
  CHECK(fixed.parse("Jan  2 00:30:00 host", new_year).value_or(kNone) == 1767313800000);
  CHECK(fixed.parse("Jan  2 00:30:00 host", kNow).value_or(kNone) == 1767313800000);
  CHECK(fixed.parse("Feb 29 12:00:00 host", kNow).value_or(kNone) == kNone);
}
