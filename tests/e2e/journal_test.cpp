// End-to-end: journald input (`journalctl -o json | swthrottle --input
// journal`). Records of hand-written journalctl -o json entries: the window
// runs on __REALTIME_TIMESTAMP, alerts are keyed on _SYSTEMD_UNIT, and a
// MESSAGE sent as a byte array is matched and shown as its bytes.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

// One entry as journalctl -o json writes it (every value a string; MESSAGE
// an array of its bytes when it is not printable UTF-8). `sec` is seconds
// after 2026-11-21T10:00:00Z.
std::string entry(int sec, std::string_view unit, std::string_view priority, std::string_view message_json) {
  const std::string us = std::to_string(1795255200LL + sec) + "250000";  // and 250 ms
  return R"({"__CURSOR":"s=3f1c0e9b8a2d4c6f9e7d5b3a1c0e9b8a;i=)" + std::to_string(0x1a00 + sec) +
         R"(;b=9d4e2f6a8c0b4d7e9f1a3c5e7b9d1f3a;m=141f6960ce;t=660c66d51aa22;x=e42ad93f7491f2a3",)" +
         R"("__REALTIME_TIMESTAMP":")" + us + R"(","__MONOTONIC_TIMESTAMP":")" + std::to_string(86400000000LL + sec) +
         R"(","_BOOT_ID":"9d4e2f6a8c0b4d7e9f1a3c5e7b9d1f3a","PRIORITY":")" + std::string(priority) +
         R"(","_SYSTEMD_UNIT":")" + std::string(unit) + R"(","SYSLOG_IDENTIFIER":")" +
         std::string(unit.substr(0, unit.find('.'))) + R"(","_HOSTNAME":"db-2","MESSAGE":)" +
         std::string(message_json) + "}\n";
}

const char* const kRules = R"toml(
[[rule]]
name      = "unit-errors"
kind      = "alert"
threshold = "2 per 1m"
mode      = "accurate"
key       = "{._SYSTEMD_UNIT}"
message   = "{._HOSTNAME} {.SYSLOG_IDENTIFIER}: {.MESSAGE}"
  [[rule.event]]
  name   = "err"
  fields = { PRIORITY = "3", MESSAGE = { match = '^disk ' } }
)toml";

TEST_CASE("journal e2e: a window replay on __REALTIME_TIMESTAMP, keyed on _SYSTEMD_UNIT") {
  // 2 per 1m (accurate), cooldown 1m. pg.service errs at :00, :50 (alert: 2
  // in the window), 1:10 and 1:40 (in the cooldown, which ends at 1:50:
  // suppressed) and 2:10 (alert: 1:40, 2:10 in the window), the last as bytes: a BEL and a byte that
  // is not UTF-8. redis.service errs at :00 and 1:01, never 2 within a
  // minute: read at arrival (all at once) it would alert. A priority-4 and a
  // non-matching message count for nothing.
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string log = entry(0, "pg.service", "3", R"("disk full on /var/lib/pg")") +
                          entry(0, "redis.service", "3", R"("disk write failed")") +
                          entry(20, "pg.service", "4", R"("disk 91% full")") +
                          entry(30, "pg.service", "3", R"("checkpoint slow")") +
                          entry(50, "pg.service", "3", R"("disk full on /var/lib/pg")") +
                          entry(61, "redis.service", "3", R"("disk write failed")") +
                          entry(70, "pg.service", "3", R"("disk full on /var/lib/pg")") +
                          entry(100, "pg.service", "3", R"("disk full on /var/lib/pg")") +
                          // "disk \a full \xff"
                          entry(130, "pg.service", "3", "[100,105,115,107,32,7,32,102,117,108,108,32,255]");
  RunResult r = swthrottle::test::run_swthrottle({"--input", "journal", "--time", "log", "-r", rules}, log);
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  CHECK(r.out ==
        "swthrottle: alert unit-errors key=pg.service count=2 threshold=2 window=1m suppressed=0 "
        "time=2026-11-21T10:00:50.250Z: db-2 pg: disk full on /var/lib/pg\n"
        "swthrottle: alert unit-errors key=pg.service count=2 threshold=2 window=1m suppressed=2 "
        "time=2026-11-21T10:02:10.250Z: db-2 pg: disk \\u0007 full \xEF\xBF\xBD\n");
  // Matched on the deciding thread and by parallel matchers alike.
  for (const char* j : {"1", "2"}) {
    CAPTURE(j);
    CHECK(swthrottle::test::run_swthrottle({"-j", j, "--input", "journal", "--time", "log", "-r", rules}, log).out ==
          r.out);
  }
  // The same in JSON records: the message holds the decoded bytes.
  RunResult j =
      swthrottle::test::run_swthrottle({"--input", "journal", "--time", "log", "--format", "json", "-r", rules}, log);
  CHECK(j.exit_status == 0);
  CHECK(j.out.find("\"message\":\"db-2 pg: disk \\u0007 full \xEF\xBF\xBD\"") != std::string::npos);
}

TEST_CASE("journal e2e: --input json is format = json without the journal preset") {
  // Under --input json the byte array is no text, so the second entry does
  // not match and the alert waits for the third; under journal it is
  // "disk full" and the alert comes with the second.
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const std::string log = entry(0, "pg.service", "3", R"("disk full")") +
                          entry(1, "pg.service", "3", "[100,105,115,107,32,102,117,108,108]") +
                          entry(2, "pg.service", "3", R"("disk full")");
  const std::string head =
      "swthrottle: alert unit-errors key=pg.service count=2 threshold=2 window=1m suppressed=0 time=";
  RunResult json = swthrottle::test::run_swthrottle({"--input", "json", "--time", "log", "-r", rules}, log);
  CHECK(json.exit_status == 0);
  CHECK(json.out == head + "2026-11-21T10:00:02.250Z: db-2 pg: disk full\n");
  RunResult journal = swthrottle::test::run_swthrottle({"--input", "journal", "--time", "log", "-r", rules}, log);
  CHECK(journal.exit_status == 0);
  CHECK(journal.out == head + "2026-11-21T10:00:01.250Z: db-2 pg: disk full\n");
}

}  // namespace
