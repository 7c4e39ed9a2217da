#include "match/matcher.h"

#include <doctest/doctest.h>
#include <re2/re2.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace swthrottle::match {
// Reaches the fallback switch (see Matcher::force_fallback_for_test).
struct MatcherTestPeer {
  static void force_fallback(Matcher& m) { m.force_fallback_for_test(true); }
};
}  // namespace swthrottle::match

namespace {

using swthrottle::config::Rule;
using swthrottle::config::RuleSet;
using swthrottle::config::Template;
using swthrottle::match::Matcher;
using swthrottle::match::MatchResult;
using namespace std::string_literals;

struct Ev {
  std::string name;
  std::string match;
};

// Builds a rule by hand the way config/rules.cpp does: events with their named
// groups in group order, and the union of those names in first-appearance order.
Rule make_rule(std::string name, std::vector<Ev> events, std::string ignore = "") {
  Rule rule;
  rule.name = std::move(name);
  rule.file = "rules.toml";
  rule.line = 7;
  for (auto& e : events) {
    swthrottle::config::Event ev{e.name, e.match, {}};
    RE2 re(e.match);
    REQUIRE_MESSAGE(re.ok(), e.match);
    std::map<int, std::string> by_group;
    for (const auto& [group_name, group] : re.NamedCapturingGroups()) by_group[group] = group_name;
    for (const auto& [group, group_name] : by_group) {
      ev.captures.push_back(group_name);
      if (std::find(rule.capture_names.begin(), rule.capture_names.end(), group_name) == rule.capture_names.end()) {
        rule.capture_names.push_back(group_name);
      }
    }
    rule.event_names.push_back(e.name);
    rule.events.push_back(std::move(ev));
  }
  rule.ignore = std::move(ignore);
  return rule;
}

Template make_template(const Rule& rule, std::string_view text) {
  std::vector<std::string> known = {"rule", "event", "count", "threshold", "window", "key", "line", "suppressed"};
  known.insert(known.end(), rule.capture_names.begin(), rule.capture_names.end());
  auto resolve = [&known](std::string_view name) {
    const auto it = std::find(known.begin(), known.end(), name);
    return it == known.end() ? -1 : static_cast<int>(it - known.begin());
  };
  auto t = Template::parse(text, resolve, known);
  REQUIRE_MESSAGE(t.ok(), std::string(text));
  return *t;
}

Rule with_key(Rule rule, std::string_view key) {
  rule.key = make_template(rule, key);
  return rule;
}

Rule with_message(Rule rule, std::string_view message) {
  rule.message = make_template(rule, message);
  return rule;
}

Matcher make_matcher(const RuleSet& rules) {
  auto m = Matcher::make(rules);
  REQUIRE_MESSAGE(m.ok(), (m.ok() ? "" : m.error().str()));
  return std::move(*m);
}

// "rule{event,event}[cap=value,cap=value] rule{event}": the whole result as
// one string, so a table row states exactly what a line yields.
std::string describe(const RuleSet& rules, const Matcher& matcher, const MatchResult& out) {
  std::string s;
  for (const auto& hit : out.hits) {
    const Rule& rule = rules.rules.at(hit.rule);
    if (!s.empty()) s += ' ';
    s += rule.name + '{';
    bool first = true;
    for (std::size_t e = 0; e < 64; ++e) {
      if ((hit.events >> e & 1) == 0) continue;
      if (!first) s += ',';
      s += e < rule.events.size() ? rule.events[e].name : "BAD" + std::to_string(e);
      first = false;
    }
    s += '}';
    if (matcher.needs_captures(hit.rule)) {
      s += '[';
      for (std::size_t c = 0; c < rule.capture_names.size(); ++c) {
        if (c > 0) s += ',';
        s += rule.capture_names[c] + '=' + std::string(out.captures.at(hit.first_capture + c));
      }
      s += ']';
    }
  }
  return s;
}

struct Row {
  std::string line;
  std::string expected;
};

void check_rows(const RuleSet& rules, const std::vector<Row>& rows) {
  Matcher matcher = make_matcher(rules);
  MatchResult out;
  for (const auto& row : rows) {
    CAPTURE(row.line);
    matcher.match(row.line, out);
    CHECK(describe(rules, matcher, out) == row.expected);
  }
}

const Ev kRequest{"request", R"re("\w+ \S+ HTTP/[\d.]+" \d{3} )re"};
const Ev kError{"error", R"re("\w+ \S+ HTTP/[\d.]+" 5\d\d )re"};

}  // namespace

TEST_CASE("matcher: a line counts once for every event that finds it, in every rule") {
  RuleSet rules;
  rules.rules.push_back(make_rule("nginx-5xx", {kRequest, kError}));
  rules.rules.push_back(with_key(
      make_rule("ssh", {{"failed", R"(Failed password for (?:invalid user )?(?P<user>\S+) from (?P<ip>[0-9.]+))"},
                        {"invalid", R"(Invalid user (?P<user>\S+) from (?P<ip>[0-9.]+))"}}),
      "{ip}"));
  rules.rules.push_back(make_rule("any-get", {{"get", R"("GET )"}}));
  check_rows(
      rules,
      {
          {R"(1.2.3.4 - - [21/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 512)", "nginx-5xx{request} any-get{get}"},
          {R"(1.2.3.4 - - [21/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 503 0)",
           "nginx-5xx{request,error} any-get{get}"},
          {R"(1.2.3.4 - - [21/Nov/2026:10:00:00 +0000] "POST /a HTTP/2.0" 500 0)", "nginx-5xx{request,error}"},
          {"sshd[1]: Failed password for invalid user admin from 1.2.3.4 port 22 ssh2",
           "ssh{failed}[user=admin,ip=1.2.3.4]"},
          {"sshd[1]: Invalid user admin from 5.6.7.8", "ssh{invalid}[user=admin,ip=5.6.7.8]"},
          {"sshd[1]: Accepted password for root from 1.2.3.4 port 22 ssh2", ""},
          {"", ""},
      });
}

TEST_CASE("matcher: hits come in rule order, whatever order the set reports") {
  RuleSet rules;
  rules.rules.push_back(make_rule("r0", {{"x", "zzz"}, {"y", "a"}}));
  rules.rules.push_back(make_rule("r1", {{"x", "b"}}));
  rules.rules.push_back(make_rule("r2", {{"x", "zzz"}}));
  rules.rules.push_back(make_rule("r3", {{"x", "c"}, {"y", "b"}, {"z", "a"}}));
  check_rows(rules, {
                        {"cba", "r0{y} r1{x} r3{x,y,z}"},
                        {"c", "r3{x}"},
                        {"zzz", "r0{x} r2{x}"},
                        {"d", ""},
                    });
}

TEST_CASE("matcher: ignore removes the rule's hit, and only that rule's") {
  RuleSet rules;
  rules.rules.push_back(
      make_rule("ssh", {{"failed", "Failed password"}, {"port", R"(port \d+)"}}, R"(from 10\.0\.0\.)"));
  rules.rules.push_back(make_rule("all-failed", {{"failed", "Failed password"}}));
  check_rows(rules, {
                        {"Failed password for root from 10.0.0.7 port 22", "all-failed{failed}"},
                        {"Failed password for root from 10.0.0.7", "all-failed{failed}"},
                        {"Failed password for root from 10.1.0.7 port 22", "ssh{failed,port} all-failed{failed}"},
                        {"Accepted key for root from 10.0.0.7", ""},  // only the ignore matches
                        {"Accepted key for root from 10.0.0.7 port 22", ""},
                    });
}

TEST_CASE("matcher: captures come from the first matched event that defines them") {
  RuleSet rules;
  rules.rules.push_back(with_key(make_rule("auth", {{"failed", R"(Failed password for (?P<user>\S+) from (?P<ip>\S+))"},
                                                    {"invalid", R"(Invalid user (?P<user>\S*) from (?P<ip>\S+))"},
                                                    {"port", R"(port (?P<port>\d+))"}}),
                                 "{ip}:{port}"));
  check_rows(rules,
             {
                 {"Invalid user admin from 5.6.7.8 port 2222", "auth{invalid,port}[user=admin,ip=5.6.7.8,port=2222]"},
                 // Both name-defining events match: the first in event order wins, for every name.
                 {"Invalid user eve from 2.2.2.2; Failed password for bob from 1.1.1.1",
                  "auth{failed,invalid}[user=bob,ip=1.1.1.1,port=]"},
                 {"Failed password for bob from 1.1.1.1 port 7", "auth{failed,port}[user=bob,ip=1.1.1.1,port=7]"},
                 {"port 99", "auth{port}[user=,ip=,port=99]"},
                 // An empty group that took part counts as a value: "" from `invalid`.
                 {"Invalid user  from 3.3.3.3", "auth{invalid}[user=,ip=3.3.3.3,port=]"},
             });
}

TEST_CASE("matcher: a group that did not take part gives way to a later event, else \"\"") {
  RuleSet rules;
  rules.rules.push_back(with_message(make_rule("opt", {{"a", R"(user(?: (?P<name>[a-z]+))? done)"},
                                                       {"b", R"(name=(?P<name>\w+))"},
                                                       {"c", R"(user=(?P<name>[a-z]*);)"}}),
                                     "{name}"));
  check_rows(rules, {
                        {"user done", "opt{a}[name=]"},
                        {"user bob done", "opt{a}[name=bob]"},
                        {"user done name=zed", "opt{a,b}[name=zed]"},
                        {"user bob done name=zed", "opt{a,b}[name=bob]"},
                        // `c` matched with an empty group; it comes after `b`, so `b` wins.
                        {"user=; name=zed", "opt{b,c}[name=zed]"},
                        {"user=;", "opt{c}[name=]"},
                    });

  // An empty group that took part is a value: it is not passed over for a later event.
  RuleSet empty_first;
  empty_first.rules.push_back(with_key(
      make_rule("empty-first", {{"c", R"(user=(?P<name>[a-z]*);)"}, {"b", R"(name=(?P<name>\w+))"}}), "{name}"));
  check_rows(empty_first, {
                              {"user=; name=zed", "empty-first{c,b}[name=]"},
                              {"user=ann; name=zed", "empty-first{c,b}[name=ann]"},
                          });
}

TEST_CASE("matcher: ^ and $ are the ends of the line") {
  RuleSet rules;
  rules.rules.push_back(
      make_rule("anchors", {{"start", "^start"}, {"end", "end$"}, {"whole", "^whole line$"}, {"word", R"(\bmid\b)"}}));
  check_rows(rules, {
                        {"start mid end", "anchors{start,end,word}"},
                        {"xstart end ", ""},
                        {" start middle xend", "anchors{end}"},
                        {"whole line", "anchors{whole}"},
                        {"whole line ", ""},
                        {" whole line", ""},
                    });
}

TEST_CASE("matcher: NUL bytes and invalid UTF-8 never hide a match") {
  RuleSet rules;
  rules.rules.push_back(
      with_key(make_rule("ssh", {{"failed", R"(Failed password for (?P<user>\S+) from (?P<ip>[0-9.]+))"}}), "{user}"));
  rules.rules.push_back(make_rule("dot", {{"cafe", "caf. ok"}, {"four", "^j.rg$"}, {"five", "^j..rg$"}}));
  rules.rules.push_back(with_key(make_rule("letter", {{"e", "caf(?P<c>.) ok"}}), "{c}"));
  rules.rules.push_back(make_rule("nul", {{"dot", "a.b"}, {"escaped", R"(^x\x00y$)"}}));
  rules.rules.push_back(make_rule("smile", {{"escape", R"(\x{263a})"}, {"literal", "\u263a!"}}));
  check_rows(rules,
             {
                 // A Latin-1 byte inside \S+: RE2's UTF-8 reading alone would not match.
                 {"Failed password for j\xf6rg from 1.2.3.4 port 22", "ssh{failed}[user=j\xf6rg,ip=1.2.3.4]"},
                 {"\xff\xfe Failed password for root from 9.9.9.9 \xc0\xaf", "ssh{failed}[user=root,ip=9.9.9.9]"},
                 {"Failed password for \x80\x80 from 1.2.3.4", "ssh{failed}[user=\x80\x80,ip=1.2.3.4]"},
                 {"Failed password for root from 1.2.3.4 \xe2\x98", "ssh{failed}[user=root,ip=1.2.3.4]"},
                 {"Failed password for \xed\xa0\x80 from 1.2.3.4", "ssh{failed}[user=\xed\xa0\x80,ip=1.2.3.4]"},
                 // Valid UTF-8: `.` is one code point. Not UTF-8: `.` is one byte.
                 {"caf\xc3\xa9 ok", "dot{cafe} letter{e}[c=\xc3\xa9]"},
                 {"j\xc3\xb6rg", "dot{four}"},  // not `five`: a valid line gets no byte-wise reading
                 {"j\xf6rg", "dot{four}"},
                 {"j\xf6\xf6rg", "dot{five}"},
                 {"caf\xe9 ok", "dot{cafe} letter{e}[c=\xe9]"},
                 // Invalid elsewhere in the line: the UTF-8 reading still matches the é.
                 // Captures then come from the UTF-8 reading too.
                 {"caf\xc3\xa9 ok \xff", "dot{cafe} letter{e}[c=\xc3\xa9]"},
                 {"a\0b"s, "nul{dot}"},
                 {"x\0y"s, "nul{escaped}"},
                 {"x\0y\xff"s, ""},
                 {"xa\0b\xff"s, "nul{dot}"},
                 // \x{263a} has no Latin-1 reading; it still matches on a line that is not UTF-8.
                 {"\u263a!", "smile{escape,literal}"},
                 {"\xff \u263a!", "smile{escape,literal}"},
             });
}

TEST_CASE("matcher: 64 events in one rule, bit 63 included") {
  std::vector<Ev> events;
  for (int i = 0; i < 64; ++i) events.push_back({"e" + std::to_string(i), "\\bw" + std::to_string(i) + "\\b"});
  RuleSet rules;
  rules.rules.push_back(make_rule("many", events));
  Matcher matcher = make_matcher(rules);
  MatchResult out;

  matcher.match("w63", out);
  REQUIRE(out.hits.size() == 1);
  CHECK(out.hits[0].events == (uint64_t{1} << 63));

  matcher.match("w0 w63 w1 w62 w6", out);
  REQUIRE(out.hits.size() == 1);
  CHECK(out.hits[0].events == ((uint64_t{1} << 63) | (uint64_t{1} << 62) | 0b1000011));

  matcher.match("w64", out);
  CHECK(out.hits.empty());
}

TEST_CASE("matcher: more than 64 events is an error naming the rule") {
  std::vector<Ev> events;
  for (int i = 0; i < 65; ++i) events.push_back({"e" + std::to_string(i), "w" + std::to_string(i)});
  RuleSet rules;
  rules.rules.push_back(make_rule("ok", {{"a", "a"}}));
  rules.rules.push_back(make_rule("big", events));
  auto m = Matcher::make(rules);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().file == "rules.toml");
  CHECK(m.error().line == 7);
  CHECK(m.error().what == "rule \"big\": 65 events; at most 64 are supported");
}

TEST_CASE("matcher: no rules, or a line matching nothing, leaves the result empty") {
  RuleSet none;
  Matcher empty = make_matcher(none);
  MatchResult out;
  out.hits.push_back({1, 1, 0});
  out.captures.push_back("stale");
  empty.match("anything", out);
  CHECK(out.hits.empty());
  CHECK(out.captures.empty());

  RuleSet rules;
  rules.rules.push_back(with_key(make_rule("r", {{"e", "id=(?P<id>\\d+)"}}), "{id}"));
  Matcher matcher = make_matcher(rules);
  matcher.match("id=1", out);
  CHECK(out.hits.size() == 1);
  matcher.match("nothing here", out);
  CHECK(out.hits.empty());
  CHECK(out.captures.empty());
}

TEST_CASE("matcher: a MatchResult reused across lines holds only the latest line") {
  RuleSet rules;
  rules.rules.push_back(make_rule("plain", {{"e", "id=(?P<id>\\d+)"}}));  // groups, but no template uses them
  rules.rules.push_back(with_key(make_rule("keyed", {{"e", "id=(?P<id>\\d+)"}, {"f", "u=(?P<u>\\w+)"}}), "{id}/{u}"));
  rules.rules.push_back(with_message(make_rule("msg", {{"e", "u=(?P<u>\\w+)"}}), "user {u}"));
  Matcher matcher = make_matcher(rules);
  CHECK_FALSE(matcher.needs_captures(0));
  CHECK(matcher.needs_captures(1));
  CHECK(matcher.needs_captures(2));

  MatchResult out;
  const std::string first = "id=12 u=ann";
  matcher.match(first, out);
  REQUIRE(out.hits.size() == 3);
  // `plain` owns no capture slots: `keyed` starts at 0 and `msg` right after it.
  CHECK(out.hits[0].first_capture == 0);
  CHECK(out.hits[1].first_capture == 0);
  CHECK(out.hits[2].first_capture == 2);
  REQUIRE(out.captures.size() == 3);
  CHECK(out.captures[0] == "12");
  CHECK(out.captures[1] == "ann");
  CHECK(out.captures[2] == "ann");

  const std::string second = "u=bo";
  matcher.match(second, out);
  CHECK(describe(rules, matcher, out) == "keyed{f}[id=,u=bo] msg{e}[u=bo]");
  REQUIRE(out.captures.size() == 3);
  // The views point into the line just matched.
  CHECK(out.captures[1].data() == second.data() + 2);
  CHECK(out.captures[2].data() == second.data() + 2);

  matcher.match(first, out);
  CHECK(describe(rules, matcher, out) == "plain{e} keyed{e,f}[id=12,u=ann] msg{e}[u=ann]");
}

TEST_CASE("matcher: needs_captures follows the key and message templates") {
  RuleSet rules;
  const Rule base = make_rule("r", {{"e", R"((?P<ip>\S+) (?P<user>\S+))"}});
  rules.rules.push_back(base);                                                 // 0: no templates
  rules.rules.push_back(with_key(base, "{rule}/{event}"));                     // 1: built-ins only
  rules.rules.push_back(with_message(base, "{count} lines: {line}"));          // 2: built-ins only
  rules.rules.push_back(with_key(base, "{ip}"));                               // 3
  rules.rules.push_back(with_message(base, "{count} from {user}"));            // 4
  rules.rules.push_back(with_message(with_key(base, "{rule}"), "{ip}"));       // 5
  rules.rules.push_back(with_key(make_rule("none", {{"e", "x"}}), "{rule}"));  // 6: no captures at all
  Matcher matcher = make_matcher(rules);
  const std::vector<bool> expected = {false, false, false, true, true, true, false};
  for (uint32_t r = 0; r < expected.size(); ++r) {
    CAPTURE(r);
    CHECK(matcher.needs_captures(r) == expected[r]);
  }
  CHECK_FALSE(matcher.needs_captures(7));

  MatchResult out;
  matcher.match("1.2.3.4 root", out);
  CHECK(out.hits.size() == 6);
  CHECK(out.captures.size() == 3 * 2);
}

TEST_CASE("matcher: a moved Matcher keeps working") {
  RuleSet rules;
  rules.rules.push_back(with_key(make_rule("r", {{"e", "id=(?P<id>\\d+)"}}), "{id}"));
  Matcher a = make_matcher(rules);
  Matcher b = std::move(a);
  MatchResult out;
  b.match("id=5", out);
  CHECK(describe(rules, b, out) == "r{e}[id=5]");
  Matcher c = make_matcher(RuleSet{});
  c = std::move(b);
  c.match("id=6", out);
  CHECK(describe(rules, c, out) == "r{e}[id=6]");
}

// ---------------------------------------------------------------------------
// Differential test: the set-based matcher against one RE2 at a time.

namespace {

bool ascii_only(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// What the contract says, computed the slow way: an event matches if its
// pattern, read as UTF-8, finds the line, or (for lines that are not UTF-8)
// read as Latin-1. `valid_utf8` comes from how the test built the line.
class Reference {
 public:
  explicit Reference(const RuleSet& rules) : rules_(rules) {
    RE2::Options u;
    u.set_log_errors(false);
    RE2::Options l = u;
    l.set_encoding(RE2::Options::EncodingLatin1);
    for (const auto& rule : rules.rules) {
      std::vector<Pair> events;
      for (const auto& ev : rule.events) events.push_back(compile(ev.match, u, l));
      events_.push_back(std::move(events));
      ignores_.push_back(rule.ignore.empty() ? Pair{} : compile(rule.ignore, u, l));
    }
  }

  std::string describe(std::string_view line, bool valid_utf8) {
    std::string s;
    for (std::size_t r = 0; r < rules_.rules.size(); ++r) {
      const Rule& rule = rules_.rules[r];
      if (ignores_[r].utf8 && finds(ignores_[r], line, valid_utf8) != nullptr) {
        ++ignored;
        continue;
      }
      std::vector<const RE2*> by;  // per event: the reading that matched, or null
      for (const auto& ev : events_[r]) by.push_back(finds(ev, line, valid_utf8));
      if (std::all_of(by.begin(), by.end(), [](const RE2* re) { return re == nullptr; })) continue;
      ++hits;
      if (!s.empty()) s += ' ';
      s += rule.name + '{';
      bool first = true;
      for (std::size_t e = 0; e < by.size(); ++e) {
        if (!by[e]) continue;
        if (!first) s += ',';
        s += rule.events[e].name;
        first = false;
      }
      s += '}';
      if (!needs_captures(rule)) continue;
      s += '[';
      for (std::size_t c = 0; c < rule.capture_names.size(); ++c) {
        if (c > 0) s += ',';
        s += rule.capture_names[c] + '=' + capture(rule.capture_names[c], by, line);
      }
      s += ']';
    }
    return s;
  }

  int hits = 0;
  int ignored = 0;
  int latin1_only = 0;  // event matches that only the Latin-1 reading found

 private:
  struct Pair {
    std::shared_ptr<RE2> utf8;
    std::shared_ptr<RE2> latin1;  // null when the pattern has no Latin-1 reading
  };

  static Pair compile(const std::string& pattern, const RE2::Options& u, const RE2::Options& l) {
    Pair p{std::make_shared<RE2>(pattern, u), std::make_shared<RE2>(pattern, l)};
    REQUIRE_MESSAGE(p.utf8->ok(), pattern);
    if (!p.latin1->ok()) p.latin1.reset();
    return p;
  }

  const RE2* finds(const Pair& p, std::string_view line, bool valid_utf8) {
    const re2::StringPiece text(line.data(), line.size());
    if (RE2::PartialMatch(text, *p.utf8)) return p.utf8.get();
    if (!valid_utf8 && p.latin1 && RE2::PartialMatch(text, *p.latin1)) {
      ++latin1_only;
      return p.latin1.get();
    }
    return nullptr;
  }

  static bool needs_captures(const Rule& rule) {
    for (std::size_t c = 0; c < rule.capture_names.size(); ++c) {
      const int field = swthrottle::config::kFieldFirstCapture + static_cast<int>(c);
      if ((rule.key && rule.key->uses(field)) || (rule.message && rule.message->uses(field))) return true;
    }
    return false;
  }

  static std::string capture(const std::string& name, const std::vector<const RE2*>& by, std::string_view line) {
    for (const RE2* re : by) {
      if (!re) continue;
      const auto& named = re->NamedCapturingGroups();
      const auto it = named.find(name);
      if (it == named.end()) continue;
      std::vector<re2::StringPiece> groups(static_cast<std::size_t>(re->NumberOfCapturingGroups()) + 1);
      REQUIRE(re->Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::UNANCHORED, groups.data(),
                        static_cast<int>(groups.size())));
      const re2::StringPiece& g = groups[static_cast<std::size_t>(it->second)];
      if (g.data() != nullptr) return std::string(g.data(), g.size());
    }
    return "";
  }

  const RuleSet& rules_;
  std::vector<std::vector<Pair>> events_;
  std::vector<Pair> ignores_;
};

// Every 5th line of a loghub sample (CRLF stripped, as the reader does), or a
// few built-in lines when the corpus is not on this machine.
std::vector<std::string> corpus_lines(const std::string& file, const std::vector<std::string>& builtin) {
  const char* env = std::getenv("SWTHROTTLE_CORPUS");
  const std::string dir = env ? env : SWTHROTTLE_SOURCE_DIR "/tests/data/loghub";
  std::ifstream in(dir + "/" + file, std::ios::binary);
  if (!in) {
    MESSAGE("corpus file " << dir << "/" << file << " not found; using built-in lines");
    return builtin;
  }
  std::vector<std::string> lines;
  std::string line;
  for (int n = 0; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (n % 5 == 0) lines.push_back(line);
  }
  return lines;
}

RuleSet differential_rules() {
  RuleSet rules;
  rules.rules.push_back(with_key(
      make_rule(
          "ssh",
          {{"failed",
            R"(Failed password for (?:invalid user )?(?P<user>\S+) from (?P<ip>[0-9a-fA-F.:]+) port (?P<port>\d+))"},
           {"invalid", R"(Invalid user (?P<user>\S*) from (?P<ip>[0-9a-fA-F.:]+))"},
           {"authfail", R"(authentication failure;.* rhost=(?P<ip>\S+)(?: user=(?P<user>\S+))?)"}},
          R"(from 183\.62\.140\.253 )"),
      "{user}@{ip}"));
  rules.rules.push_back(make_rule("disconnect", {{"bye", R"(Received disconnect from (?P<ip>\S+): (?P<code>\d+):)"},
                                                 {"preauth", R"(\[preauth\]$)"}}));
  rules.rules.push_back(
      make_rule("anchored", {{"morning", "^Dec 10 0[6-9]:"}, {"ssh2", "ssh2$"}, {"breakin", "(?i)POSSIBLE break-in"}}));
  rules.rules.push_back(
      with_key(make_rule("bytes", {{"three", R"(sshd\[\d+\]: .{3})"}, {"word", R"(user (\w+))"}}), "{rule}"));
  rules.rules.push_back(
      with_message(make_rule("closed", {{"bye", R"(Received disconnect from (?P<ip>\S+): (?P<code>\d+))"},
                                        {"closed", R"(Connection closed by (?P<ip>\S+))"}}),
                   "{code} {ip}"));
  rules.rules.push_back(with_key(make_rule("level", {{"any", R"(^\[[^\]]+\] \[(?P<level>error|notice|warn)\])"},
                                                     {"error", R"(\[(?P<level>error)\])"}}),
                                 "{level}"));
  rules.rules.push_back(with_message(
      make_rule("jk",
                {{"state", R"(mod_jk child (?P<child>\S+) in error state (?P<state>\d+))"},
                 {"found", R"(jk2_init\(\) Found child (?P<child>\d+) in scoreboard slot (?P<slot>\d+)$)"}},
                R"(slot 1\d$)"),
      "{child} {state} {slot}"));
  rules.rules.push_back(make_rule(
      "dir",
      {{"forbidden", R"(Directory index forbidden by rule: (\S+))"}, {"sunday", "(?i)^\\[sun "}, {"cafe", "caf. ok"}}));
  return rules;
}

}  // namespace

TEST_CASE("matcher: the set gives what one RE2 at a time gives, on OpenSSH and Apache logs") {
  const RuleSet rules = differential_rules();
  Matcher matcher = make_matcher(rules);
  Matcher fallback = make_matcher(rules);
  swthrottle::match::MatcherTestPeer::force_fallback(fallback);
  Reference reference(rules);

  std::vector<std::string> lines = corpus_lines(
      "OpenSSH_2k.log",
      {"Dec 10 06:55:48 LabSZ sshd[24200]: Failed password for invalid user webmaster from 173.234.31.186 port 38926 "
       "ssh2",
       "Dec 10 09:32:20 LabSZ sshd[24680]: Failed password for root from 183.62.140.253 port 38926 ssh2",
       "Dec 10 07:02:47 LabSZ sshd[24203]: Connection closed by 212.47.254.145 [preauth]",
       "Dec 10 06:55:46 LabSZ sshd[24200]: Invalid user webmaster from 173.234.31.186",
       "Dec 10 07:08:28 LabSZ sshd[24208]: pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 "
       "tty=ssh ruser= rhost=173.234.31.186 user=root",
       "Dec 10 07:08:28 LabSZ sshd[24208]: pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 "
       "tty=ssh ruser= rhost=173.234.31.186 ",
       "Dec 10 10:14:13 LabSZ sshd[24833]: Received disconnect from 104.192.3.34: 11: Bye Bye [preauth]",
       "Dec 10 06:55:46 LabSZ sshd[24200]: reverse mapping checking getaddrinfo for ns.example.com "
       "[173.234.31.186] failed - POSSIBLE BREAK-IN ATTEMPT!"});
  const std::vector<std::string> apache = corpus_lines(
      "Apache_2k.log",
      {"[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok /etc/httpd/conf/workers2.properties",
       "[Sun Dec 04 04:47:44 2005] [error] mod_jk child workerEnv in error state 6",
       "[Sun Dec 04 04:51:08 2005] [notice] jk2_init() Found child 6725 in scoreboard slot 10",
       "[Sun Dec 04 04:51:08 2005] [notice] jk2_init() Found child 6726 in scoreboard slot 8",
       "[Mon Dec 05 07:57:02 2005] [error] [client 218.62.18.218] Directory index forbidden by rule: /var/www/html/"});
  lines.insert(lines.end(), apache.begin(), apache.end());
  REQUIRE(lines.size() >= 13);

  MatchResult out;
  MatchResult out_fallback;
  int compared = 0;
  for (const auto& original : lines) {
    REQUIRE(ascii_only(original));
    const std::size_t third = original.size() / 3;
    // (line, is valid UTF-8): as is; a stray byte in the middle; a Latin-1
    // letter; the same letter as UTF-8; a NUL.
    std::string stray = original;
    stray.insert(original.size() / 2, "\xff");
    std::string latin1 = original;
    std::string utf8 = original;
    std::string nul = original;
    if (third < original.size()) {
      latin1[third] = '\xf6';
      utf8.replace(third, 1, "\xc3\xb6");
      nul[third] = '\0';
    }
    const std::pair<std::string, bool> variants[] = {
        {original, true}, {stray, false}, {latin1, third >= original.size()}, {utf8, true}, {nul, true}};
    for (const auto& [line, valid] : variants) {
      CAPTURE(line);
      const std::string expected = reference.describe(line, valid);
      matcher.match(line, out);
      CHECK(describe(rules, matcher, out) == expected);
      fallback.match(line, out_fallback);
      CHECK(describe(rules, fallback, out_fallback) == expected);
      ++compared;
    }
  }
  // The comparison means something only if the rules found plenty.
  CHECK(compared == static_cast<int>(lines.size()) * 5);
  CHECK(reference.hits >= compared / 2);
  CHECK(reference.ignored > 0);
  CHECK(reference.latin1_only > 0);
}
