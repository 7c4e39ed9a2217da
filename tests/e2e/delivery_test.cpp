// Delivery end to end (man page: DELIVERY): the real binary POSTs its
// records to a local receiver (support/http_receiver.h) and to a real
// Alertmanager (support/alertmanager_server.h): bodies and headers, retries,
// dead letters, and the outbox across a kill -9.
#include <doctest/doctest.h>
#include <signal.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/alertmanager_server.h"
#include "support/http_receiver.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::AlertmanagerServer;
using swthrottle::test::HttpReceiver;
using swthrottle::test::Process;
using swthrottle::test::Reply;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;
using json = nlohmann::json;

const std::string kBinary = SWTHROTTLE_BINARY;

// Failed logins per user, 3 per 1m, resolve: for each user in `users`, four
// failures a second apart from `minute` (an alert at the third), and a
// closing line two minutes later that ends every episode (resolved).
std::string rules_text(const std::string& extra = "") {
  return "[settings]\ntime = \"log\"\ntimezone = \"UTC\"\n" + extra +
         "\n[[rule]]\nname = \"login-failures\"\nkind = \"alert\"\nthreshold = \"3 per 1m\"\nkey = \"{user}\"\n"
         "resolve = true\nmessage = \"{count} failures for {key}\"\n"
         "  [[rule.event]]\n  name = \"failed\"\n  match = 'login failed user=(?P<user>\\w+)'\n";
}

std::string log_text(const std::vector<std::string>& users) {
  std::string log;
  int minute = 0;
  for (const std::string& u : users) {
    for (int s = 0; s < 4; ++s)
      log += "2026-11-20T10:" + std::string(minute < 10 ? "0" : "") + std::to_string(minute) + ":0" +
             std::to_string(s) + "Z login failed user=" + u + "\n";
    minute += 2;
  }
  log += "2026-11-20T10:" + std::to_string(minute + 10) + ":00Z all quiet\n";
  return log;
}

// The JSON records of a run's stdout (--format json), by type.
std::vector<json> records(const std::string& out, const std::set<std::string>& types) {
  std::vector<json> v;
  std::size_t at = 0;
  while (at < out.size()) {
    const std::size_t nl = out.find('\n', at);
    const json j = json::parse(out.substr(at, nl - at));
    if (types.count(j.value("type", ""))) v.push_back(j);
    at = nl == std::string::npos ? out.size() : nl + 1;
  }
  return v;
}

// What messages, metrics and dead letters call an unnamed destination.
std::string origin(const HttpReceiver& r) { return "http://127.0.0.1:" + std::to_string(r.port()); }

// A delivered body without its "id": the record as stdout has it.
json without_id(json j) {
  j.erase("id");
  return j;
}

}  // namespace

TEST_CASE("delivery: --webhook POSTs every alert and resolved record, with a stable id as Idempotency-Key") {
  HttpReceiver hook;
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text());
  const std::string log = dir.write("app.log", log_text({"alice", "bob"}));
  RunResult r =
      swthrottle::test::run_swthrottle({"-r", rules, "--webhook", hook.url("/hook"), "--format", "json", log});
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  const std::vector<json> shown = records(r.out, {"alert", "resolved"});
  REQUIRE(shown.size() == 4);  // alice and bob: alert, resolved each
  REQUIRE(hook.wait_for(4));
  const auto reqs = hook.requests();
  REQUIRE(reqs.size() == 4);
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    CAPTURE(i);
    CHECK(reqs[i].method == "POST");
    CHECK(reqs[i].path == "/hook");
    CHECK(reqs[i].header("Content-Type") == "application/json");
    const json body = json::parse(reqs[i].body);
    REQUIRE(body.contains("id"));
    const std::string id = body["id"];
    CHECK(id.size() == 32);
    CHECK(reqs[i].header("Idempotency-Key") == id);
    // In the order decided, and the record stdout has.
    CHECK(without_id(body) == shown[i]);
    ids.push_back(id);
  }
  CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == 4);

  // The same history again: the same ids, so a receiver drops the repeats.
  HttpReceiver again;
  RunResult r2 = swthrottle::test::run_swthrottle({"-r", rules, "--webhook", again.url("/hook"), log});
  CHECK(r2.exit_status == 0);
  REQUIRE(again.wait_for(4));
  std::vector<std::string> ids2;
  for (const auto& q : again.requests()) ids2.push_back(json::parse(q.body)["id"]);
  CHECK(ids2 == ids);
}

TEST_CASE("delivery: 5xx and 429 are retried (Retry-After honoured) until delivered once, as --stats says") {
  HttpReceiver hook;
  hook.respond({Reply(503), Reply(429, "Retry-After: 1"), Reply(200)});
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text());
  // Only the alert: the resolved record would be a second delivery.
  std::string alert_only = log_text({"alice"});
  alert_only.erase(alert_only.rfind("2026"));
  const std::string one = dir.write("one.log", alert_only);
  RunResult r = swthrottle::test::run_swthrottle({"-r", rules, "--webhook", hook.url("/hook"), "--stats", one});
  CHECK(r.exit_status == 0);
  const auto reqs = hook.requests();
  REQUIRE(reqs.size() == 3);
  // One record, three attempts of the same bytes.
  CHECK(reqs[0].body == reqs[1].body);
  CHECK(reqs[1].body == reqs[2].body);
  // The Retry-After: the third attempt came at least a second after the second.
  CHECK(reqs[2].received_at - reqs[1].received_at >= std::chrono::milliseconds(950));
  // Named by its origin: a URL's path may be a secret.
  CHECK(r.err.find("delivery: " + origin(hook) + ": HTTP 503") != std::string::npos);
  CHECK(r.err.find("/hook") == std::string::npos);
  CHECK(r.err.find("delivering again") != std::string::npos);
  CHECK(r.err.find("queued 1 delivered 1 attempts 3 failed 2 dead_letters 0") != std::string::npos);
}

TEST_CASE("delivery: another 4xx is not retried: dead-lettered to STATE.dead, exit status 3") {
  HttpReceiver hook;
  hook.otherwise(Reply(400, "", "no such hook"));
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text());
  const std::string log = dir.write("app.log", log_text({"alice"}));
  const std::string state = dir.file("state.json");
  RunResult r = swthrottle::test::run_swthrottle({"-r", rules, "--webhook", hook.url("/hook"), "--state", state, log});
  CHECK(r.exit_status == 3);
  CHECK(hook.count() == 2);  // the alert and its resolve, once each
  CHECK(r.err.find("HTTP 400: no such hook; not retried") != std::string::npos);
  const std::string dead = swthrottle::test::read_file(state + ".dead");
  const json letter = json::parse(dead.substr(0, dead.find('\n')));
  CHECK(letter["why"] == "HTTP 400: no such hook");
  CHECK(letter["to"] == origin(hook));
  CHECK(letter["kind"] == "webhook");
  CHECK(json::parse(letter["body"].get<std::string>())["type"] == "alert");
}

TEST_CASE("delivery: killed -9 while the receiver is down, restarted: every record delivered once, by id") {
  HttpReceiver hook;
  hook.otherwise(Reply(503));
  TempDir dir;
  // Exit keeps trying for a minute: the kill comes during that time.
  const std::string rules = dir.write("rules.toml", rules_text("\n[delivery]\ndrain = \"1m\"\n"));
  const std::string log = dir.write("app.log", log_text({"alice", "bob", "carol"}));
  const std::string state = dir.file("state.json");
  {
    Process p = Process::spawn(
        {kBinary, "-r", rules, "--webhook", hook.url("/hook"), "--format", "json", "--state", state, log});
    // Every record decided (stdout) and the first delivery tried twice:
    // they are all in the outbox by now.
    REQUIRE(p.read_stdout_lines(6));
    REQUIRE(hook.wait_for(2, std::chrono::seconds(15)));
    REQUIRE(p.send_signal(SIGKILL));
    const RunResult r = p.wait();
    CHECK(r.signal == SIGKILL);
    // Three users: an alert and a resolve each.
    CHECK(records(p.out(), {"alert", "resolved"}).size() == 6);
  }
  const std::size_t before = hook.count();
  std::set<std::string> failed_ids;
  for (const auto& q : hook.requests()) failed_ids.insert(json::parse(q.body)["id"].get<std::string>());
  CHECK(failed_ids.size() == 1);  // only the first, retried: the others wait behind it

  hook.otherwise(Reply(200));
  RunResult r = swthrottle::test::run_swthrottle(
      {"-r", rules, "--webhook", hook.url("/hook"), "--state", state, "--stats", dir.write("empty.log", "")});
  CHECK(r.exit_status == 0);
  CHECK(r.err.find("delivery: 6 records the last run did not deliver are sent first") != std::string::npos);
  const auto reqs = hook.requests();
  std::map<std::string, int> delivered;  // id -> 2xx answers
  for (std::size_t i = before; i < reqs.size(); ++i) ++delivered[json::parse(reqs[i].body)["id"].get<std::string>()];
  CHECK(delivered.size() == 6);
  for (const auto& [id, n] : delivered) {
    CAPTURE(id);
    CHECK(n == 1);
  }
  CHECK(delivered.count(*failed_ids.begin()) == 1);  // the one tried before the kill, with the same id
  // Nothing left: a third run sends nothing.
  const std::size_t after = hook.count();
  RunResult r3 = swthrottle::test::run_swthrottle(
      {"-r", rules, "--webhook", hook.url("/hook"), "--state", state, dir.file("empty.log")});
  CHECK(r3.exit_status == 0);
  CHECK(hook.count() == after);
}

TEST_CASE("delivery: --alertmanager: a firing alert is active in a real Alertmanager, a resolved one is gone") {
  AlertmanagerServer am;
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text("\n[delivery]\nlabels = { team = \"ops\" }\n"));
  // alice: alert only (no closing line); bob: alert and resolved.
  std::string log = log_text({"alice"});
  log = log.substr(0, log.rfind("2026"));
  const std::string firing = dir.write("firing.log", log);
  RunResult r = swthrottle::test::run_swthrottle({"-r", rules, "--alertmanager", am.url(), firing});
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  const json alerts = json::parse(am.alerts());
  REQUIRE(alerts.size() == 1);
  CHECK(alerts[0]["labels"]["alertname"] == "login-failures");
  CHECK(alerts[0]["labels"]["key"] == "alice");
  CHECK(alerts[0]["labels"]["team"] == "ops");
  CHECK(alerts[0]["annotations"]["summary"] == "3 failures for alice");
  CHECK(alerts[0]["status"]["state"] == "active");
  CHECK(alerts[0]["startsAt"] == "2026-11-20T10:00:02.000Z");  // the log's time

  const std::string both = dir.write("both.log", log_text({"bob"}));
  RunResult r2 = swthrottle::test::run_swthrottle({"-r", rules, "--alertmanager", am.url(), both});
  CHECK(r2.exit_status == 0);
  const json after = json::parse(am.alerts());
  // bob's alert was posted, then resolved: Alertmanager lists it no more.
  REQUIRE(after.size() == 1);
  CHECK(after[0]["labels"]["key"] == "alice");
}

TEST_CASE("delivery: [delivery] batch = 10 POSTs the records together as one JSON array") {
  HttpReceiver hook;
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text("\n[delivery]\nbatch = 10\n"));
  const std::string log = dir.write("app.log", log_text({"alice", "bob"}));
  // The receiver is down while the records are decided, so they wait and go
  // in one batch once it is back.
  hook.respond({Reply(503)});
  RunResult r =
      swthrottle::test::run_swthrottle({"-r", rules, "--webhook", hook.url("/hook"), "--format", "json", log});
  CHECK(r.exit_status == 0);
  const std::vector<json> shown = records(r.out, {"alert", "resolved"});
  REQUIRE(shown.size() == 4);
  const auto reqs = hook.requests();
  REQUIRE(reqs.size() >= 2);
  const json last = json::parse(reqs.back().body);
  REQUIRE(last.is_array());
  // Every record delivered, in order, across the batches after the 503.
  std::vector<json> delivered;
  std::vector<std::string> ids;
  for (std::size_t i = 1; i < reqs.size(); ++i) {
    const json batch = json::parse(reqs[i].body);
    REQUIRE(batch.is_array());
    for (const json& rec : batch) {
      delivered.push_back(without_id(rec));
      ids.push_back(rec["id"]);
    }
  }
  CHECK(delivered == shown);
  CHECK(json::parse(reqs[0].body).is_array());
  CHECK(json::parse(reqs[0].body).size() >= 1);
}

TEST_CASE("delivery: a firing alert is posted to Alertmanager again every repost, endsAt moving on") {
  // The receiver stands in for Alertmanager: it sees every post.
  HttpReceiver am;
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text("\n[delivery]\nrepost = \"1s\"\n"));
  std::string log = log_text({"alice"});
  log.erase(log.rfind("2026"));  // the alert, no resolve: it keeps firing
  const std::string path = dir.write("app.log", log);
  Process p = Process::spawn({kBinary, "-r", rules, "--alertmanager", am.url(), "--follow", "--from-start", path});
  REQUIRE(am.wait_for(3, std::chrono::seconds(15)));
  p.send_signal(SIGTERM);
  CHECK(p.wait().exit_status == 0);
  const auto reqs = am.requests();
  std::vector<std::string> ends;
  for (const auto& q : reqs) {
    CHECK(q.path == "/api/v2/alerts");
    const json alerts = json::parse(q.body);
    REQUIRE(alerts.size() == 1);
    CHECK(alerts[0]["labels"]["key"] == "alice");
    CHECK(alerts[0]["startsAt"] == "2026-11-20T10:00:02.000Z");
    ends.push_back(alerts[0]["endsAt"]);
  }
  // RFC 3339 in UTC with ms: later times sort later as text.
  for (std::size_t i = 1; i < ends.size(); ++i) CHECK(ends[i] > ends[i - 1]);
}

TEST_CASE("delivery: outbox_full = drop-oldest dead-letters the oldest, which is then never sent, and exits 3") {
  HttpReceiver hook;
  hook.otherwise(Reply(503));
  TempDir dir;
  const std::string rules = dir.write(
      "rules.toml", rules_text("\n[delivery]\noutbox_max = 2\noutbox_full = \"drop-oldest\"\ndrain = \"1s\"\n"));
  const std::string state = dir.file("state.json");
  // Three users: six records (an alert and a resolve each) for an outbox of two.
  RunResult r = swthrottle::test::run_swthrottle(
      {"-r", rules, "--webhook", hook.url("/hook"), "--state", state, dir.write("app.log", log_text({"a", "b", "c"}))});
  CHECK(r.exit_status == 3);
  const std::string dead = swthrottle::test::read_file(state + ".dead");
  std::set<std::string> dropped;
  std::size_t at = 0;
  while (at < dead.size()) {
    const std::size_t nl = dead.find('\n', at);
    const json letter = json::parse(dead.substr(at, nl - at));
    CHECK(letter["why"] == "outbox full");
    dropped.insert(letter["id"].get<std::string>());
    at = nl + 1;
  }
  CHECK(dropped.size() == 4);
  // The receiver is back: the two kept are delivered, the dropped never.
  hook.otherwise(Reply(200));
  const std::size_t before = hook.count();
  RunResult r2 = swthrottle::test::run_swthrottle(
      {"-r", rules, "--webhook", hook.url("/hook"), "--state", state, dir.write("empty.log", "")});
  CHECK(r2.exit_status == 0);
  const auto reqs = hook.requests();
  std::set<std::string> delivered;
  for (std::size_t i = before; i < reqs.size(); ++i)
    delivered.insert(json::parse(reqs[i].body)["id"].get<std::string>());
  CHECK(delivered.size() == 2);
  for (const std::string& id : delivered) CHECK(dropped.count(id) == 0);
}

TEST_CASE("delivery: SIGTERM ends a run whose decider waits for room, also after a SIGUSR1 waits behind it") {
  // The outbox holds one record and the receiver is down: the second
  // alert's decider waits. A SIGUSR1 report then waits for that decider,
  // and the SIGTERM after it must still end the run.
  HttpReceiver hook;
  hook.stop();
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text("\n[delivery]\noutbox_max = 1\ndrain = \"1s\"\n"));
  std::string first = log_text({"alice"});
  first.erase(first.rfind("2026"));
  const std::string log = dir.write("app.log", first);
  Process p = Process::spawn({kBinary, "-r", rules, "--follow", "--from-start", "--state", dir.file("state.json"),
                              "--webhook", hook.url("/hook"), log});
  REQUIRE(p.read_stderr_until([](const std::string& e) { return e.find("retrying") != std::string::npos; }));
  {
    std::ofstream f(log, std::ios::app);
    f << "2026-11-20T10:05:00Z login failed user=bob\n2026-11-20T10:05:01Z login failed user=bob\n"
         "2026-11-20T10:05:02Z login failed user=bob\n";
  }
  // The decider now waits in the outbox (bob's alert). No pipe tells when,
  // so this gives the follower half a second to see the lines: were it not
  // stuck yet, the test would pass without proving anything, never fail
  // falsely (without order_watching_stop() it hangs, checked).
  REQUIRE(swthrottle::test::poll_until([&] { return false; }, std::chrono::milliseconds(500)) == false);
  p.send_signal(SIGUSR1);
  p.send_signal(SIGTERM);
  const RunResult r = p.wait(std::chrono::seconds(20));
  CHECK(!r.timed_out);
  CHECK(r.exit_status == 0);
}

TEST_CASE("delivery: what the outbox holds waits for a run that names its destination, which keeps no URL") {
  HttpReceiver hook;
  hook.otherwise(Reply(503));
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text("\n[delivery]\ndrain = \"1s\"\n"));
  const std::string state = dir.file("state.json");
  const std::string url = hook.url("/hook/T0K3N");
  RunResult r = swthrottle::test::run_swthrottle(
      {"-r", rules, "--webhook", url, "--state", state, dir.write("app.log", log_text({"alice"}))});
  CHECK(r.exit_status == 0);
  CHECK(r.err.find("kept in the outbox for the next run") != std::string::npos);
  // The journal names the destination by its origin: its path is no secret
  // of the journal's to keep.
  const std::string journal = swthrottle::test::read_file(state + ".outbox");
  CHECK(journal.find("T0K3N") == std::string::npos);
  CHECK(journal.find("\"to\":\"" + origin(hook) + "\",\"kind\":\"webhook\"") != std::string::npos);

  // A run without the destination cannot send them (it has no URL): they
  // stay, and it says so.
  hook.otherwise(Reply(200));
  const std::size_t before = hook.count();
  RunResult r2 =
      swthrottle::test::run_swthrottle({"-r", rules, "--state", state, "--stats", dir.write("empty.log", "")});
  CHECK(r2.exit_status == 0);
  CHECK(r2.err.find("delivery: 2 records in the outbox for " + origin(hook) +
                    ", which this run does not deliver to, stay there for a run that does") != std::string::npos);
  CHECK(hook.count() == before);

  // The next run with it sends them first.
  RunResult r3 = swthrottle::test::run_swthrottle(
      {"-r", rules, "--webhook", url, "--state", state, "--stats", dir.file("empty.log")});
  CHECK(r3.exit_status == 0);
  CHECK(r3.err.find("delivery: 2 records the last run did not deliver are sent first") != std::string::npos);
  std::set<std::string> ids;
  const auto reqs = hook.requests();
  for (std::size_t i = before; i < reqs.size(); ++i) ids.insert(json::parse(reqs[i].body)["id"].get<std::string>());
  CHECK(ids.size() == 2);
}

TEST_CASE("delivery: records neither delivered nor kept at exit make the exit status 3, and stderr counts them") {
  HttpReceiver hook;
  hook.otherwise(Reply(503));
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text("\n[delivery]\ndrain = \"200ms\"\n"));
  const std::string log = dir.write("app.log", log_text({"alice", "bob"}));
  RunResult r = swthrottle::test::run_swthrottle({"-r", rules, "--webhook", hook.url("/hook"), log});
  CHECK(r.exit_status == 3);
  CHECK(r.err.find("swthrottle: delivery: 4 records not delivered after 200ms ([delivery] drain); lost: no --state "
                   "(exit 3)\n") != std::string::npos);
}

TEST_CASE("delivery: the count of records not delivered at exit is the stats' pending, a request in flight included") {
  // Every answer comes after a second and a half: when the drain ends, the
  // first record is still in flight; it is then delivered before the exit.
  HttpReceiver hook;
  hook.otherwise(Reply(200, "", "", std::chrono::milliseconds(1500)));
  TempDir dir;
  const std::string rules = dir.write("rules.toml", rules_text("\n[delivery]\ndrain = \"300ms\"\n"));
  const std::string log = dir.write("app.log", log_text({"alice", "bob"}));
  const std::string state = dir.file("state.json");
  RunResult r =
      swthrottle::test::run_swthrottle({"-r", rules, "--webhook", hook.url("/hook"), "--state", state, "--stats", log});
  CHECK(r.exit_status == 0);
  CHECK(r.err.find("swthrottle: delivery: 3 records not delivered after 300ms ([delivery] drain); kept in the outbox "
                   "for the next run\n") != std::string::npos);
  CHECK(r.err.find(": queued 4 delivered 1 attempts 1 failed 0 dead_letters 0 reposts 0 pending 3\n") !=
        std::string::npos);
  CHECK(r.err.find("stats: outbox: added 4 delivered 1 dead_letters 0 dropped 0 recovered 0 pending 3\n") !=
        std::string::npos);
  // The next run sends those three, and the one delivered is not among them.
  hook.otherwise(Reply(200));
  const std::string first = json::parse(hook.requests().at(0).body)["id"];
  RunResult r2 = swthrottle::test::run_swthrottle(
      {"-r", rules, "--webhook", hook.url("/hook"), "--state", state, dir.write("empty.log", "")});
  CHECK(r2.exit_status == 0);
  CHECK(r2.err.find("delivery: 3 records the last run did not deliver are sent first") != std::string::npos);
  const auto reqs = hook.requests();
  REQUIRE(reqs.size() == 4);
  for (std::size_t i = 1; i < reqs.size(); ++i) CHECK(json::parse(reqs[i].body)["id"] != first);
}

TEST_CASE("delivery: an exec action's record carries the id its webhook delivery has") {
  HttpReceiver hook;
  TempDir dir;
  const std::string got = dir.file("exec.jsonl");
  std::string text = rules_text();
  text.insert(text.find("  [[rule.event]]"), "exec = [\"sh\", \"-c\", \"cat >> '" + got + "'\"]\n");
  const std::string rules = dir.write("rules.toml", text);
  const std::string log = dir.write("app.log", log_text({"alice"}));
  RunResult r = swthrottle::test::run_swthrottle({"-r", rules, "--webhook", hook.url("/hook"), log});
  CHECK(r.exit_status == 0);
  REQUIRE(hook.wait_for(2));
  std::set<std::string> webhook_ids, exec_ids;
  for (const auto& q : hook.requests()) webhook_ids.insert(json::parse(q.body)["id"].get<std::string>());
  const std::string lines = swthrottle::test::read_file(got);
  for (std::size_t at = 0; at < lines.size();) {
    const std::size_t nl = lines.find('\n', at);
    const json j = json::parse(lines.substr(at, nl - at));
    CHECK(lines.substr(at, 7) == "{\"id\":\"");  // first, as the webhook has it
    exec_ids.insert(j["id"].get<std::string>());
    at = nl + 1;
  }
  CHECK(exec_ids.size() == 2);
  CHECK(exec_ids == webhook_ids);
}

TEST_CASE("delivery: a rule's labels, annotations and generator_url reach a real Alertmanager") {
  AlertmanagerServer am;
  TempDir dir;
  std::string text = rules_text("\n[delivery]\nlabels = { team = \"ops\", env = \"prod\" }\n");
  text.insert(text.find("  [[rule.event]]"),
              "labels = { severity = \"page\", team = \"db\" }\n"
              "annotations = { runbook_url = \"https://runbooks.example/{rule}\", summary = \"{key}: {count} in "
              "{window}\" }\n"
              "generator_url = \"https://logs.example/search?rule={rule}&key={key}\"\n");
  const std::string rules = dir.write("rules.toml", text);
  std::string log = log_text({"alice"});
  log = log.substr(0, log.rfind("2026"));  // firing: no closing line
  RunResult r = swthrottle::test::run_swthrottle({"-r", rules, "--alertmanager", am.url(), dir.write("f.log", log)});
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  const json alerts = json::parse(am.alerts());
  REQUIRE(alerts.size() == 1);
  const json& a = alerts[0];
  // The rule's labels over [delivery]'s; ours over both.
  CHECK(a["labels"] == json({{"alertname", "login-failures"},
                             {"env", "prod"},
                             {"key", "alice"},
                             {"kind", "alert"},
                             {"severity", "page"},
                             {"team", "db"}}));
  CHECK(a["annotations"]["runbook_url"] == "https://runbooks.example/login-failures");
  CHECK(a["annotations"]["summary"] == "alice: 3 in 1m");  // the rule's own, over the built-in one
  CHECK(a["annotations"]["count"] == "3");
  CHECK(a["generatorURL"] == "https://logs.example/search?rule=login-failures&key=alice");
}
