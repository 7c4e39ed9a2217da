// Secrets stay secret (man page: DELIVERY, "Secrets"): a run whose every
// destination fails, dead-letters and keeps records in its outbox, and no
// output of it holds a secret: not stderr, not --stats (text or JSON), not
// the metrics file, not the outbox, the dead letters or the state file,
// not --check. Destinations are named by their name, or their origin.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/http_receiver.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::HttpReceiver;
using swthrottle::test::Reply;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

const std::string kBinary = SWTHROTTLE_BINARY;

// Every secret of the run below: URL paths and queries, a routing key, a
// header from a file, the token of the environment.
const std::vector<std::string> kSecrets = {"SLACKSECRET",  "PDSECRETKEY", "QUERYSECRET",
                                           "HEADERSECRET", "PATHSECRET",  "ENVTOKENSECRET"};

RunResult run(const std::vector<std::string>& args) {
  std::vector<std::string> argv{kBinary};
  argv.insert(argv.end(), args.begin(), args.end());
  return swthrottle::test::run_process(argv, "", swthrottle::test::kDefaultTimeout,
                                       {{"SWTHROTTLE_WEBHOOK_TOKEN", "Bearer-ENVTOKENSECRET"}});
}

// The secrets `text` holds, named by `what`.
std::vector<std::string> leaks(const std::string& what, const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& s : kSecrets)
    if (text.find(s) != std::string::npos) out.push_back(what + " holds " + s);
  return out;
}

}  // namespace

TEST_CASE("secrets: no output of a failing run holds a URL path or query, a key, a header or a token") {
  // Slack and PagerDuty refuse, echoing what they were sent (some services
  // do): dead letters. The two webhooks are down: kept in the outbox.
  HttpReceiver slack, pager, audit, plain;
  slack.otherwise(Reply(404, "", "no_service for /services/T0/B0/SLACKSECRET"));
  pager.otherwise(Reply(400, "", R"({"status":"invalid event","routing_key":"PDSECRETKEY0123456789abcdef01234"})"));
  audit.otherwise(Reply(503, "", "down"));
  plain.otherwise(Reply(503, "", "down"));
  TempDir dir;
  const std::string slack_url = dir.write("slack.url", slack.url("/services/T0/B0/SLACKSECRET") + "\n");
  const std::string audit_url = dir.write("audit.url", audit.url("/in?token=QUERYSECRET") + "\n");
  const std::string pd_key = dir.write("pd.key", "PDSECRETKEY0123456789abcdef01234\n");
  const std::string header = dir.write("header", "HEADERSECRET\n");
  const std::string rules = dir.write(
      "rules.toml",
      "[settings]\ntime = \"log\"\ntimezone = \"UTC\"\n\n[delivery]\ndrain = \"300ms\"\n\n"
      "[[delivery.destination]]\nname = \"ops-slack\"\npreset = \"slack\"\nurl_file = \"" +
          slack_url +
          "\"\n\n"
          "[[delivery.destination]]\nname = \"pager\"\npreset = \"pagerduty\"\nurl = \"" +
          pager.url("/v2/enqueue") + "\"\nkey_file = \"" + pd_key +
          "\"\n\n"
          "[[delivery.destination]]\nname = \"audit\"\nurl_file = \"" +
          audit_url + "\"\nheaders = { \"X-Token\" = { file = \"" + header +
          "\" } }\n\n"
          "[[rule]]\nname = \"login-failures\"\nkind = \"alert\"\nthreshold = \"3 per 1m\"\nkey = \"{user}\"\n"
          "  [[rule.event]]\n  name = \"failed\"\n  match = 'login failed user=(?P<user>\\w+)'\n");
  const std::string log = dir.write("auth.log",
                                    "2026-11-20T10:00:00Z login failed user=alice\n"
                                    "2026-11-20T10:00:01Z login failed user=alice\n"
                                    "2026-11-20T10:00:02Z login failed user=alice\n");
  const std::string state = dir.file("state.json");
  const std::string plain_url = plain.url("/path/PATHSECRET");
  const std::string metrics = dir.file("metrics.prom");

  const RunResult r =
      run({"-r", rules, "--webhook", plain_url, "--state", state, "--stats", "--metrics-file", metrics, log});
  CHECK(r.exit_status == 3);  // dead letters
  // The run did fail the way it should, destination by destination.
  CHECK(r.err.find("swthrottle: delivery: ops-slack: HTTP 404: no_service for <redacted>") != std::string::npos);
  CHECK(r.err.find("swthrottle: delivery: pager: HTTP 400: ") != std::string::npos);
  CHECK(r.err.find("swthrottle: delivery: audit: HTTP 503: down; retrying") != std::string::npos);
  CHECK(r.err.find("swthrottle: delivery: http://127.0.0.1:" + std::to_string(plain.port()) + ": HTTP 503") !=
        std::string::npos);
  CHECK(r.err.find("swthrottle: stats: delivery: ops-slack: queued 1") != std::string::npos);
  // The receivers did get the secrets: they were sent, only never shown.
  REQUIRE(audit.wait_for(1));
  CHECK(audit.requests()[0].query == "token=QUERYSECRET");
  CHECK(audit.requests()[0].header("X-Token") == "HEADERSECRET");
  CHECK(plain.requests()[0].header("Authorization") == "Bearer Bearer-ENVTOKENSECRET");

  std::vector<std::string> found = leaks("stderr", r.err);
  const std::string metrics_text = swthrottle::test::read_file(metrics);
  CHECK(metrics_text.find("swthrottle_delivery_dead_letters_total{destination=\"ops-slack\"} 1") != std::string::npos);
  for (const auto& l : leaks("the metrics file", metrics_text)) found.push_back(l);
  const std::string dead = swthrottle::test::read_file(state + ".dead");
  CHECK(dead.find("\"to\":\"pager\"") != std::string::npos);
  for (const auto& l : leaks("the dead letters", dead)) found.push_back(l);
  const std::string outbox = swthrottle::test::read_file(state + ".outbox");
  CHECK(outbox.find("\"to\":\"audit\"") != std::string::npos);
  for (const auto& l : leaks("the outbox", outbox)) found.push_back(l);
  for (const auto& l : leaks("the state file", swthrottle::test::read_file(state))) found.push_back(l);

  // Again, with the stats as JSON: the outbox's records are sent first.
  const RunResult j =
      run({"-r", rules, "--webhook", plain_url, "--state", state, "--stats", "--stats-format", "json", log});
  CHECK(j.err.find("\"destination\":\"audit\"") != std::string::npos);
  for (const auto& l : leaks("stderr with --stats-format json", j.err)) found.push_back(l);

  const RunResult check = run({"-r", rules, "--webhook", plain_url, "--check"});
  CHECK(check.exit_status == 0);
  for (const auto& l : leaks("--check", check.out + check.err)) found.push_back(l);
  CHECK(found == std::vector<std::string>{});
}

TEST_CASE("secrets: a URL with user:password@ is refused without repeating the password") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml",
                                      "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"1 per 1m\"\n"
                                      "  [[rule.event]]\n  name = \"e\"\n  match = 'x'\n");
  for (const std::string option : {"--webhook", "--alertmanager"}) {
    CAPTURE(option);
    const RunResult r = run({"-r", rules, option, "http://user:hunter2@127.0.0.1:9/hook"});
    CHECK(r.exit_status == 2);
    CHECK(r.err == "swthrottle: " + option +
                       ": the URL to http://127.0.0.1:9 holds credentials (user:password@): anyone can read them in "
                       "ps or the file; give them in SWTHROTTLE_WEBHOOK_BASIC_AUTH or [delivery] basic_auth_file "
                       "instead\n");
    CHECK(r.err.find("hunter2") == std::string::npos);
  }
  // In a url_file too: named by the file, never by the URL.
  const std::string url = dir.write("hook.url", "http://user:hunter2@127.0.0.1:9/hook\n");
  const std::string named = dir.write("named.toml", "[[delivery.destination]]\nname = \"n\"\nurl_file = \"" + url +
                                                        "\"\n\n" + swthrottle::test::read_file(rules));
  const std::string log = dir.write("x.log", "x\n");
  const RunResult r = run({"-r", named, log});
  CHECK(r.exit_status == 2);
  CHECK(r.err.find("swthrottle: " + url + ": the URL to http://127.0.0.1:9 holds credentials") == 0);
  CHECK(r.err.find("hunter2") == std::string::npos);
}
