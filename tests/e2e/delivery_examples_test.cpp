// The delivery examples (examples/delivery/; their --check is in
// examples_test.cpp with the others): the Alertmanager fragment passes
// amtool, and sendmail.sh mails a record without letting a log line add a
// header.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/test_daemon.h"  // find_program

namespace {

using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

const std::string kSourceDir = SWTHROTTLE_SOURCE_DIR;
const std::string kBinary = SWTHROTTLE_BINARY;

std::string example(const std::string& rel) { return kSourceDir + "/examples/delivery/" + rel; }

// A stand-in for sendmail(8): what it is given, appended to $1's file.
std::string fake_sendmail(TempDir& dir) {
  const std::string got = dir.file("mail.txt");
  const std::string script = dir.write("sendmail", "#!/bin/sh\necho \"ARGS: $*\" >> '" + got + "'\ncat >> '" + got +
                                                       "'\necho '-- end' >> '" + got + "'\n");
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  return script;
}

}  // namespace

TEST_CASE("examples/delivery: alertmanager-email.yml is a configuration Alertmanager takes") {
  const std::string amtool = swthrottle::test::find_program({"amtool"});
  REQUIRE_MESSAGE(!amtool.empty(), "amtool (prometheus-alertmanager) is not installed");
  const RunResult r = swthrottle::test::run_process({amtool, "check-config", example("alertmanager-email.yml")}, "");
  CHECK(r.exit_status == 0);
  CHECK(r.out.find("SUCCESS") != std::string::npos);
  CHECK(r.out.find("2 receivers") != std::string::npos);
}

TEST_CASE("examples/delivery: sendmail.sh mails the record, and a log line cannot add a header") {
  TempDir dir;
  const std::string sendmail = fake_sendmail(dir);
  const std::string record = R"({"id":"abc","type":"alert","rule":"ssh-bruteforce"})";
  const RunResult r = swthrottle::test::run_process({example("sendmail.sh"), "security@example.com"}, record + "\n",
                                                    swthrottle::test::kDefaultTimeout,
                                                    {{"SENDMAIL", sendmail},
                                                     {"SWTHROTTLE_TYPE", "alert"},
                                                     {"SWTHROTTLE_RULE", "ssh-bruteforce"},
                                                     {"SWTHROTTLE_KEY", "x\r\nBcc: thief@example.com"},
                                                     {"SWTHROTTLE_MESSAGE", "5 failed logins from x"}});
  CHECK(r.exit_status == 0);
  CHECK(swthrottle::test::read_file(dir.file("mail.txt")) ==
        "ARGS: -t -i\n"
        "To: security@example.com\n"
        "Subject: [swthrottle] alert ssh-bruteforce xBcc: thief@example.com\n"
        "Content-Type: text/plain; charset=utf-8\n"
        "\n"
        "5 failed logins from x\n"
        "\n" +
            record + "\n-- end\n");
}

TEST_CASE("examples/delivery: email-sendmail.toml mails each alert through its exec") {
  TempDir dir;
  const std::string sendmail = fake_sendmail(dir);
  // The example names its script relative to the repository: run from there.
  std::string log;
  for (int s = 0; s < 5; ++s)
    log +=
        "Nov 21 10:00:0" + std::to_string(s) + " bastion sshd[1]: Failed password for root from 203.0.113.9 port 22\n";
  const RunResult r = swthrottle::test::run_process(
      {"/bin/sh", "-c",
       "cd '" + kSourceDir + "' && exec '" + kBinary + "' --rule examples/delivery/email-sendmail.toml"},
      log, swthrottle::test::kDefaultTimeout, {{"SENDMAIL", sendmail}});
  CHECK(r.exit_status == 0);
  const std::string mail = swthrottle::test::read_file(dir.file("mail.txt"));
  CHECK(mail.find("Subject: [swthrottle] alert ssh-bruteforce 203.0.113.9\n") != std::string::npos);
  CHECK(mail.find("\n5 failed logins from 203.0.113.9\n") != std::string::npos);
  CHECK(mail.find("{\"id\":\"") != std::string::npos);  // the record, with its id
}
