// The differential test of `swthrottle backtest` (man page: BACKTEST): a
// sweep decides every candidate threshold and window in one pass, as a copy
// of the rule that the Matcher feeds with the rule's hits. Its claim is that
// each candidate's figures are those of a separate, ordinary run of the
// engine with that threshold (and window) written into the rules file. This
// test checks the claim figure by figure: for every candidate of every rule
// it writes that rules file, runs `swthrottle -r FILE --format json --stats`
// over the same log, and compares lines, events, alerts (count, and every
// alert's time, key and count), resolved, passed, suppressed, summaries and
// late with what the sweep reported.
//
// The log is generated here from a fixed seed (SWTHROTTLE_SEED replays
// another): a few hours of quiet traffic and bursts from one user, with
// three kinds of event, several keys, a few lines stamped behind the others
// (late for the shorter windows) and a few without a stamp. The rules cover
// each shape a sweep varies: a keyed threshold rule with its own cooldown, a
// keyed one whose cooldown is the window (and so follows --sweep-window),
// `when` rules of one comparison (`error + timeout > N`, and a keyed
// `error >= N`), a keyed throttle of several events (summaries), and a
// keyed rule of silence, `request < N`, checked at every boundary; each
// once in accurate and once in efficient mode, two of them with max_keys
// below their keys (evictions).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "support/json.h"
#include "support/process.h"
#include "support/sanitized.h"
#include "support/seed.h"
#include "support/temp_dir.h"

namespace {

using nlohmann::json;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

RunResult swt(const std::vector<std::string>& args) { return swthrottle::test::run_swthrottle(args); }

// --- the log -----------------------------------------------------------------

// 2026-11-01T00:00:00Z, in ms.
constexpr int64_t kStartMs = 1'793'491'200'000;

std::string rfc3339_ms(int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[80];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buf;
}

// "2026-11-01T00:01:02.345Z" -> ms since the epoch (the records' and the
// report's time format); -1 when it is not that.
int64_t parse_ms(const std::string& s) {
  std::tm tm{};
  int ms = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &ms) != 7)
    return -1;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

// Quiet stretches (a line every few seconds, mostly requests, from anyone)
// and bursts (one user's errors and timeouts, at a pace each burst draws),
// `lines` in all. About one line in 120 is stamped 10-100 s behind the
// others, as another writer's late line; one error in 40 is followed by a
// line without a stamp.
std::string generate_log(uint64_t seed, int lines) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  auto below = [&](uint32_t n) { return static_cast<int64_t>(rng() % n); };
  constexpr int kUsers = 8, kIps = 5;
  std::string out;
  int64_t t = kStartMs;
  int written = 0;
  auto line = [&](int64_t at, int kind, int user, int ip) {
    out += rfc3339_ms(at);
    switch (kind) {
      case 0: out += " ERROR payment failed"; break;
      case 1: out += " WARN timeout calling upstream"; break;
      default: out += " INFO request GET /api/orders"; break;
    }
    out += " user=u" + std::to_string(user) + " ip=10.0.0." + std::to_string(ip + 1) + "\n";
    ++written;
  };
  auto maybe_late = [&](int kind, int user, int ip) {
    if (below(120) == 0 && written < lines) line(t - 10'000 - below(90'000), kind, user, ip);
    // A continuation line without a stamp (it takes the time of the line
    // before), that the error event matches too.
    if (kind == 0 && below(40) == 0 && written < lines) {
      out += "\tcaused by: ERROR retry refused user=u" + std::to_string(user) + " ip=10.0.0." + std::to_string(ip + 1) +
             "\n";
      ++written;
    }
  };
  while (written < lines) {
    // Quiet: 3 to 15 minutes.
    const int64_t quiet_end = t + 180'000 + below(720'000);
    while (written < lines && t < quiet_end) {
      t += 1'500 + below(10'000);
      const int64_t x = below(100);
      const int kind = x < 80 ? 2 : x < 92 ? 0 : 1;
      const int user = static_cast<int>(below(kUsers)), ip = static_cast<int>(below(kIps));
      line(t, kind, user, ip);
      maybe_late(kind, user, ip);
    }
    // A burst: 20 s to 3 min from one user and address, every 0.3 to 4 s.
    const int user = static_cast<int>(below(kUsers)), ip = static_cast<int>(below(kIps));
    const int64_t pace = 300 + below(3'700);
    const int64_t burst_end = t + 20'000 + below(160'000);
    while (written < lines && t < burst_end) {
      t += pace / 2 + below(static_cast<uint32_t>(pace));
      const int64_t x = below(100);
      const int kind = x < 55 ? 0 : x < 90 ? 1 : 2;
      const bool own = below(5) != 0;
      const int u = own ? user : static_cast<int>(below(kUsers)), i = own ? ip : static_cast<int>(below(kIps));
      line(t, kind, u, i);
      maybe_late(kind, u, i);
    }
  }
  return out;
}

// --- the rules -----------------------------------------------------------------

enum class Shape {
  Cooldown,         // alert, threshold, key {user}, cooldown 90s, resolve
  DefaultCooldown,  // alert, threshold, key {ip} (5 addresses, max_keys 4), cooldown = the window, resolve
  When,             // alert, window + when "error + timeout > N", resolve
  WhenAtLeast,      // alert, window + when "error >= N", key {user}, resolve
  Throttle,         // throttle, key {user} (8 users, max_keys 6), three events
  Silence,          // alert, window + when "request < N" (watched: checked at boundaries), key {user}, resolve
};

struct RuleDef {
  std::string name;
  Shape shape;
  std::string mode;    // accurate | efficient
  std::string value;   // Y, or the when's N
  std::string window;  // X
};

const std::string kError = R"(  [[rule.event]]
  name  = "error"
  match = 'ERROR .*user=(?P<user>\w+) ip=(?P<ip>[0-9.]+)'
)";
const std::string kTimeout = R"(  [[rule.event]]
  name  = "timeout"
  match = 'WARN timeout .*user=(?P<user>\w+) ip=(?P<ip>[0-9.]+)'
)";
const std::string kRequest = R"(  [[rule.event]]
  name  = "request"
  match = 'INFO request .*user=(?P<user>\w+)'
)";

std::string rule_toml(const RuleDef& d, const std::string& value, const std::string& window) {
  std::string s = "\n[[rule]]\nname = \"" + d.name + "\"\nmode = \"" + d.mode + "\"\n";
  switch (d.shape) {
    case Shape::Cooldown:
      s += "kind = \"alert\"\nthreshold = \"" + value + " per " + window +
           "\"\nkey = \"{user}\"\ncooldown = \"90s\"\nresolve = true\n" + kError;
      break;
    case Shape::DefaultCooldown:
      s += "kind = \"alert\"\nthreshold = \"" + value + " per " + window +
           "\"\nkey = \"{ip}\"\nresolve = true\nmax_keys = 4\n" + kTimeout;
      break;
    case Shape::When:
      s += "kind = \"alert\"\nwindow = \"" + window + "\"\nwhen = \"error + timeout > " + value +
           "\"\nresolve = true\n" + kError + kTimeout;
      break;
    case Shape::WhenAtLeast:
      s += "kind = \"alert\"\nwindow = \"" + window + "\"\nwhen = \"error >= " + value +
           "\"\nkey = \"{user}\"\nresolve = true\n" + kError;
      break;
    case Shape::Silence:
      s += "kind = \"alert\"\nwindow = \"" + window + "\"\nwhen = \"request < " + value +
           "\"\nkey = \"{user}\"\nresolve = true\n" + kRequest;
      break;
    case Shape::Throttle:
      s += "kind = \"throttle\"\nthreshold = \"" + value + " per " + window + "\"\nkey = \"{user}\"\nmax_keys = 6\n" +
           kError + kTimeout + kRequest;
      break;
  }
  return s;
}

const std::string kSettings = "[settings]\ntime = \"log\"\ntimezone = \"UTC\"\n";

std::vector<RuleDef> all_rules() {
  std::vector<RuleDef> out;
  for (const std::string mode : {"accurate", "efficient"}) {
    out.push_back({"err-cooldown-" + mode, Shape::Cooldown, mode, "5", "1m"});
    out.push_back({"timeout-ip-" + mode, Shape::DefaultCooldown, mode, "3", "1m"});
    out.push_back({"mix-when-" + mode, Shape::When, mode, "4", "1m"});
    out.push_back({"err-when-" + mode, Shape::WhenAtLeast, mode, "3", "1m"});
    out.push_back({"throttle-" + mode, Shape::Throttle, mode, "3", "1m"});
    out.push_back({"quiet-user-" + mode, Shape::Silence, mode, "2", "1m"});
  }
  return out;
}

// The rules file of `rules`, with rule `changed` (if any) given `value` and `window`.
std::string rules_file(const std::vector<RuleDef>& rules, const std::string& changed = "",
                       const std::string& value = "", const std::string& window = "") {
  std::string s = kSettings;
  for (const RuleDef& d : rules) s += d.name == changed ? rule_toml(d, value, window) : rule_toml(d, d.value, d.window);
  return s;
}

// --- a separate run ------------------------------------------------------------

using Mark = std::tuple<std::string, std::string, uint64_t>;  // time, key, count

// What one ordinary run said about one rule: its --stats figures and its records.
struct Separate {
  std::map<std::string, uint64_t> stats;  // "lines", "events", ... of `swthrottle: stats: rule NAME:`
  std::vector<Mark> alerts;               // sorted
  uint64_t resolved = 0;                  // resolved records
  uint64_t summaries = 0;                 // summary records
  uint64_t summary_suppressed = 0;        // the sum of their `suppressed`
  uint64_t stat(const std::string& k) const {
    auto it = stats.find(k);
    return it == stats.end() ? 0 : it->second;
  }
};

// A run of `rules_text` over `log`: every rule's figures, by rule name.
std::map<std::string, Separate> separate_runs(const TempDir& dir, const std::string& log,
                                              const std::string& rules_text) {
  const std::string rules = dir.write("one.toml", rules_text);
  RunResult r = swt({"-r", rules, "--format", "json", "--stats", log});
  REQUIRE_MESSAGE(r.exit_status == 0, r.err);
  std::map<std::string, Separate> out;
  const std::string head = "swthrottle: stats: rule ";
  std::istringstream err(r.err);
  for (std::string l; std::getline(err, l);) {
    if (l.rfind(head, 0) != 0) continue;
    const std::size_t colon = l.find(": ", head.size());
    REQUIRE(colon != std::string::npos);
    Separate& s = out[l.substr(head.size(), colon - head.size())];
    std::istringstream words(l.substr(colon + 2));
    std::string name;
    uint64_t n = 0;
    while (words >> name >> n) s.stats[name] = n;
  }
  std::istringstream lines(r.out);
  for (std::string l; std::getline(lines, l);) {
    auto j = swthrottle::test::parse_json(l);
    if (!j) FAIL("not a JSON record: " << l);
    if (!j->contains("rule") || !out.count((*j)["rule"].get<std::string>())) continue;
    Separate& s = out[(*j)["rule"].get<std::string>()];
    const std::string type = (*j)["type"];
    if (type == "alert") {
      s.alerts.emplace_back((*j)["time"].get<std::string>(), (*j)["key"].get<std::string>(),
                            (*j)["count"].get<uint64_t>());
    } else if (type == "resolved") {
      ++s.resolved;
    } else if (type == "summary") {
      ++s.summaries;
      s.summary_suppressed += (*j)["suppressed"].get<uint64_t>();
    }
  }
  for (auto& [name, s] : out) std::sort(s.alerts.begin(), s.alerts.end());
  return out;
}

// The same, for one rule (whose stats line must be there).
Separate separate_run(const TempDir& dir, const std::string& log, const std::string& rules_text,
                      const std::string& rule) {
  auto all = separate_runs(dir, log, rules_text);
  REQUIRE_MESSAGE(all.count(rule) == 1, "no stats line for " << rule);
  return all[rule];
}

std::vector<Mark> marks_of(const json& alert_times) {
  std::vector<Mark> out;
  for (const json& m : alert_times)
    out.emplace_back(m["time"].get<std::string>(), m["key"].get<std::string>(), m["count"].get<uint64_t>());
  std::sort(out.begin(), out.end());
  return out;
}

std::string show(const std::vector<Mark>& marks) {
  std::string s;
  for (const auto& [t, k, c] : marks) s += t + " " + k + " " + std::to_string(c) + "\n";
  return s;
}

// One figure set of the report (a rule's own, or a candidate's) against the
// separate run.
void compare(const json& got, const Separate& want, bool throttle) {
  for (const char* f : {"lines", "events", "alerts", "resolved", "passed", "suppressed", "summaries", "late"}) {
    INFO("figure ", f);
    CHECK(got[f].get<uint64_t>() == want.stat(f));
  }
  // The records agree with the run's own counters (so the comparison above
  // compares what was written, too).
  CHECK(want.stat("alerts") == want.alerts.size());
  CHECK(want.stat("resolved") == want.resolved);
  CHECK(want.stat("summaries") == want.summaries);
  if (throttle) CHECK(want.stat("suppressed") == want.summary_suppressed);
  CHECK(show(marks_of(got["alert_times"])) == show(want.alerts));
}

const RuleDef& def_of(const std::vector<RuleDef>& rules, const std::string& name) {
  auto it = std::find_if(rules.begin(), rules.end(), [&](const RuleDef& d) { return d.name == name; });
  REQUIRE_MESSAGE(it != rules.end(), "the report names a rule the file has not: " << name);
  return *it;
}

constexpr std::size_t kSampleEvery = 8;

struct Fixture {
  TempDir dir;
  std::vector<RuleDef> rules = all_rules();
  std::string log;
  std::string rules_path;
  // Separate runs already made, by (rule, value, window).
  std::map<std::tuple<std::string, std::string, std::string>, Separate> runs;

  Fixture() {
    const uint64_t seed = swthrottle::test::base_seed(20261101);
    INFO("seed ", seed, " (SWTHROTTLE_SEED replays it)");
    log = dir.write("history.log", generate_log(seed, 3000));
    rules_path = dir.write("rules.toml", rules_file(rules));
  }

  const Separate& run(const RuleDef& d, const std::string& value, const std::string& window) {
    const auto id = std::make_tuple(d.name, value, window);
    auto it = runs.find(id);
    if (it == runs.end())
      it = runs.emplace(id, separate_run(dir, log, rules_file(rules, d.name, value, window), d.name)).first;
    return it->second;
  }

  json backtest(const std::vector<std::string>& extra) {
    std::vector<std::string> args{"backtest", "-r", rules_path, "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back(log);
    RunResult r = swt(args);
    REQUIRE_MESSAGE(r.exit_status == 0, r.err);
    auto j = swthrottle::test::parse_json(r.out);
    REQUIRE_MESSAGE(j.has_value(), "the report is not one JSON value: " << r.out);
    return *j;
  }

  // Every candidate of every rule of `report` against its separate run; the
  // alert counts (throttles: summaries) the candidates of each rule gave.
  std::map<std::string, std::set<uint64_t>> check_sweep(const json& report) {
    std::map<std::string, std::set<uint64_t>> distinct;
    REQUIRE(report["rules"].size() == rules.size());
    for (const json& rr : report["rules"]) {
      const std::string name = rr["rule"];
      const RuleDef& d = def_of(rules, name);
      const bool throttle = d.shape == Shape::Throttle;
      INFO("rule ", name);
      REQUIRE(rr["sweep"].size() > 1);
      // The rule as written.
      {
        INFO("the rule's own figures");
        compare(rr, run(d, d.value, d.window), throttle);
      }
      int current = 0;
      std::size_t index = 0;
      for (const json& c : rr["sweep"]) {
        const std::string value = c["threshold"], window = c["window"];
        INFO("candidate ", value, " per ", window);
        const bool is_own = value == d.value && window == d.window;
        CHECK(c["current"].get<bool>() == is_own);
        current += is_own;
        // A sanitized build compares one candidate in kSampleEvery, and the
        // rule's own, with its separate run: each run is a process several
        // times slower there, and the Release run compares them all.
        if (is_own || !swthrottle::test::kSanitized || index % kSampleEvery == 0)
          compare(c, run(d, value, window), throttle);
        ++index;
        distinct[name].insert(c[throttle ? "summaries" : "alerts"].get<uint64_t>());
      }
      CHECK(current == 1);
    }
    return distinct;
  }
};

}  // namespace

TEST_CASE("backtest e2e: every figure of a one-pass sweep is that of a separate run with the candidate") {
  Fixture f;
  const json report = f.backtest({"--sweep", "2,3,5,8,13", "--sweep-window", "30s,1m,2m"});
  const auto distinct = f.check_sweep(report);
  // Not vacuous: the candidates of every rule disagree, and the log makes
  // alerts, resolves, summaries and late lines.
  for (const auto& [name, counts] : distinct) {
    INFO("rule ", name);
    CHECK(counts.size() >= 4);
  }
  uint64_t resolved = 0, late = 0, summaries = 0;
  for (const json& rr : report["rules"]) {
    INFO("rule ", rr["rule"].get<std::string>());
    // 5 or 6 values (the rule's own added), 3 windows.
    CHECK(rr["sweep"].size() == (rr["rule"].get<std::string>().rfind("mix-when", 0) == 0 ? 18u : 15u));
    CHECK(rr["alert_times"].size() == rr["alerts"].get<uint64_t>());
    for (const json& c : rr["sweep"]) {
      resolved += c["resolved"].get<uint64_t>();
      late += c["late"].get<uint64_t>();
      summaries += c["summaries"].get<uint64_t>();
    }
  }
  CHECK(resolved > 0);
  CHECK(late > 0);
  CHECK(summaries > 0);
  // Keys were evicted (max_keys), in the separate runs as in the sweep.
  uint64_t evicted = 0;
  for (const auto& [id, run] : f.runs) evicted += run.stat("evicted");
  CHECK(evicted > 0);
  // The log has lines without a stamp (they take the time of the line before).
  CHECK(swthrottle::test::read_file(f.log).find("\tcaused by: ERROR") != std::string::npos);
  MESSAGE(f.runs.size() << " separate runs compared");

  // One matching thread decides as two: the same report.
  const json one = f.backtest({"-j", "1", "--sweep", "2,3,5,8,13", "--sweep-window", "30s,1m,2m"});
  CHECK(one.dump() == report.dump());
}

TEST_CASE("backtest e2e: --sweep auto, each rule's ladder against separate runs") {
  Fixture f;
  const json report = f.backtest({"--sweep", "auto"});
  const auto distinct = f.check_sweep(report);
  for (const auto& [name, counts] : distinct) {
    INFO("rule ", name);
    CHECK(counts.size() >= 3);
  }
  // A `when` rule's ladder is not whole numbers: 4 x 1/3 is 1.33.
  for (const json& rr : report["rules"]) {
    if (rr["rule"] != "mix-when-accurate") continue;
    bool fraction = false;
    for (const json& c : rr["sweep"]) fraction |= c["threshold"].get<std::string>().find('.') != std::string::npos;
    CHECK(fraction);
  }
}

TEST_CASE("backtest e2e: --against counts the alerts of both rule sets as their separate runs, paired") {
  Fixture f;
  // Old: every Y (and when's N) 5; new: 8, and one rule the old file has not.
  std::vector<RuleDef> older = f.rules, newer = f.rules;
  for (RuleDef& d : older) d.value = "5";
  for (RuleDef& d : newer) d.value = "8";
  const std::string added_rule = "err-when-efficient";
  older.erase(std::find_if(older.begin(), older.end(), [&](const RuleDef& d) { return d.name == added_rule; }));
  const std::string old_text = rules_file(older), new_text = rules_file(newer);
  const std::string old_path = f.dir.write("old.toml", old_text);
  const std::string new_path = f.dir.write("new.toml", new_text);
  RunResult r = swt({"backtest", "-r", new_path, "--against", old_path, "--format", "json", f.log});
  REQUIRE_MESSAGE(r.exit_status == 0, r.err);
  auto report = swthrottle::test::parse_json(r.out);
  REQUIRE(report.has_value());
  // The two rule sets, each run on its own.
  auto old_runs = separate_runs(f.dir, f.log, old_text);
  auto new_runs = separate_runs(f.dir, f.log, new_text);
  REQUIRE(old_runs.size() == f.rules.size() - 1);
  REQUIRE(new_runs.size() == f.rules.size());
  REQUIRE((*report)["diff"].size() == f.rules.size());
  uint64_t changed = 0;
  for (const json& d : (*report)["diff"]) {
    const std::string name = d["rule"];
    INFO("rule ", name);
    const Separate& o = old_runs[name];  // empty for the added rule
    const Separate& n = new_runs[name];
    const uint64_t old_alerts = d["old_alerts"], new_alerts = d["new_alerts"];
    CHECK(old_alerts == o.alerts.size());
    CHECK(new_alerts == n.alerts.size());
    const uint64_t unchanged = d["unchanged"], moved = d["moved"], added = d["added"], removed = d["removed"];
    CHECK(unchanged + moved + removed == old_alerts);
    CHECK(unchanged + moved + added == new_alerts);
    // The pairing of rule_diff.cpp, redone from the separate runs: key by key
    // in time order, an old and a new alert less than the (new) window apart
    // pair up, at the same time unchanged, else moved.
    const int64_t near = 60'000;  // every rule's window is 1m
    std::map<std::string, std::pair<std::vector<int64_t>, std::vector<int64_t>>> by_key;
    for (const auto& [t, k, c] : o.alerts) by_key[k].first.push_back(parse_ms(t));
    for (const auto& [t, k, c] : n.alerts) by_key[k].second.push_back(parse_ms(t));
    uint64_t u = 0, m = 0, a = 0, rm = 0;
    for (auto& [key, times] : by_key) {
      auto& [ot, nt] = times;
      std::sort(ot.begin(), ot.end());
      std::sort(nt.begin(), nt.end());
      std::size_t i = 0, j = 0;
      while (i < ot.size() || j < nt.size()) {
        if (i < ot.size() && j < nt.size() && std::llabs(ot[i] - nt[j]) < near) {
          ++(ot[i] == nt[j] ? u : m);
          ++i;
          ++j;
        } else if (j == nt.size() || (i < ot.size() && ot[i] < nt[j])) {
          ++rm;
          ++i;
        } else {
          ++a;
          ++j;
        }
      }
    }
    CHECK(unchanged == u);
    CHECK(moved == m);
    CHECK(added == a);
    CHECK(removed == rm);
    if (name == added_rule) {
      CHECK(d["status"] == "new rule");
      CHECK(added > 0);
      continue;
    }
    CHECK(d["status"] == (old_alerts == new_alerts && a + rm + m == 0 ? "unchanged" : "changed"));
    if (d["status"] == "changed") ++changed;
  }
  CHECK(changed >= 4);  // Y 5 -> 8 changes what every alert rule does
}

TEST_CASE("backtest e2e: usage errors exit 2 and say what is wrong") {
  TempDir dir;
  const std::string log = dir.write("h.log", "2026-11-01T00:00:00Z ERROR payment failed user=u1 ip=10.0.0.1\n");
  const std::string rule = rule_toml({"e", Shape::Cooldown, "accurate", "5", "1m"}, "5", "1m");
  SUBCASE("arrival time without --time") {
    const std::string rules = dir.write("arrival.toml", "[settings]\ntime = \"arrival\"\n" + rule);
    RunResult r = swt({"backtest", "-r", rules, log});
    CHECK(r.exit_status == 2);
    CHECK(r.err.find("log time") != std::string::npos);
    CHECK(r.out.empty());
    // --time log makes it one.
    CHECK(swt({"backtest", "-r", rules, "--time", "log", log}).exit_status == 0);
  }
  SUBCASE("a value of --sweep that is not a number") {
    const std::string rules = dir.write("rules.toml", kSettings + rule);
    RunResult r = swt({"backtest", "-r", rules, "--sweep", "5,x", log});
    CHECK(r.exit_status == 2);
    CHECK(r.err.find("--sweep: column 3") != std::string::npos);
    CHECK(r.err.find("\"x\"") != std::string::npos);
  }
  SUBCASE("--only a rule no file has") {
    const std::string rules = dir.write("rules.toml", kSettings + rule);
    RunResult r = swt({"backtest", "-r", rules, "--only", "nosuch", log});
    CHECK(r.exit_status == 2);
    CHECK(r.err.find("nosuch") != std::string::npos);
    CHECK(swt({"backtest", "-r", rules, "--only", "e", log}).exit_status == 0);
  }
}
