// A thousand rules (issue #17 item 2): the compiled rule set is shared by the
// decider and the -j workers, and each worker compiles the RE2 objects it
// searches with on first use (match/matcher.h). None of that may change a
// record: the same generated pack gives the same records at -j 1 and -j 2,
// with and without the literal prefilter (SWTHROTTLE_NO_PREFILTER).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

const std::string kSourceDir = SWTHROTTLE_SOURCE_DIR;

// Words of a shared rule pack: daemons and their messages. Some of them are
// in the loghub samples (sshd, "authentication failure", "Connection closed"),
// so many lines hold a literal of some rule without its whole pattern.
const std::vector<std::string> kPrograms = {
    "sshd",     "kernel", "su",      "ftpd",    "named",   "postfix/smtpd", "dovecot", "nginx",  "haproxy",
    "postgres", "mysqld", "kubelet", "dockerd", "systemd", "CRON",          "sudo",    "vsftpd", "openvpn",
    "slapd",    "squid",  "clamd",   "smartd",  "mdadm",   "chronyd",       "dhcpd",
};
const std::vector<std::string> kPhrases = {
    "authentication failure",
    "Connection closed by",
    "Received disconnect from",
    "Invalid user",
    "Failed password for",
    "connection from",
    "session opened for user",
    "check pass; user unknown",
    "permission denied",
    "timed out waiting for",
    "too many open files",
    "certificate verify failed",
    "no space left on device",
    "Cannot allocate memory",
    "lost connection to",
    "unexpected EOF",
    "protocol error",
    "bad signature",
    "login incorrect",
    "relay access denied",
    "failed to start",
    "main process exited",
    "watchdog timeout",
    "read-only file system",
    "remote I/O error",
    "broken pipe",
    "TLS handshake error",
    "quorum lost",
    "write failed",
    "deadlock found",
    "too many connections",
    "upstream timed out",
    "rate limit exceeded",
    "denied by ACL",
    "DNS lookup failed",
    "clock unsynchronized",
    "error: Received disconnect",
    "pam_unix(sshd:auth)",
    "Did not receive identification string",
    "reverse mapping checking getaddrinfo",
};

// RE2's metacharacters escaped.
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view(".[](){}*+?|^$\\").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// `count` rules: daemon x phrase, alternately unkeyed (`prog\[pid\]: .*phrase`)
// and keyed by the first IPv4 address after the phrase, with a few `ignore`s.
std::string rule_pack(std::size_t count) {
  std::string toml = "[settings]\ntime = \"log\"\ntimezone = \"UTC\"\nyear = 2025\n\n";
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t combo = i / 2;
    const std::string& prog = kPrograms[combo % kPrograms.size()];
    const std::string& phrase = kPhrases[(combo / kPrograms.size()) % kPhrases.size()];
    const std::size_t round = combo / (kPrograms.size() * kPhrases.size());
    const std::string suffix = round > 0 ? " \\(code " + std::to_string(round) + "\\)" : "";
    toml += "[[rule]]\nname = \"pack-" + std::to_string(i) + "\"\nkind = \"alert\"\n";
    if (i % 2 == 0) {
      toml += "threshold = \"3 per 1m\"\n";
      toml += "  [[rule.event]]\n  name = \"hit\"\n  match = '" + escape(prog) + "(?:\\(pam_unix\\))?\\[[0-9]+\\]: .*" +
              escape(phrase) + suffix + "'\n";
    } else {
      toml += "threshold = \"2 per 5m\"\nkey = \"{ip}\"\nmessage = \"{count} from {ip}\"\n";
      if (i % 10 == 1) toml += "ignore = '\\b10\\.'\n";
      toml += "  [[rule.event]]\n  name = \"hit\"\n  match = '" + escape(prog) + "\\b.*" + escape(phrase) + suffix +
              ".*?(?P<ip>[0-9]+\\.[0-9]+\\.[0-9]+\\.[0-9]+)'\n";
    }
    toml += "\n";
  }
  return toml;
}

}  // namespace

TEST_CASE("e2e: 1000 generated rules give the same records at -j 1 and -j 2, with and without the prefilter") {
  TempDir dir;
  std::string log = swthrottle::test::read_file(kSourceDir + "/tests/data/loghub/OpenSSH_2k.log");
  if (log.back() != '\n') log += '\n';
  // Linux_2k's syslog lines too (sshd(pam_unix), ftpd, su), then lines that
  // only the Latin-1 reading or the full set decides: bytes >= 0x80.
  std::string linux_log = swthrottle::test::read_file(kSourceDir + "/tests/data/loghub/Linux_2k.log");
  for (std::size_t p = linux_log.find("Jun "); p != std::string::npos; p = linux_log.find("\nJun ", p + 1)) {
    const std::size_t at = linux_log[p] == '\n' ? p + 1 : p;
    linux_log.replace(at, 4, "Dec ");
  }
  log += linux_log;
  if (log.back() != '\n') log += '\n';
  for (int i = 0; i < 4; ++i) {  // enough for the keyed rule's "2 per 5m"
    log += "Dec 31 23:59:5" + std::to_string(i) + " LabSZ sshd[1]: Invalid user j\xf6rg from 192.0.2.7\n";
    log += "Dec 31 23:59:5" + std::to_string(i) + " LabSZ sshd[2]: Invalid user caf\xc3\xa9 from 192.0.2.8\n";
  }
  const std::string logfile = dir.write("mixed.log", log);
  const std::string rules = dir.write("pack.toml", rule_pack(1000));

  const RunResult check = swthrottle::test::run_swthrottle({"-r", rules, "--check"});
  REQUIRE(check.exit_status == 0);
  CHECK(check.out.find("\n1000 rules OK") != std::string::npos);
  CHECK(check.out.find("\nprefilter: off") == std::string::npos);  // the prefilter is on for this pack

  const RunResult one = swthrottle::test::run_swthrottle({"-r", rules, "--format", "json", "-j", "1", logfile});
  REQUIRE(one.exit_status == 0);
  // Real work: many records, from many rules, keyed ones among them.
  CHECK(std::count(one.out.begin(), one.out.end(), '\n') > 200);
  CHECK(one.out.find("\"rule\":\"pack-1\"") != std::string::npos);
  CHECK(one.out.find("\"key\":\"") != std::string::npos);
  CHECK(one.out.find("\"key\":\"192.0.2.7\"") != std::string::npos);  // the Latin-1 lines counted
  CHECK(one.out.find("\"key\":\"192.0.2.8\"") != std::string::npos);

  const RunResult two = swthrottle::test::run_swthrottle({"-r", rules, "--format", "json", "-j", "2", logfile});
  CHECK(two.exit_status == 0);
  CHECK(two.out == one.out);
  for (const char* j : {"1", "2"}) {
    CAPTURE(j);
    const RunResult plain =
        swthrottle::test::run_process({SWTHROTTLE_BINARY, "-r", rules, "--format", "json", "-j", j, logfile}, "",
                                      swthrottle::test::kDefaultTimeout, {{"SWTHROTTLE_NO_PREFILTER", "1"}});
    CHECK(plain.exit_status == 0);
    CHECK(plain.out == one.out);
  }
}
