#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/rules.h"
#include "config/settings_parser.h"
#include "support/temp_dir.h"

using swthrottle::config::Field;
using swthrottle::config::load_rules;
using swthrottle::config::Mode;
using swthrottle::config::parse_rules;
using swthrottle::config::Rule;
using swthrottle::config::RuleKind;
using swthrottle::config::RuleSet;
using swthrottle::config::TimeSource;
using swthrottle::config::TimestampSpec;
using swthrottle::test::TempDir;
using namespace swthrottle::config;

namespace {

// A rules file that uses most keys of DESIGN.md §1: the two rules of its
// example, a [settings] table of seven keys, and a comment on every key.
const std::string kSpecExample = R"toml([settings]                 # all optional
mode      = "efficient"    # window mode for every rule: "efficient" | "accurate"
buckets   = 10             # buckets per window, 1..3600
time      = "arrival"      # "arrival": the moment the line is read | "log": the timestamp in the line
timestamp = "auto"         # time = "log" only: "auto" | "rfc3339" | "syslog" | "epoch" | "clf" | a strptime format
timezone  = "local"        # zone for log timestamps that carry no offset: "local" | "UTC" | "+02:00"
year      = 2026           # year for syslog timestamps, which carry none (default: see §4)
max_keys  = 100000         # per rule: distinct keys kept before the least recently used is evicted

[[rule]]
name      = "ssh-bruteforce"   # unique, [A-Za-z0-9_.-]+
kind      = "alert"            # "alert" (detect) | "throttle" (pass at most Y, suppress the rest)
threshold = "5 per 1m"         # "Y per X" (also "5/1m"); counts all of this rule's events
key       = "{ip}"             # optional: a separate window per key, built from named captures
cooldown  = "10m"              # alert only: least time between two alerts of one rule+key (default: the window)
resolve   = true               # alert only: also report when the condition stops holding (default false)
message   = "{count} failed logins from {ip} within {window}"   # optional fmt-style template
exec      = ["curl", "-fsS", "--data-binary", "@-", "http://127.0.0.1:8080/hook"]  # optional, per alert
ignore    = 'from 10\.0\.0\.'  # optional: lines matching this never count for the rule

  [[rule.event]]
  name  = "failed"
  match = 'Failed password for (?:invalid user )?\S+ from (?P<ip>[0-9a-fA-F.:]+)'

  [[rule.event]]
  name  = "invalid"
  match = 'Invalid user \S+ from (?P<ip>[0-9a-fA-F.:]+)'

[[rule]]                       # a multi-event condition instead of a plain threshold
name   = "nginx-5xx-ratio"
kind   = "alert"
window = "5m"
when   = "error / request > 0.05 and request >= 100"
  [[rule.event]]
  name  = "request"
  match = '"\w+ \S+ HTTP/[\d.]+" \d{3} '
  [[rule.event]]
  name  = "error"
  match = '"\w+ \S+ HTTP/[\d.]+" 5\d\d '
)toml";

// One minimal valid event, three lines.
const std::string kEvent = "[[rule.event]]\nname = \"e\"\nmatch = 'x'\n";

RuleSet parse_ok(const std::string& text) {
  auto r = parse_rules(text, "rules.toml");
  if (!r) FAIL_CHECK("unexpected error: " << r.error().str());
  REQUIRE(r.ok());
  return *r;
}

// A rule with one event `e`, with extra lines inserted after `kind`.
std::string alert_rule(const std::string& extra) {
  return "[[rule]]\nname = \"r\"\nkind = \"alert\"\n" + extra + kEvent;
}

struct ErrorCase {
  const char* name;
  std::string toml;
  int line;
  int col;
  std::string what;
};

void check_errors(const std::vector<ErrorCase>& cases) {
  for (const auto& c : cases) {
    INFO(std::string(c.name));
    auto r = parse_rules(c.toml, "rules.toml");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().file == "rules.toml");
    CHECK(r.error().line == c.line);
    CHECK(r.error().col == c.col);
    CHECK(r.error().what == c.what);
  }
}

}  // namespace

TEST_CASE("rules: the documented example parses into every field") {
  RuleSet set = parse_ok(kSpecExample);

  const Settings& s = set.settings;
  CHECK(s.mode == Mode::Efficient);
  CHECK(s.buckets == 10);
  CHECK(s.time == TimeSource::Arrival);
  CHECK(s.timestamp.form == TimestampSpec::Form::Auto);
  CHECK(s.timestamp.format == "");
  CHECK(s.timestamp.match == "");
  CHECK(s.timestamp.text == "auto");
  CHECK(s.timezone.local);
  CHECK(s.timezone.text == "local");
  CHECK(s.year == 2026);
  CHECK(s.max_keys == 100000);
  CHECK(s.quiet_after_ms == 5'000);

  REQUIRE(set.rules.size() == 2);
  const Rule& ssh = set.rules[0];
  CHECK(ssh.name == "ssh-bruteforce");
  CHECK(ssh.kind == RuleKind::Alert);
  REQUIRE(ssh.events.size() == 2);
  CHECK(ssh.events[0].name == "failed");
  CHECK(ssh.events[0].match == R"(Failed password for (?:invalid user )?\S+ from (?P<ip>[0-9a-fA-F.:]+))");
  CHECK(ssh.events[0].captures == std::vector<std::string>{"ip"});
  CHECK(ssh.events[1].name == "invalid");
  CHECK(ssh.events[1].match == R"(Invalid user \S+ from (?P<ip>[0-9a-fA-F.:]+))");
  CHECK(ssh.events[1].captures == std::vector<std::string>{"ip"});
  CHECK(ssh.event_names == std::vector<std::string>{"failed", "invalid"});
  CHECK(ssh.capture_names == std::vector<std::string>{"ip"});
  CHECK(ssh.window_ms == 60000);
  CHECK(ssh.window_text == "1m");
  CHECK(ssh.buckets == 10);
  CHECK(ssh.mode == Mode::Efficient);
  CHECK_FALSE(ssh.mode_set);
  CHECK(ssh.max_keys == 100000);
  REQUIRE(ssh.threshold.has_value());
  CHECK(*ssh.threshold == 5);
  CHECK(ssh.when_text == "");
  // sum of both events >= 5
  CHECK(ssh.when.eval(std::vector<uint64_t>{2, 3}));
  CHECK(ssh.when.eval(std::vector<uint64_t>{0, 5}));
  CHECK_FALSE(ssh.when.eval(std::vector<uint64_t>{2, 2}));
  REQUIRE(ssh.key.has_value());
  CHECK(ssh.key->text() == "{ip}");
  CHECK(ssh.key->uses(kFieldFirstCapture));
  CHECK_FALSE(ssh.key->uses(kFieldRule));
  REQUIRE(ssh.message.has_value());
  CHECK(ssh.message->text() == "{count} failed logins from {ip} within {window}");
  CHECK(ssh.message->uses(kFieldCount));
  CHECK(ssh.message->uses(kFieldFirstCapture));
  CHECK(ssh.message->uses(kFieldWindow));
  CHECK_FALSE(ssh.message->uses(kFieldLine));
  {
    // Field ids: built-ins by the Field enum, then captures in capture_names order.
    std::string out;
    std::vector<std::string_view> values{"ssh-bruteforce", "failed", "7", "5", "1m", "k", "the line", "0", "1.2.3.4"};
    ssh.message->render(out, values);
    CHECK(out == "7 failed logins from 1.2.3.4 within 1m");
  }
  CHECK(ssh.cooldown_ms == 600000);
  CHECK(ssh.resolve);
  CHECK(ssh.exec == std::vector<std::string>{"curl", "-fsS", "--data-binary", "@-", "http://127.0.0.1:8080/hook"});
  CHECK(ssh.ignore == R"(from 10\.0\.0\.)");
  CHECK(ssh.file == "rules.toml");
  CHECK(ssh.line == 10);
  CHECK_FALSE(ssh.fingerprint.empty());

  const Rule& nginx = set.rules[1];
  CHECK(nginx.name == "nginx-5xx-ratio");
  CHECK(nginx.kind == RuleKind::Alert);
  REQUIRE(nginx.events.size() == 2);
  CHECK(nginx.events[0].name == "request");
  CHECK(nginx.events[0].match == R"("\w+ \S+ HTTP/[\d.]+" \d{3} )");
  CHECK(nginx.events[0].captures.empty());
  CHECK(nginx.events[1].name == "error");
  CHECK(nginx.events[1].match == R"("\w+ \S+ HTTP/[\d.]+" 5\d\d )");
  CHECK(nginx.event_names == std::vector<std::string>{"request", "error"});
  CHECK(nginx.capture_names.empty());
  CHECK(nginx.window_ms == 300000);
  CHECK(nginx.window_text == "5m");
  CHECK(nginx.buckets == 10);
  CHECK_FALSE(nginx.threshold.has_value());
  CHECK(nginx.when_text == "error / request > 0.05 and request >= 100");
  // counts are in event_names order: {request, error}
  CHECK(nginx.when.eval(std::vector<uint64_t>{100, 6}));
  CHECK_FALSE(nginx.when.eval(std::vector<uint64_t>{100, 5}));  // 0.05 is not > 0.05
  CHECK_FALSE(nginx.when.eval(std::vector<uint64_t>{99, 6}));
  CHECK_FALSE(nginx.key.has_value());
  CHECK_FALSE(nginx.message.has_value());
  CHECK(nginx.cooldown_ms == 300000);  // default: the window
  CHECK_FALSE(nginx.resolve);
  CHECK(nginx.exec.empty());
  CHECK(nginx.ignore == "");
  CHECK(nginx.line == 29);
  CHECK(nginx.fingerprint != ssh.fingerprint);
}

TEST_CASE("rules: defaults without [settings]") {
  RuleSet set = parse_ok("[[rule]]\nname = \"r\"\nkind = \"throttle\"\nthreshold = \"5/1m\"\n" + kEvent);
  const Settings& s = set.settings;
  CHECK(s.mode == Mode::Efficient);
  CHECK(s.buckets == 10);
  CHECK(s.time == TimeSource::Arrival);
  CHECK(s.timestamp.form == TimestampSpec::Form::Auto);
  CHECK(s.timezone.local);
  CHECK(s.year == 0);
  CHECK(s.max_keys == 100000);
  REQUIRE(set.rules.size() == 1);
  const Rule& r = set.rules[0];
  CHECK(r.kind == RuleKind::Throttle);
  CHECK(*r.threshold == 5);  // "5/1m" is "5 per 1m"
  CHECK(r.window_ms == 60000);
  CHECK(r.window_text == "1m");
  CHECK(r.buckets == 10);
  CHECK(r.mode == Mode::Efficient);
  CHECK(r.max_keys == 100000);
  CHECK(r.cooldown_ms == 0);  // a throttle has no cooldown
  CHECK_FALSE(r.key.has_value());
  CHECK(r.line == 1);
}

TEST_CASE("rules: rules take buckets, mode and max_keys from [settings] unless they set their own") {
  RuleSet set = parse_ok(
      "[settings]\nbuckets = 6\nmode = \"accurate\"\nmax_keys = 50\n"
      "[[rule]]\nname = \"plain\"\nkind = \"alert\"\nthreshold = \"3 per 1m\"\n" +
      kEvent +
      "[[rule]]\nname = \"own\"\nkind = \"alert\"\nthreshold = \"3 per 1m\"\n"
      "buckets = 4\nmode = \"efficient\"\nmax_keys = 7\ncooldown = \"30s\"\n" +
      kEvent);
  REQUIRE(set.rules.size() == 2);
  const Rule& plain = set.rules[0];
  CHECK(plain.buckets == 6);
  CHECK(plain.mode == Mode::Accurate);
  CHECK_FALSE(plain.mode_set);
  CHECK(plain.max_keys == 50);
  CHECK(plain.cooldown_ms == 60000);
  const Rule& own = set.rules[1];
  CHECK(own.buckets == 4);
  CHECK(own.mode == Mode::Efficient);
  CHECK(own.mode_set);
  CHECK(own.max_keys == 7);
  CHECK(own.cooldown_ms == 30000);
}

TEST_CASE("rules: settings values") {
  struct Case {
    std::string line;
    void (*check)(const Settings&);
  };
  const std::vector<Case> cases = {
      {"mode = \"accurate\"", [](const Settings& s) { CHECK(s.mode == Mode::Accurate); }},
      {"buckets = 1", [](const Settings& s) { CHECK(s.buckets == 1); }},
      {"buckets = 3600", [](const Settings& s) { CHECK(s.buckets == 3600); }},
      {"time = \"log\"", [](const Settings& s) { CHECK(s.time == TimeSource::Log); }},
      {"timestamp = \"rfc3339\"", [](const Settings& s) { CHECK(s.timestamp.form == TimestampSpec::Form::Rfc3339); }},
      {"timestamp = \"syslog\"", [](const Settings& s) { CHECK(s.timestamp.form == TimestampSpec::Form::Syslog); }},
      {"timestamp = \"epoch\"", [](const Settings& s) { CHECK(s.timestamp.form == TimestampSpec::Form::Epoch); }},
      {"timestamp = \"clf\"", [](const Settings& s) { CHECK(s.timestamp.form == TimestampSpec::Form::Clf); }},
      {"timestamp = \"ymd_slash\"",
       [](const Settings& s) { CHECK(s.timestamp.form == TimestampSpec::Form::YmdSlash); }},
      {"timestamp = \"iso_basic\"",
       [](const Settings& s) { CHECK(s.timestamp.form == TimestampSpec::Form::IsoBasic); }},
      {"timestamp = \"json_epoch\"",
       [](const Settings& s) { CHECK(s.timestamp.form == TimestampSpec::Form::JsonEpoch); }},
      {"timestamp = \"%Y-%m-%d %H:%M:%S\"",
       [](const Settings& s) {
         CHECK(s.timestamp.form == TimestampSpec::Form::Strptime);
         CHECK(s.timestamp.format == "%Y-%m-%d %H:%M:%S");
         CHECK(s.timestamp.match == "");
         CHECK(s.timestamp.text == "%Y-%m-%d %H:%M:%S");
       }},
      {R"(timestamp = { match = '^\[(\w+ \w+ \d+ [\d:]+ \d+)\]', format = "%a %b %d %H:%M:%S %Y" })",
       [](const Settings& s) {
         CHECK(s.timestamp.form == TimestampSpec::Form::Strptime);
         CHECK(s.timestamp.format == "%a %b %d %H:%M:%S %Y");
         CHECK(s.timestamp.match == R"(^\[(\w+ \w+ \d+ [\d:]+ \d+)\])");
         CHECK(s.timestamp.text == R"({ match = '^\[(\w+ \w+ \d+ [\d:]+ \d+)\]', format = "%a %b %d %H:%M:%S %Y" })");
       }},
      {R"(timestamp = { match = '^(\S+)', format = "syslog" })",
       [](const Settings& s) {
         CHECK(s.timestamp.form == TimestampSpec::Form::Syslog);
         CHECK(s.timestamp.format == "");
         CHECK(s.timestamp.match == R"(^(\S+))");
       }},
      {R"(timestamp = { match = '^(\S+)' })",  // format defaults to auto
       [](const Settings& s) {
         CHECK(s.timestamp.form == TimestampSpec::Form::Auto);
         CHECK(s.timestamp.match == R"(^(\S+))");
         CHECK(s.timestamp.text == R"({ match = '^(\S+)', format = "auto" })");
       }},
      {"timezone = \"UTC\"",
       [](const Settings& s) {
         CHECK_FALSE(s.timezone.local);
         CHECK(s.timezone.offset_minutes == 0);
         CHECK(s.timezone.text == "UTC");
       }},
      {"timezone = \"+02:00\"",
       [](const Settings& s) {
         CHECK_FALSE(s.timezone.local);
         CHECK(s.timezone.offset_minutes == 120);
         CHECK(s.timezone.text == "+02:00");
       }},
      {"timezone = \"-0530\"", [](const Settings& s) { CHECK(s.timezone.offset_minutes == -330); }},
      {"timezone = \"+02\"", [](const Settings& s) { CHECK(s.timezone.offset_minutes == 120); }},
      {"timezone = \"-00:30\"", [](const Settings& s) { CHECK(s.timezone.offset_minutes == -30); }},
      {"timezone = \"local\"", [](const Settings& s) { CHECK(s.timezone.local); }},
      {"timezone = \"Europe/Berlin\"",
       [](const Settings& s) {
         CHECK_FALSE(s.timezone.local);
         CHECK(s.timezone.name == "Europe/Berlin");
         CHECK(s.timezone.text == "Europe/Berlin");
       }},
      {"timezone = \"CET\"", [](const Settings& s) { CHECK(s.timezone.name == "CET"); }},
      {"year = 1970", [](const Settings& s) { CHECK(s.year == 1970); }},
      {"year = 9999", [](const Settings& s) { CHECK(s.year == 9999); }},
      {"max_keys = 1", [](const Settings& s) { CHECK(s.max_keys == 1); }},
      {"quiet_after = \"30s\"", [](const Settings& s) { CHECK(s.quiet_after_ms == 30'000); }},
      {"quiet_after = \"off\"", [](const Settings& s) { CHECK(s.quiet_after_ms == -1); }},
  };
  for (const auto& c : cases) {
    INFO(c.line);
    RuleSet set = parse_ok("[settings]\n" + c.line + "\n" + alert_rule("threshold = \"1 per 1h\"\n"));
    c.check(set.settings);
  }
}

TEST_CASE("rules: captures in group order, union across events in first-appearance order") {
  RuleSet set = parse_ok(
      "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"1/1s\"\n"
      "key = \"{user}@{host}\"\n"
      "message = \"{rule} {event} {count} {threshold} {window} {key} {line} {suppressed} {port}\"\n"
      "[[rule.event]]\nname = \"a\"\nmatch = '(?P<user>\\w+)(x)(?P<host>\\w+)'\n"
      "[[rule.event]]\nname = \"b\"\nmatch = '(?P<port>\\d+) (?P<user>\\w+)'\n");
  const Rule& r = set.rules[0];
  CHECK(r.events[0].captures == std::vector<std::string>{"user", "host"});
  CHECK(r.events[1].captures == std::vector<std::string>{"port", "user"});
  CHECK(r.capture_names == std::vector<std::string>{"user", "host", "port"});
  CHECK(r.key->uses(kFieldFirstCapture + 0));
  CHECK(r.key->uses(kFieldFirstCapture + 1));
  CHECK_FALSE(r.key->uses(kFieldFirstCapture + 2));
  std::string out;
  std::vector<std::string_view> values{"r", "a", "3", "1", "1s", "K", "L", "0", "u", "h", "80"};
  r.key->render(out, values);
  CHECK(out == "u@h");
  out.clear();
  r.message->render(out, values);
  CHECK(out == "r a 3 1 1s K L 0 80");
  // {rule} and {event} are the only built-ins a key may use
  RuleSet set2 = parse_ok(alert_rule("threshold = \"1/1s\"\nkey = \"{rule}/{event}\"\n"));
  CHECK(set2.rules[0].key->uses(kFieldRule));
  CHECK(set2.rules[0].key->uses(kFieldEvent));
}

TEST_CASE("rules: accepted odds and ends") {
  // cooldown "0": an alert on every event while the condition holds
  CHECK(parse_ok(alert_rule("threshold = \"1/1s\"\ncooldown = \"0\"\n")).rules[0].cooldown_ms == 0);
  // resolve = false is the default, spelled out
  CHECK_FALSE(parse_ok(alert_rule("threshold = \"1/1s\"\nresolve = false\n")).rules[0].resolve);
  // 64 events is the most
  std::string many = "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"1/1s\"\n";
  for (int i = 0; i < 64; ++i) many += "[[rule.event]]\nname = \"e" + std::to_string(i) + "\"\nmatch = 'x'\n";
  CHECK(parse_ok(many).rules[0].events.size() == 64);
  // window text is kept as written, less surrounding spaces
  RuleSet w = parse_ok(alert_rule("window = \" 1h30m \"\nwhen = \"e > 1\"\n"));
  CHECK(w.rules[0].window_text == "1h30m");
  CHECK(w.rules[0].window_ms == 5400000);
  // inline tables are tables too
  RuleSet inl = parse_ok(
      "rule = [{ name = \"r\", kind = \"alert\", threshold = \"1/1s\", event = [{ name = \"e\", match = 'x' }] }]\n");
  CHECK(inl.rules[0].events[0].name == "e");
  // \Q...\E, character classes and escaped parentheses are not mistaken for unsupported syntax
  CHECK(parse_ok("[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"1/1s\"\n"
                 "[[rule.event]]\nname = \"e\"\nmatch = '\\Q(?=\\E [(?=] \\(?=x a+? b{2}? [[:alpha:]]+'\n")
            .rules.size() == 1);
}

TEST_CASE("rules: fingerprints equal exactly when rules count the same way") {
  auto fp = [](const std::string& name, const std::string& cond, const std::string& extra = "",
               const std::string& match = "x") {
    RuleSet set = parse_ok("[[rule]]\nname = \"" + name + "\"\nkind = \"alert\"\n" + cond + extra +
                           "[[rule.event]]\nname = \"e\"\nmatch = '" + match + "'\n");
    return set.rules[0].fingerprint;
  };
  const std::string base = fp("a", "threshold = \"5 per 1m\"\n");
  CHECK(fp("b", "threshold = \"5/60s\"\n") == base);  // name and spelling do not matter
  CHECK(fp("a", "threshold = \"5 per 1m\"\n", "key = \"{rule}\"\nmessage = \"m\"\ncooldown = \"1h\"\n") == base);
  CHECK(fp("a", "threshold = \"6 per 1m\"\n") != base);
  CHECK(fp("a", "threshold = \"5 per 2m\"\n") != base);
  CHECK(fp("a", "threshold = \"5 per 1m\"\n", "buckets = 20\n") != base);
  CHECK(fp("a", "threshold = \"5 per 1m\"\n", "mode = \"accurate\"\n") != base);
  CHECK(fp("a", "threshold = \"5 per 1m\"\n", "ignore = 'y'\n") != base);
  CHECK(fp("a", "threshold = \"5 per 1m\"\n", "", "xy") != base);
  CHECK(fp("a", "window = \"1m\"\nwhen = \"e >= 5\"\n") != base);
  CHECK(fp("a", "window = \"1m\"\nwhen = \"e>=5\"\n") == fp("a", "window = \"60s\"\nwhen = \"e >= 5\"\n"));
  CHECK(fp("a", "window = \"1m\"\nwhen = \"e > 5\"\n") != fp("a", "window = \"1m\"\nwhen = \"e >= 5\"\n"));
  const std::string rw = "resolve_when = \"e < 2\"\n";
  CHECK(fp("a", "threshold = \"5 per 1m\"\n", rw) != base);
  CHECK(fp("a", "threshold = \"5 per 1m\"\n", "resolve_when = \"e<2\"\n") == fp("a", "threshold = \"5 per 1m\"\n", rw));
  CHECK(fp("a", "threshold = \"5 per 1m\"\n", "resolve_when = \"e < 1\"\n") !=
        fp("a", "threshold = \"5 per 1m\"\n", rw));
  // throttle vs alert
  RuleSet t = parse_ok("[[rule]]\nname = \"a\"\nkind = \"throttle\"\nthreshold = \"5 per 1m\"\n" + kEvent);
  CHECK(t.rules[0].fingerprint != base);
}

// Given two versions of one rule, a SIGHUP reload keeps its windows when they
// still count the same things the same way; a state file only when nothing
// that decides changed (config/rule_identity.h says why they differ).
TEST_CASE("rules: a reload keeps windows more often than a state load") {
  auto rule = [](const std::string& body, const std::string& match = "x") {
    RuleSet set =
        parse_ok("[[rule]]\nname = \"a\"\n" + body + "[[rule.event]]\nname = \"e\"\nmatch = '" + match + "'\n");
    return set.rules[0];
  };
  const Rule base = rule("kind = \"alert\"\nthreshold = \"5 per 1m\"\n");
  struct Case {
    const char* what;
    Rule after;
    bool reload_keeps;
    bool state_keeps;
  };
  const std::vector<Case> cases{
      {"unchanged", rule("kind = \"alert\"\nthreshold = \"5 per 1m\"\n"), true, true},
      {"message and cooldown", rule("kind = \"alert\"\nthreshold = \"5 per 1m\"\nmessage = \"m\"\ncooldown = \"1h\"\n"),
       true, true},
      {"threshold count", rule("kind = \"alert\"\nthreshold = \"6 per 1m\"\n"), true, false},
      {"mode", rule("kind = \"alert\"\nthreshold = \"5 per 1m\"\nmode = \"accurate\"\n"), true, false},
      {"ignore", rule("kind = \"alert\"\nthreshold = \"5 per 1m\"\nignore = 'y'\n"), true, false},
      {"when", rule("kind = \"alert\"\nwindow = \"1m\"\nwhen = \"e >= 5\"\n"), true, false},
      // Part of the condition: a kept firing episode ends by the new one.
      {"resolve_when", rule("kind = \"alert\"\nthreshold = \"5 per 1m\"\nresolve_when = \"e < 2\"\n"), true, false},
      {"window", rule("kind = \"alert\"\nthreshold = \"5 per 2m\"\n"), false, false},
      {"buckets", rule("kind = \"alert\"\nthreshold = \"5 per 1m\"\nbuckets = 20\n"), false, false},
      {"pattern", rule("kind = \"alert\"\nthreshold = \"5 per 1m\"\n", "xy"), false, false},
      {"kind", rule("kind = \"throttle\"\nthreshold = \"5 per 1m\"\n"), false, false},
      // The fingerprint leaves the key out; a reload cannot keep one window as many.
      {"a key", rule("kind = \"alert\"\nthreshold = \"5 per 1m\"\nkey = \"{rule}\"\n"), false, true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK(windows_carry_over(base, c.after) == c.reload_keeps);
    CHECK((fingerprint(base) == fingerprint(c.after)) == c.state_keeps);
    CHECK(c.after.fingerprint == fingerprint(c.after));
  }
}

TEST_CASE("rules: top-level errors") {
  const std::string rule = alert_rule("threshold = \"1/1s\"\n");
  check_errors({
      {"unknown table", "[rules]\nx = 1\n", 1, 2,
       R"(unknown table "rules" at the top level (did you mean "rule"?); only [settings], [fleet], [delivery] and [[rule]] may appear there)"},
      {"unknown array of tables", "[[rulez]]\nx = 1\n", 1, 3,
       R"(unknown table "rulez" at the top level (did you mean "rule"?); only [settings], [fleet], [delivery] and [[rule]] may appear there)"},
      {"unknown key", "foo = 1\n" + rule, 1, 1,
       R"(unknown key "foo" at the top level; only [settings], [fleet], [delivery] and [[rule]] may appear there)"},
      {"setting or rule key outside its table", "mode = \"accurate\"\n" + rule, 1, 1,
       R"(key "mode" belongs in [settings] or in a [[rule]]; put it below a [settings] or [[rule]] line)"},
      {"setting outside [settings]", "year = 2026\n" + rule, 1, 1,
       R"(key "year" belongs in [settings]; put it below a [settings] line)"},
      {"rule key outside [[rule]]", "name = \"x\"\n" + rule, 1, 1,
       R"(key "name" belongs in a rule; put it below a [[rule]] line)"},
      {"[rule] instead of [[rule]]", "[rule]\nname = \"x\"\n", 1, 2,
       "[rule] must be written [[rule]] (an array of tables, one per rule)"},
      {"rule is a number", "rule = 5\n", 1, 8, "rule must be an array of tables ([[rule]]), not 5"},
      {"rule array of numbers", "rule = [1]\n", 1, 9, "each [[rule]] must be a table, not 1"},
      {"settings is a number", "settings = 5\n" + rule, 1, 12, "settings must be a table ([settings]), not 5"},
      {"toml syntax error", "[settings]\nmode = \n" + rule, 2, 8,
       R"(Error while parsing key-value pair: expected value, saw '\n')"},
      {"no rules", "", 0, 0, "no [[rule]] defined"},
      {"only settings", "[settings]\nbuckets = 5\n", 0, 0, "no [[rule]] defined"},
  });
}

TEST_CASE("rules: [settings] errors") {
  const std::string rule = alert_rule("threshold = \"1/1s\"\n");
  auto s = [&](const std::string& line) { return "[settings]\n" + line + "\n" + rule; };
  const std::string ts_choices =
      R"("auto", "rfc3339", "syslog", "epoch", "clf", "ymd_slash", "iso_basic", "json_epoch", a strptime format (containing %))";
  check_errors({
      {"unknown key", s("bukets = 10"), 2, 1, R"(unknown key "bukets" in [settings] (did you mean "buckets"?))"},
      {"unknown key, nothing close", s("colour = 1"), 2, 1, R"(unknown key "colour" in [settings])"},
      {"mode", s("mode = \"fast\""), 2, 8, R"(mode must be "efficient" or "accurate", not "fast")"},
      {"mode typo", s("mode = \"acurate\""), 2, 8,
       R"(mode must be "efficient" or "accurate", not "acurate" (did you mean "accurate"?))"},
      {"mode type", s("mode = 1"), 2, 8, R"(mode must be "efficient" or "accurate", not 1)"},
      {"buckets type", s("buckets = \"ten\""), 2, 11, R"(buckets must be an integer from 1 to 3600, not "ten")"},
      {"buckets 0", s("buckets = 0"), 2, 11, "buckets must be an integer from 1 to 3600, not 0"},
      {"buckets 3601", s("buckets = 3601"), 2, 11, "buckets must be an integer from 1 to 3600, not 3601"},
      {"buckets float", s("buckets = 2.5"), 2, 11, "buckets must be an integer from 1 to 3600, not 2.5"},
      {"time", s("time = \"logs\""), 2, 8, R"(time must be "arrival" or "log", not "logs" (did you mean "log"?))"},
      {"timestamp", s("timestamp = \"iso\""), 2, 13,
       "timestamp must be " + ts_choices + R"( or a table { match = 'REGEX', format = "..." }, not "iso")"},
      {"timestamp typo", s("timestamp = \"rfc3399\""), 2, 13,
       "timestamp must be " + ts_choices +
           R"( or a table { match = 'REGEX', format = "..." }, not "rfc3399" (did you mean "rfc3339"?))"},
      {"timestamp type", s("timestamp = 5"), 2, 13,
       "timestamp must be " + ts_choices + R"( or a table { match = 'REGEX', format = "..." }, not 5)"},
      {"timestamp table without match", s("timestamp = { format = \"clf\" }"), 2, 13,
       "settings.timestamp has no match; give match = 'REGEX' whose first capture group holds the timestamp"},
      {"timestamp match without group", s("timestamp = { match = 'abc', format = \"clf\" }"), 2, 23,
       R"(timestamp match 'abc' has no capture group; put the timestamp in the first group, e.g. '^\[([^\]]+)\]')"},
      {"timestamp match type", s("timestamp = { match = 5 }"), 2, 23,
       "timestamp match must be a string (an RE2 pattern), not 5"},
      {"timestamp match invalid", s("timestamp = { match = '(x', format = \"clf\" }"), 2, 24,
       "invalid regex '(x': missing ): (x"},
      {"timestamp table unknown key", s("timestamp = { match = '(x)', fromat = \"clf\" }"), 2, 30,
       R"(unknown key "fromat" in settings.timestamp (did you mean "format"?))"},
      {"timestamp format", s("timestamp = { match = '(x)', format = \"iso\" }"), 2, 39,
       "timestamp format must be " + ts_choices + R"(, not "iso")"},
      {"timezone name", s("timezone = \"Europe/Berln\""), 2, 12,
       R"(no time zone "Europe/Berln" in the tz database (did you mean "Europe/Berlin"?))"},
      {"timezone hours", s("timezone = \"+25:00\""), 2, 12,
       R"(timezone must be "local", "UTC", an offset such as "+02:00" or "-0530", or a zone name such as "Europe/Berlin", not "+25:00")"},
      {"timezone minutes", s("timezone = \"+02:60\""), 2, 12,
       R"(timezone must be "local", "UTC", an offset such as "+02:00" or "-0530", or a zone name such as "Europe/Berlin", not "+02:60")"},
      {"timezone one digit", s("timezone = \"+2\""), 2, 12,
       R"(timezone must be "local", "UTC", an offset such as "+02:00" or "-0530", or a zone name such as "Europe/Berlin", not "+2")"},
      {"timezone no sign", s("timezone = \"0200\""), 2, 12,
       R"(timezone must be "local", "UTC", an offset such as "+02:00" or "-0530", or a zone name such as "Europe/Berlin", not "0200")"},
      {"year", s("year = 20"), 2, 8, "year must be an integer from 1970 to 9999, not 20"},
      {"year high", s("year = 10000"), 2, 8, "year must be an integer from 1970 to 9999, not 10000"},
      {"max_keys 0", s("max_keys = 0"), 2, 12, "max_keys must be an integer >= 1, not 0"},
      {"max_keys negative", s("max_keys = -5"), 2, 12, "max_keys must be an integer >= 1, not -5"},
      {"max_keys type", s("max_keys = \"many\""), 2, 12, R"(max_keys must be an integer >= 1, not "many")"},
      {"quiet_after type", s("quiet_after = 5"), 2, 15,
       R"(quiet_after must be a duration such as "1m" or "1d", or "off", not 5)"},
  });
}

TEST_CASE("rules: [[rule]] errors") {
  const std::string ev = kEvent;  // three lines
  check_errors({
      {"unknown key (the brief's example)",
       "[[rule]]\nname = \"ssh\"\nkind = \"alert\"\ntreshold = \"5 per 1m\"\n" + ev, 4, 1,
       R"(unknown key "treshold" in [[rule]] "ssh" (did you mean "threshold"?))"},
      {"unknown key in an unnamed rule", "[[rule]]\nnam = \"r\"\nkind = \"alert\"\n" + ev, 2, 1,
       R"(unknown key "nam" in [[rule]] #1 (did you mean "name"?))"},
      {"unknown sub-table",
       "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"1/1s\"\n[[rule.events]]\nname = \"e\"\n", 5, 8,
       R"(unknown key "events" in [[rule]] "r" (did you mean "event"?))"},
      {"no name", "[[rule]]\nkind = \"alert\"\nthreshold = \"1/1s\"\n" + ev, 1, 1, "[[rule]] #1 has no name"},
      {"second rule has no name",
       "[[rule]]\nname = \"a\"\nkind = \"alert\"\nthreshold = \"1/1s\"\n" + ev +
           "[[rule]]\nkind = \"alert\"\nthreshold = \"1/1s\"\n" + ev,
       8, 1, "[[rule]] #2 has no name"},
      {"name type", "[[rule]]\nname = 5\n", 2, 8, "name must be a string, not 5"},
      {"name characters", "[[rule]]\nname = \"ssh brute\"\n", 2, 8,
       R"(rule name "ssh brute" may contain only letters, digits, "_", "." and "-")"},
      {"name empty", "[[rule]]\nname = \"\"\n", 2, 8,
       R"(rule name "" may contain only letters, digits, "_", "." and "-")"},
      {"duplicate name",
       "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"1/1s\"\n" + ev +
           "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"1/1s\"\n" + ev,
       9, 8, R"(duplicate rule name "r" (first defined at rules.toml:2:8))"},
      {"no kind", "[[rule]]\nname = \"r\"\nthreshold = \"1/1s\"\n" + ev, 1, 1,
       R"([[rule]] "r" has no kind; add kind = "alert" (raise alerts) or kind = "throttle" (pass at most Y lines, suppress the rest))"},
      {"kind typo", "[[rule]]\nname = \"r\"\nkind = \"alrt\"\n", 3, 8,
       R"(kind must be "alert" or "throttle", not "alrt" (did you mean "alert"?))"},
      {"kind type", "[[rule]]\nname = \"r\"\nkind = 1\n", 3, 8, R"(kind must be "alert" or "throttle", not 1)"},
  });
}

TEST_CASE("rules: [[rule.event]] errors") {
  const std::string head = "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"1/1s\"\n";  // 4 lines
  std::string many = head;
  for (int i = 0; i < 65; ++i) many += "[[rule.event]]\nname = \"e" + std::to_string(i) + "\"\nmatch = 'x'\n";
  check_errors({
      {"no events", head, 1, 1, R"([[rule]] "r" has no events; add at least one [[rule.event]] with name and match)"},
      {"empty event array", head + "event = []\n", 5, 9,
       R"([[rule]] "r" has no events; add at least one [[rule.event]] with name and match)"},
      {"event is a number", head + "event = 5\n", 5, 9, "event must be an array of tables ([[rule.event]]), not 5"},
      {"[rule.event]", head + "[rule.event]\nname = \"e\"\nmatch = 'x'\n", 5, 1,
       "[rule.event] must be written [[rule.event]] (an array of tables, one per event)"},
      {"65 events", many, 4 + 64 * 3 + 1, 1, R"([[rule]] "r" has more than 64 events)"},
      {"unknown key", head + "[[rule.event]]\nname = \"e\"\nmach = 'x'\n", 7, 1,
       R"(unknown key "mach" in [[rule.event]] "e" of [[rule]] "r" (did you mean "match"?))"},
      {"unknown key, unnamed event", head + "[[rule.event]]\nmatch = 'x'\nnme = \"e\"\n", 7, 1,
       R"(unknown key "nme" in [[rule.event]] #1 of [[rule]] "r" (did you mean "name"?))"},
      {"no name", head + "[[rule.event]]\nmatch = 'x'\n", 5, 1, R"([[rule.event]] #1 of [[rule]] "r" has no name)"},
      {"name type", head + "[[rule.event]]\nname = 5\n", 6, 8, "event name must be a string, not 5"},
      {"name not an identifier", head + "[[rule.event]]\nname = \"5xx\"\n", 6, 8,
       R"(event name "5xx" must start with a letter or "_" and hold only letters, digits and "_" (when refers to events by name))"},
      {"name with a dash", head + "[[rule.event]]\nname = \"a-b\"\n", 6, 8,
       R"(event name "a-b" must start with a letter or "_" and hold only letters, digits and "_" (when refers to events by name))"},
      {"name is a keyword", head + "[[rule.event]]\nname = \"and\"\n", 6, 8,
       R"(event name "and" is a keyword of when (and, or, not); choose another name)"},
      {"duplicate name", head + kEvent + "[[rule.event]]\nname = \"e\"\nmatch = 'y'\n", 9, 8,
       R"(duplicate event name "e" in [[rule]] "r" (first defined at rules.toml:6:8))"},
      {"no match", head + "[[rule.event]]\nname = \"e\"\n", 5, 1,
       R"([[rule.event]] "e" of [[rule]] "r" has no match; give match (an RE2 pattern) or fields (on JSON lines))"},
      {"match type", head + "[[rule.event]]\nname = \"e\"\nmatch = 5\n", 7, 9,
       "match must be a string (an RE2 pattern), not 5"},
  });
}

TEST_CASE("rules: regex errors point into the pattern") {
  // match is on line 7; in `match = '...'` the quote is column 9, so pattern byte k is column 10 + k.
  auto m = [](const std::string& value) {
    return "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"1/1s\"\n[[rule.event]]\nname = \"e\"\nmatch = " +
           value + "\n";
  };
  const std::string why = ", which RE2 does not support (RE2 guarantees linear time); ";
  check_errors({
      {"invalid", m("'a(b'"), 7, 10, "invalid regex 'a(b': missing ): a(b"},
      {"invalid class range", m("'[z-a]'"), 7, 11, "invalid regex '[z-a]': invalid character class range: z-a"},
      {"lookahead", m("'foo(?=bar)'"), 7, 13,
       R"(pattern uses a lookahead "(?=")" + why + "match the text that follows as part of the pattern"},
      {"negative lookahead", m("'foo(?!bar)'"), 7, 13,
       R"(pattern uses a negative lookahead "(?!")" + why +
           "list what must not count in the rule's ignore pattern instead"},
      {"lookbehind", m("'(?<=a)b'"), 7, 10,
       R"(pattern uses a lookbehind "(?<=")" + why + "match the text before as part of the pattern"},
      {"negative lookbehind", m("'(?<!a)b'"), 7, 10,
       R"(pattern uses a negative lookbehind "(?<!")" + why +
           "list what must not count in the rule's ignore pattern instead"},
      {"backreference", m(R"('(\w+) \1')"), 7, 16,
       R"(pattern uses a backreference "\1")" + why + "repeat the group's pattern instead of referring back to it"},
      {"named backreference", m(R"('(?P<w>\w+) \k<w>')"), 7, 21,
       R"(pattern uses a backreference "\k<")" + why + "repeat the group's pattern instead of referring back to it"},
      {"atomic group", m("'(?>ab)c'"), 7, 10,
       R"(pattern uses an atomic group "(?>")" + why +
           R"(use a plain group "(?:"; RE2 never backtracks, so it does the same)"},
      {"possessive", m("'a++'"), 7, 11,
       R"(pattern uses a possessive quantifier "++")" + why +
           R"(write "+"; RE2 never backtracks, so the plain quantifier does the same)"},
      {"possessive counted", m("'x{2,3}+'"), 7, 11,
       R"(pattern uses a possessive quantifier "{2,3}+")" + why +
           R"(write "{2,3}"; RE2 never backtracks, so the plain quantifier does the same)"},
      {"named group without P", m(R"('(?<ip>\d+)')"), 7, 10, R"(RE2 writes a named group as "(?P<ip>", not "(?<ip>")"},
      {"capture name twice", m("'(?P<a>x)(?P<a>y)'"), 7, 18, R"(capture group name "a" is used twice in one pattern)"},
      {"capture named like a built-in", m(R"('(?P<count>\d+)')"), 7, 10,
       R"(capture group "count" has the name of a built-in template field; rename it (built-ins: rule, event, count, threshold, window, key, line, suppressed))"},
      // basic strings: escapes are undone when counting ("\\" is one pattern byte, two file columns)
      {"basic string with escapes", m(R"x("\\d+(?=x)")x"), 7, 14,
       R"(pattern uses a lookahead "(?=")" + why + "match the text that follows as part of the pattern"},
      {"basic string with \\u escape", m(R"x("\u00e9(?=x)")x"), 7, 16,
       R"(pattern uses a lookahead "(?=")" + why + "match the text that follows as part of the pattern"},
      // columns count characters, as toml++ does: "é" is two bytes but one column
      {"non-ASCII before", m("'\xc3\xa9(?=x)'"), 7, 11,
       R"(pattern uses a lookahead "(?=")" + why + "match the text that follows as part of the pattern"},
      {"multi-line literal string", m("'''\nfoo(?=bar)'''"), 7, 9,
       R"(pattern uses a lookahead "(?=")" + why + "match the text that follows as part of the pattern"},
      {"ignore empty", alert_rule("threshold = \"1/1s\"\nignore = ''\n"), 5, 10,
       "ignore must not be empty: an empty pattern matches every line, so nothing would count"},
      {"ignore negative lookahead", alert_rule("threshold = \"1/1s\"\nignore = 'a(?!b)'\n"), 5, 12,
       R"(pattern uses a negative lookahead "(?!")" + why +
           "match what must be there instead of excluding what must not"},
      {"ignore invalid", alert_rule("threshold = \"1/1s\"\nignore = 'a)'\n"), 5, 11,
       "invalid regex 'a)': unexpected ): a)"},
      {"ignore type", alert_rule("threshold = \"1/1s\"\nignore = 5\n"), 5, 10,
       "ignore must be a string (an RE2 pattern), not 5"},
  });
}

TEST_CASE("rules: condition errors") {
  // alert_rule: header, name, kind, then the extra lines from line 4, then the event `e`.
  auto throttle = [](const std::string& extra) {
    return "[[rule]]\nname = \"t\"\nkind = \"throttle\"\n" + extra + kEvent;
  };
  const std::string not_both = R"(; use threshold = "Y per X", or window = "X" with when = "EXPR", not both)";
  check_errors({
      {"threshold and window", alert_rule("threshold = \"1/1s\"\nwindow = \"1m\"\n"), 5, 10,
       R"([[rule]] "r" has both threshold and window)" + not_both},
      {"threshold and when", alert_rule("threshold = \"1/1s\"\nwhen = \"e > 1\"\n"), 5, 8,
       R"([[rule]] "r" has both threshold and when)" + not_both},
      {"no condition", alert_rule(""), 1, 1,
       R"([[rule]] "r" has no condition; add threshold = "Y per X", or window = "X" with when = "EXPR")"},
      {"window without when", alert_rule("window = \"1m\"\n"), 4, 10,
       R"([[rule]] "r" has window but no when; add when = "EXPR" (or use threshold = "Y per X" instead of window))"},
      {"when without window", alert_rule("when = \"e > 1\"\n"), 4, 8,
       R"([[rule]] "r" has when but no window; add window = "X", e.g. window = "5m")"},
      {"throttle with when", throttle("window = \"1m\"\nwhen = \"e > 1\"\n"), 5, 8,
       R"([[rule]] "t" is a throttle rule: it takes threshold = "Y per X", not when (a throttle passes at most Y lines per window))"},
      {"throttle with window", throttle("threshold = \"1/1s\"\nwindow = \"1m\"\n"), 5, 10,
       R"([[rule]] "t" is a throttle rule: its window comes from threshold = "Y per X"; remove window)"},
      {"throttle without threshold", throttle(""), 1, 1,
       R"([[rule]] "t" has no threshold; a throttle rule needs threshold = "Y per X")"},
      {"threshold type", alert_rule("threshold = 5\n"), 4, 13,
       R"(threshold must be a string such as "5 per 1m", not 5)"},
      {"threshold unit", alert_rule("threshold = \"5 per 1x\"\n"), 4, 21,
       R"(invalid threshold "5 per 1x": window "1x": unknown unit "x" (units: ms, s, m, h, d))"},
      {"threshold zero", alert_rule("threshold = \"0 per 1m\"\n"), 4, 14,
       R"(invalid threshold "0 per 1m": the count must be at least 1)"},
      {"window unit", alert_rule("window = \"5x\"\nwhen = \"e > 1\"\n"), 4, 12,
       R"(invalid duration "5x": unknown unit "x" (units: ms, s, m, h, d))"},
      {"window type", alert_rule("window = 5\nwhen = \"e > 1\"\n"), 4, 10,
       R"(window must be a duration such as "30s", "5m" or "1h30m", not 5)"},
      {"when type", alert_rule("window = \"1m\"\nwhen = 5\n"), 5, 8,
       R"(when must be a string such as "error / request > 0.05", not 5)"},
      {"when unknown event", alert_rule("window = \"1m\"\nwhen = \"ee > 1\"\n"), 5, 9,
       R"(when: unknown event "ee" (events: e; did you mean "e"?))"},
      {"when literal string", alert_rule("window = \"1m\"\nwhen = 'e > 1 and x > 2'\n"), 5, 19,
       R"(when: unknown event "x" (events: e; did you mean "e"?))"},
      {"when basic string with escape", alert_rule("window = \"1m\"\nwhen = \"\\u0065 > 1 and x > 2\"\n"), 5, 24,
       R"(when: unknown event "x" (events: e; did you mean "e"?))"},
      {"when multi-line string", alert_rule("window = \"1m\"\nwhen = \"\"\"\ne > 1 and x > 2\"\"\"\n"), 5, 8,
       R"(when: unknown event "x" (events: e; did you mean "e"?))"},
  });
}

TEST_CASE("rules: key, message, cooldown, resolve, exec and override errors") {
  auto throttle = [](const std::string& extra) {
    return "[[rule]]\nname = \"t\"\nkind = \"throttle\"\nthreshold = \"1/1s\"\n" + extra + kEvent;
  };
  auto alert = [](const std::string& extra) { return alert_rule("threshold = \"1/1s\"\n" + extra); };
  const std::string exec_msg =
      R"(exec must be a non-empty array of strings (the program and its arguments, run without a shell), e.g. exec = ["notify-send", "alert"], not )";
  check_errors({
      {"key unknown field", alert("key = \"{ipp}\"\n"), 5, 9, R"(key: unknown field "ipp" (fields: rule, event))"},
      {"key may not use count", alert("key = \"{count}\"\n"), 5, 9,
       R"(key: unknown field "count" (fields: rule, event))"},
      {"key type", alert("key = 5\n"), 5, 7, R"(key must be a string (a template such as "{ip}"), not 5)"},
      {"message unknown field", alert("message = \"{countt}\"\n"), 5, 13,
       R"(message: unknown field "countt" (fields: rule, event, count, threshold, window, key, line, suppressed; did you mean "count"?))"},
      {"cooldown on a throttle", throttle("cooldown = \"1m\"\n"), 5, 12,
       R"([[rule]] "t" is a throttle rule; cooldown applies to alert rules only)"},
      {"resolve on a throttle", throttle("resolve = true\n"), 5, 11,
       R"([[rule]] "t" is a throttle rule; resolve applies to alert rules only)"},
      {"cooldown unit", alert("cooldown = \"5x\"\n"), 5, 14,
       R"(invalid duration "5x": unknown unit "x" (units: ms, s, m, h, d))"},
      {"cooldown type", alert("cooldown = 10\n"), 5, 12,
       R"(cooldown must be a duration such as "30s", "5m" or "1h30m", not 10)"},
      {"resolve type", alert("resolve = \"yes\"\n"), 5, 11, R"(resolve must be true or false, not "yes")"},
      {"exec string", alert("exec = \"curl\"\n"), 5, 8, exec_msg + R"("curl")"},
      {"exec empty", alert("exec = []\n"), 5, 8, exec_msg + "an empty array"},
      {"exec element type", alert("exec = [\"a\", 5]\n"), 5, 14, "exec[1] must be a string, not 5"},
      {"exec empty program", alert("exec = [\"\"]\n"), 5, 9, "exec[0] (the program) must not be empty"},
      {"rule mode", alert("mode = \"fast\"\n"), 5, 8, R"(mode must be "efficient" or "accurate", not "fast")"},
      {"rule buckets", alert("buckets = 0\n"), 5, 11, "buckets must be an integer from 1 to 3600, not 0"},
      {"rule max_keys", alert("max_keys = 0\n"), 5, 12, "max_keys must be an integer >= 1, not 0"},
      {"resolve_when on a throttle", throttle("resolve_when = \"e < 1\"\n"), 5, 16,
       R"([[rule]] "t" is a throttle rule; resolve_when applies to alert rules only)"},
      {"resolve_when type", alert("resolve_when = 3\n"), 5, 16,
       R"(resolve_when must be a string such as "error < 3", not 3)"},
      {"resolve_when unknown event", alert("resolve_when = \"ee < 1\"\n"), 5, 17,
       R"(resolve_when: unknown event "ee" (events: e; did you mean "e"?))"},
      {"resolve_when syntax", alert("resolve_when = \"e <\"\n"), 5, 20,
       R"(resolve_when: unexpected end (expected an event name, a number or "("))"},
      {"resolve_when with resolve = false", alert("resolve = false\nresolve_when = \"e < 1\"\n"), 5, 11,
       R"([[rule]] "r" has resolve_when but resolve = false; resolve_when decides when the resolved record is written: remove one of them)"},
  });
}

TEST_CASE("rules: resolve_when is a second condition that implies resolve") {
  RuleSet set = parse_ok(alert_rule("threshold = \"10 per 1m\"\nresolve_when = \"e < 3\"\n"));
  const Rule& r = set.rules[0];
  CHECK(r.resolve);  // asked for by resolve_when
  REQUIRE(r.resolve_when.has_value());
  CHECK(r.resolve_when_text == "e < 3");
  const std::vector<uint64_t> two{2}, three{3};
  CHECK(r.resolve_when->eval(two));
  CHECK_FALSE(r.resolve_when->eval(three));
  // Without it, nothing changes: no clear condition, resolve as given.
  RuleSet plain = parse_ok(alert_rule("threshold = \"10 per 1m\"\n"));
  CHECK_FALSE(plain.rules[0].resolve_when.has_value());
  CHECK_FALSE(plain.rules[0].resolve);
  CHECK(plain.rules[0].resolve_when_text.empty());
}

TEST_CASE("rules: window and buckets must divide") {
  check_errors({
      {"settings buckets", "[settings]\nbuckets = 7\n" + alert_rule("threshold = \"5 per 1m\"\n"), 6, 13,
       R"(window "1m" (60000 ms) does not divide into 7 buckets; bucket counts that fit near 7: 6, 8, 10)"},
      {"rule buckets", alert_rule("threshold = \"5 per 1m\"\nbuckets = 7\n"), 5, 11,
       R"(window "1m" (60000 ms) does not divide into 7 buckets; bucket counts that fit near 7: 6, 8, 10)"},
      {"window shorter than the buckets", alert_rule("window = \"1ms\"\nwhen = \"e > 1\"\n"), 4, 10,
       R"(window "1ms" (1 ms) does not divide into 10 buckets; bucket counts that fit near 10: 1)"},
      {"compound window", alert_rule("window = \"1h30m\"\nwhen = \"e > 1\"\nbuckets = 7\n"), 6, 11,
       R"(window "1h30m" (5400000 ms) does not divide into 7 buckets; bucket counts that fit near 7: 6, 8, 9)"},
      {"nothing fits above", alert_rule("threshold = \"1 per 7s\"\nbuckets = 3600\n"), 5, 11,
       R"(window "7s" (7000 ms) does not divide into 3600 buckets; bucket counts that fit near 3600: 1400, 1750, 3500)"},
  });
  // the settings default applies only where a rule does not set its own buckets
  RuleSet set = parse_ok("[settings]\nbuckets = 7\n" + alert_rule("threshold = \"5 per 7s\"\n"));
  CHECK(set.rules[0].buckets == 7);
}

TEST_CASE("rules: load_rules merges files") {
  TempDir dir;
  const std::string a =
      dir.write("a.toml", "[settings]\nbuckets = 6\ntimezone = \"UTC\"\n" + alert_rule("threshold = \"1/1m\"\n"));
  const std::string b = dir.write("b.toml",
                                  "[settings]\ntimezone = \"+00:00\"\nbuckets = 6\n"
                                  "[[rule]]\nname = \"b\"\nkind = \"throttle\"\nthreshold = \"2/1m\"\n" +
                                      kEvent);
  const std::string only_settings = dir.write("s.toml", "[settings]\nmode = \"accurate\"\n");
  std::vector<std::string> paths{only_settings, a, b};
  auto r = load_rules(paths);
  REQUIRE_MESSAGE(r.ok(), r.error().str());
  REQUIRE(r->rules.size() == 2);
  CHECK(r->rules[0].name == "r");
  CHECK(r->rules[0].file == a);
  CHECK(r->rules[1].name == "b");
  CHECK(r->rules[1].file == b);
  CHECK(r->rules[1].line == 4);
  // settings from any file apply to the rules of every file
  CHECK(r->settings.buckets == 6);
  CHECK(r->settings.mode == Mode::Accurate);
  CHECK(r->rules[0].mode == Mode::Accurate);
  CHECK(r->rules[1].buckets == 6);
  CHECK(r->rules[1].mode == Mode::Accurate);
  CHECK_FALSE(r->settings.timezone.local);
  CHECK(r->settings.timezone.text == "UTC");  // the first file's spelling
}

TEST_CASE("rules: every setting given only in a later file is taken") {
  // One case per key of kSettingsKeys: a setting that is copied by hand when
  // files are merged must not be forgotten.
  struct Case {
    std::string line;
    void (*check)(const Settings&);
  };
  const std::vector<Case> cases = {
      {"mode = \"accurate\"", [](const Settings& s) { CHECK(s.mode == Mode::Accurate); }},
      {"buckets = 5", [](const Settings& s) { CHECK(s.buckets == 5); }},
      {"time = \"log\"", [](const Settings& s) { CHECK(s.time == TimeSource::Log); }},
      {"timestamp = \"clf\"", [](const Settings& s) { CHECK(s.timestamp.form == TimestampSpec::Form::Clf); }},
      {"timezone = \"+02:00\"", [](const Settings& s) { CHECK(s.timezone.offset_minutes == 120); }},
      {"year = 2001", [](const Settings& s) { CHECK(s.year == 2001); }},
      {"max_keys = 7", [](const Settings& s) { CHECK(s.max_keys == 7); }},
      {"max_future = \"5m\"", [](const Settings& s) { CHECK(s.max_future_ms == 300'000); }},
      {"max_jump = \"off\"", [](const Settings& s) { CHECK(s.max_jump_ms == -1); }},
      {"quiet_after = \"30s\"", [](const Settings& s) { CHECK(s.quiet_after_ms == 30'000); }},
      {"format = \"json\"", [](const Settings& s) { CHECK(s.format == swthrottle::config::InputFormat::Json); }},
      {"multiline = \"java\"",
       [](const Settings& s) { CHECK(s.multiline.kind == swthrottle::config::MultilineSpec::Kind::Java); }},
      {"[[settings.input]]\npath = \"*.log\"\ntimezone = \"UTC\"",
       [](const Settings& s) { CHECK(s.inputs.size() == 1); }},
  };
  std::vector<std::string> keys;
  for (const auto& c : cases) keys.push_back(c.line.substr(0, c.line.find_first_of(" \n")));
  for (const std::string& key : swthrottle::config::kSettingsKeys) {
    const bool covered = std::find(keys.begin(), keys.end(), key) != keys.end() ||
                         (key == "input" && std::find(keys.begin(), keys.end(), "[[settings.input]]") != keys.end());
    CHECK_MESSAGE(covered, key);
  }
  TempDir dir;
  const std::string rules = dir.write("a.toml", alert_rule("threshold = \"1/1h\"\n"));
  for (const auto& c : cases) {
    INFO(c.line);
    const std::string later = dir.write("b.toml", "[settings]\n" + c.line + "\n");
    std::vector<std::string> paths{rules, later};
    auto r = load_rules(paths);
    REQUIRE_MESSAGE(r.ok(), r.error().str());
    c.check(r->settings);
  }
}

TEST_CASE("rules: load_rules errors") {
  TempDir dir;
  const std::string a = dir.write("a.toml", alert_rule("threshold = \"1/1m\"\n") + "[settings]\nbuckets = 10\n");
  struct Case {
    const char* name;
    std::vector<std::string> paths;
    std::string file;
    int line;
    int col;
    std::string what;
  };
  const std::string b_dup = dir.write("dup.toml", alert_rule("threshold = \"1/1m\"\n"));
  const std::string b_conflict = dir.write("conflict.toml", "[settings]\nbuckets = 20\n");
  const std::string b_same = dir.write("same.toml", "[settings]\nbuckets = 10\n");
  const std::string b_bad = dir.write("bad.toml", "[settings]\nmode = \"fast\"\n");
  const std::string empty = dir.write("empty.toml", "");
  const std::string missing = dir.file("missing.toml");
  const std::vector<Case> cases = {
      {"duplicate across files",
       {a, b_dup},
       b_dup,
       2,
       8,
       R"(duplicate rule name "r" (first defined at )" + a + ":2:8)"},
      {"settings conflict",
       {a, b_conflict},
       b_conflict,
       2,
       11,
       "buckets = 20 conflicts with buckets = 10 in " + a +
           ":9:11; a setting given in more than one rules file must have the same value in each"},
      {"error in the second file", {a, b_bad}, b_bad, 2, 8, R"(mode must be "efficient" or "accurate", not "fast")"},
      {"missing file", {a, missing}, missing, 0, 0, "cannot read rules file: No such file or directory"},
      // A directory is read as its *.toml files in name order (rules_dir.h):
      // a.toml loads, bad.toml is the first with an error.
      {"directory", {dir.path()}, b_bad, 2, 8, R"(mode must be "efficient" or "accurate", not "fast")"},
      {"no rules in one file", {empty}, empty, 0, 0, "no [[rule]] defined"},
      {"no rules in several files",
       {empty, b_same},
       "",
       0,
       0,
       "no [[rule]] defined in any of " + empty + ", " + b_same},
      {"no files", {}, "", 0, 0, "no rules file given"},
  };
  for (const auto& c : cases) {
    INFO(std::string(c.name));
    auto r = load_rules(c.paths);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().file == c.file);
    CHECK(r.error().line == c.line);
    CHECK(r.error().col == c.col);
    CHECK(r.error().what == c.what);
  }
  // the same value in two files is fine
  std::vector<std::string> same{a, b_same};
  auto ok = load_rules(same);
  REQUIRE_MESSAGE(ok.ok(), ok.error().str());
  CHECK(ok->settings.buckets == 10);
}

TEST_CASE("rules: Error::str() has the position") {
  auto r = parse_rules("[[rule]]\nname = \"ssh\"\nkind = \"alert\"\ntreshold = \"5 per 1m\"\n" + kEvent, "rules.toml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().str() == R"(rules.toml:4:1: unknown key "treshold" in [[rule]] "ssh" (did you mean "threshold"?))");
}
