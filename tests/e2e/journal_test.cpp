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

TEST_CASE("journal e2e: match and ignore search MESSAGE, a string or an array of bytes") {
  // `match = 'Failed password'` as a user writes it for journalctl -o json.
  // 2 per 1m per address. 9.9.9.9 fails at :00 (a string), :05 (bytes: the
  // message holds a byte that is not UTF-8) and :07 (an escaped letter):
  // the alert comes at :05, the second in the window. 10.0.0.5 fails
  // twice, ignored (the ignore searches MESSAGE too); "Failed password" in
  // another field (SYSLOG_IDENTIFIER comes from the unit name) counts for
  // nothing.
  TempDir dir;
  const std::string rules = dir.write("rules.toml", R"toml(
[[rule]]
name      = "ssh"
kind      = "alert"
threshold = "2 per 1m"
key       = "{ip}"
ignore    = 'from 10\.'
message   = "{.MESSAGE}"
  [[rule.event]]
  name  = "fail"
  match = 'Failed password for \S+ from (?P<ip>[0-9.]+)'
)toml");
  auto bytes = [](std::string_view text) {
    std::string s = "[";
    for (char c : text) s += (s.size() > 1 ? "," : "") + std::to_string(static_cast<unsigned char>(c));
    return s + "]";
  };
  const std::string log = entry(0, "sshd.service", "5", R"("Failed password for root from 9.9.9.9 port 22")") +
                          entry(1, "sshd.service", "5", R"("Failed password for root from 10.0.0.5 port 22")") +
                          entry(2, "sshd.service", "5", bytes("Failed password for r\xf6t from 10.0.0.5 port 22")) +
                          entry(3, "Failed password for x from 8.8.8.8.service", "5", R"("session opened")") +
                          entry(4, "Failed password for x from 8.8.8.8.service", "5", R"("session opened")") +
                          entry(5, "sshd.service", "5", bytes("Failed password for r\xf6t from 9.9.9.9 port 22")) +
                          entry(7, "sshd.service", "5", R"("\u0046ailed password for root from 9.9.9.9 port 22")");
  const std::vector<std::string> args{"--input", "journal", "--time", "log", "-r", rules};
  RunResult r = swthrottle::test::run_swthrottle(args, log);
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  CHECK(r.out ==
        "swthrottle: alert ssh key=9.9.9.9 count=2 threshold=2 window=1m suppressed=0 "
        "time=2026-11-21T10:00:05.250Z: Failed password for r\xEF\xBF\xBDt from 9.9.9.9 port 22\n");
  // The same with -j 2, and with RE2 alone on every line (no prefilter).
  std::vector<std::string> j2 = args;
  j2.insert(j2.begin(), {"-j", "2"});
  CHECK(swthrottle::test::run_swthrottle(j2, log).out == r.out);
  std::vector<std::string> argv{SWTHROTTLE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  const RunResult plain =
      swthrottle::test::run_process(argv, log, swthrottle::test::kDefaultTimeout, {{"SWTHROTTLE_NO_PREFILTER", "1"}});
  CHECK(plain.out == r.out);
  // Passthrough writes the raw lines that matched, as read (JSON).
  std::vector<std::string> pass = args;
  pass.insert(pass.begin(), "--passthrough");
  const RunResult p = swthrottle::test::run_swthrottle(pass, log);
  CHECK(p.out.find(R"("MESSAGE":"Failed password for root from 9.9.9.9 port 22"})") != std::string::npos);
}

}  // namespace
