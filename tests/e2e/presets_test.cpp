// The destination presets end to end (man page: DELIVERY, "Presets"): the
// real binary posts an alert and its resolved record to a local receiver
// per vendor (support/vendor_receiver.h) that answers as the vendor's API
// would, from its documented schema. A request the vendor would refuse is
// refused there too: the delivery is dead-lettered, the exit status is 3,
// and the receiver says what it refused.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/vendor_receiver.h"

namespace {

using swthrottle::test::ReceivedRequest;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;
using swthrottle::test::Vendor;
using swthrottle::test::VendorReceiver;
using json = nlohmann::json;

// 32 characters, as PagerDuty's integration keys are.
const std::string kRoutingKey = "R0UT1NGKEY0123456789abcdefABCDEF";
const std::string kGenieKey = "eb243592-faa2-4ba2-a551-1afdf565c889";

// One alert rule (3 failed logins per user in a minute, resolved) with its
// own labels, annotations and generator_url, and the destination `table`.
// The user name is whatever follows "user=": a log line chooses it.
std::string rules_text(const std::string& table) {
  return "[settings]\ntime = \"log\"\ntimezone = \"UTC\"\n\n[delivery]\nlabels = { env = \"prod\", team = \"ops\" }\n\n"
         "[[delivery.destination]]\n" +
         table +
         "\n[[rule]]\nname = \"login-failures\"\nkind = \"alert\"\nthreshold = \"3 per 1m\"\nkey = \"{user}\"\n"
         "resolve = true\nmessage = \"{count} failed logins for {user}\"\n"
         "labels = { severity = \"critical\", team = \"identity\" }\n"
         "annotations = { runbook_url = \"https://runbooks.example/{rule}\" }\n"
         "generator_url = \"https://logs.example/search?rule={rule}\"\n"
         "  [[rule.event]]\n  name = \"failed\"\n  match = 'login failed user=(?P<user>\\S+)'\n";
}

// Three failures of `user` (an alert at the third), and a line two minutes
// later that resolves it.
std::string log_text(const std::string& user) {
  return "2026-11-20T10:00:00Z login failed user=" + user + "\n2026-11-20T10:00:01Z login failed user=" + user +
         "\n2026-11-20T10:00:02Z login failed user=" + user + "\n2026-11-20T10:03:00Z all quiet\n";
}

struct PresetRun {
  RunResult run;
  std::vector<ReceivedRequest> requests;
  std::vector<json> bodies;
};

PresetRun run_preset(VendorReceiver& receiver, const std::string& table, const std::string& user = "alice") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text(table));
  const std::string log = dir.write("auth.log", log_text(user));
  PresetRun out;
  out.run = swthrottle::test::run_swthrottle({"-r", rules, log});
  out.requests = receiver.requests();
  for (const auto& r : out.requests) out.bodies.push_back(json::parse(r.body));
  return out;
}

// A file in a fresh temporary directory that outlives the run.
std::string secret_file(TempDir& dir, const std::string& name, const std::string& text) {
  return dir.write(name, text + "\n");
}

}  // namespace

TEST_CASE("presets: slack gets text and blocks, every value escaped, nothing it would refuse") {
  VendorReceiver slack(Vendor::Slack);
  TempDir secrets;
  const std::string url = secret_file(secrets, "slack.url", slack.url("/services/T000/B000/XXXXXXXX"));
  const PresetRun p =
      run_preset(slack, "name = \"ops-slack\"\npreset = \"slack\"\nurl_file = \"" + url + "\"\n", "<!channel>&co");
  CHECK(p.run.err == "");
  CHECK(p.run.exit_status == 0);
  CHECK(slack.problems() == std::vector<std::string>{});
  REQUIRE(p.bodies.size() == 2);
  CHECK(p.requests[0].path == "/services/T000/B000/XXXXXXXX");
  const json& alert = p.bodies[0];
  CHECK(alert["text"] ==
        "alert login-failures key=&lt;!channel&gt;&amp;co: 3 failed logins for &lt;!channel&gt;&amp;co");
  CHECK(alert["blocks"][0]["text"]["text"] ==
        "*alert login-failures key=&lt;!channel&gt;&amp;co*\n3 failed logins for &lt;!channel&gt;&amp;co");
  const std::string facts = alert["blocks"][1]["elements"][0]["text"];
  CHECK(facts.find("count 3 · threshold 3 · window 1m · suppressed 0 · time 2026-11-20T10:00:02.000Z") == 0);
  // The rule's labels over [delivery]'s, and its own annotation.
  CHECK(facts.find("env prod") != std::string::npos);
  CHECK(facts.find("severity critical") != std::string::npos);
  CHECK(facts.find("team identity") != std::string::npos);
  CHECK(facts.find("runbook_url https://runbooks.example/login-failures") != std::string::npos);
  CHECK(p.bodies[1]["text"].get<std::string>().starts_with("resolved login-failures key="));
}

TEST_CASE("presets: discord gets content within 2000 characters, and no log line can ping") {
  VendorReceiver discord(Vendor::Discord);
  TempDir secrets;
  const std::string url = secret_file(secrets, "discord.url", discord.url("/api/webhooks/123/tok"));
  // A user name of 5000 characters: the content is cut, not refused.
  const PresetRun p = run_preset(discord, "name = \"ops-discord\"\npreset = \"discord\"\nurl_file = \"" + url + "\"\n",
                                 "@everyone" + std::string(5000, 'x'));
  CHECK(p.run.err == "");
  CHECK(p.run.exit_status == 0);
  CHECK(discord.problems() == std::vector<std::string>{});
  REQUIRE(p.bodies.size() == 2);
  CHECK(p.bodies[0]["allowed_mentions"] == json({{"parse", json::array()}}));
  const std::string content = p.bodies[0]["content"];
  CHECK(content.starts_with("**alert login-failures key=@everyone"));
  CHECK(content.find("\u2026") != std::string::npos);  // the title, cut
}

TEST_CASE("presets: teams gets one Adaptive Card in a message") {
  VendorReceiver teams(Vendor::Teams);
  TempDir secrets;
  const std::string url = secret_file(secrets, "teams.url", teams.url("/workflows/abc/triggers/manual/run"));
  const PresetRun p = run_preset(teams, "name = \"ops-teams\"\npreset = \"teams\"\nurl_file = \"" + url + "\"\n");
  CHECK(p.run.err == "");
  CHECK(p.run.exit_status == 0);
  CHECK(teams.problems() == std::vector<std::string>{});
  REQUIRE(p.bodies.size() == 2);
  const json& card = p.bodies[0]["attachments"][0]["content"];
  CHECK(card["body"][0]["text"] == "alert login-failures key=alice");
  CHECK(card["body"][1]["text"] == "3 failed logins for alice");
  CHECK(card["body"][2]["facts"][0] == json({{"title", "count"}, {"value", "3"}}));
}

TEST_CASE("presets: pagerduty triggers and resolves one alert by dedup_key, the routing key sent but never kept") {
  VendorReceiver pd(Vendor::PagerDuty, kRoutingKey);
  TempDir secrets;
  const std::string key = secret_file(secrets, "pd.key", kRoutingKey);
  const PresetRun p = run_preset(pd, "name = \"pager\"\npreset = \"pagerduty\"\nurl = \"" + pd.url("/v2/enqueue") +
                                         "\"\nkey_file = \"" + key + "\"\n");
  CHECK(p.run.err == "");
  CHECK(p.run.exit_status == 0);
  CHECK(pd.problems() == std::vector<std::string>{});
  REQUIRE(p.bodies.size() == 2);
  const json& trigger = p.bodies[0];
  const json& resolve = p.bodies[1];
  CHECK(trigger["routing_key"] == kRoutingKey);
  CHECK(trigger["event_action"] == "trigger");
  CHECK(resolve["event_action"] == "resolve");
  CHECK(resolve["routing_key"] == kRoutingKey);
  // One alert: the key of the rule and the user, in both.
  CHECK(trigger["dedup_key"].get<std::string>().size() == 32);
  CHECK(trigger["dedup_key"] == resolve["dedup_key"]);
  CHECK(trigger["payload"]["summary"] == "alert login-failures key=alice: 3 failed logins for alice");
  CHECK(trigger["payload"]["severity"] == "critical");  // the rule's severity label
  CHECK(trigger["payload"]["timestamp"] == "2026-11-20T10:00:02.000Z");
  CHECK(trigger["payload"]["custom_details"]["runbook_url"] == "https://runbooks.example/login-failures");
  CHECK(trigger["links"][0]["href"] == "https://logs.example/search?rule=login-failures");
  CHECK(resolve.size() == 3);  // routing_key, event_action, dedup_key: all a resolve needs
}

TEST_CASE("presets: opsgenie creates by alias and closes by alias, with the GenieKey") {
  VendorReceiver og(Vendor::Opsgenie, kGenieKey);
  TempDir secrets;
  const std::string key = secret_file(secrets, "og.key", kGenieKey);
  const PresetRun p = run_preset(
      og, "name = \"genie\"\npreset = \"opsgenie\"\nurl = \"" + og.url("") + "\"\nkey_file = \"" + key + "\"\n");
  CHECK(p.run.err == "");
  CHECK(p.run.exit_status == 0);
  CHECK(og.problems() == std::vector<std::string>{});
  REQUIRE(p.requests.size() == 2);
  CHECK(p.requests[0].path == "/v2/alerts");
  const std::string alias = p.bodies[0]["alias"];
  CHECK(alias.size() == 32);
  CHECK(p.requests[1].path == "/v2/alerts/" + alias + "/close");
  CHECK(p.requests[1].query == "identifierType=alias");
  CHECK(p.bodies[0]["message"] == "alert login-failures key=alice: 3 failed logins for alice");
  CHECK(p.bodies[0]["details"]["severity"] == "critical");
  CHECK(p.bodies[1]["note"] == "resolved: 0 in 1m now");
}

TEST_CASE("presets: a body template replaces the preset's, its values escaped for the vendor") {
  VendorReceiver slack(Vendor::Slack);
  TempDir secrets;
  const std::string url = secret_file(secrets, "slack.url", slack.url("/services/T/B/X"));
  const PresetRun p = run_preset(
      slack,
      "name = \"custom\"\npreset = \"slack\"\nurl_file = \"" + url +
          "\"\nbody = '''{\"text\": \"[{labels.severity}] {summary} <{annotations.runbook_url}|runbook>\"}'''\n",
      "<@U123>");
  CHECK(p.run.err == "");
  CHECK(p.run.exit_status == 0);
  CHECK(slack.problems() == std::vector<std::string>{});
  REQUIRE(p.bodies.size() == 2);
  // The template's own link stays a link; the log's mention is text.
  CHECK(p.bodies[0] == json({{"text",
                              "[critical] 3 failed logins for &lt;@U123&gt; "
                              "<https://runbooks.example/login-failures|runbook>"}}));
}

TEST_CASE("presets: a request the vendor refuses is dead-lettered, exit status 3, said on stderr by name") {
  VendorReceiver pd(Vendor::PagerDuty, kRoutingKey);
  TempDir secrets;
  const std::string wrong = secret_file(secrets, "pd.key", "not-the-key-of-this-integration!");
  const PresetRun p = run_preset(pd, "name = \"pager\"\npreset = \"pagerduty\"\nurl = \"" + pd.url("/v2/enqueue") +
                                         "\"\nkey_file = \"" + wrong + "\"\n");
  CHECK(p.run.exit_status == 3);
  CHECK(p.run.err.find("swthrottle: delivery: pager: HTTP 400: ") != std::string::npos);
  CHECK(p.run.err.find("not-the-key") == std::string::npos);
  CHECK(pd.problems().size() >= 2);
}
