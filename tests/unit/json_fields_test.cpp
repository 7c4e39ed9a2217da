// JSON lines (DESIGN.md §1 `fields`, `format`): what JsonFields reads of a line,
// and what the Matcher makes of events with fields, with and without the
// literal prefilter.
#include "match/json_fields.h"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/rules.h"
#include "match/logtime.h"
#include "match/matcher.h"
#include "match/prefilter.h"

namespace {

using swthrottle::config::InputFormat;
using swthrottle::config::parse_rules;
using swthrottle::config::RuleSet;
using swthrottle::match::JsonFields;
using swthrottle::match::LineSpan;
using swthrottle::match::Matcher;
using swthrottle::match::MatchResult;

// "path=text path=text", missing paths left out; "text" / "invalid" for lines
// that are not JSON objects.
std::string read_all(JsonFields& f, const std::vector<std::string>& paths, std::string_view line) {
  const JsonFields::Read r = f.read(line);
  if (r == JsonFields::Read::Text) return "text";
  if (r == JsonFields::Read::Invalid) return "invalid";
  std::string out = r == JsonFields::Read::Repaired ? "(repaired)" : "";
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (const auto t = f.text(i)) out += (out.empty() ? "" : " ") + paths[i] + "=" + std::string(*t);
  }
  return out;
}

TEST_CASE("json fields: what a line gives each named path") {
  const std::vector<std::string> paths{"a", "b.c", "n"};
  JsonFields f(paths);
  const std::string long_value(100000, 'x');
  struct Case {
    std::string line;
    std::string want;
  };
  const std::vector<Case> cases{
      {R"({"a":"x"})", "a=x"},
      {R"({"z":1})", ""},                                             // missing
      {R"({"a":null})", "a=null"},                                    // null by its JSON text
      {R"({"a":500})", "a=500"},                                      // number by its JSON text
      {R"({"a":-1.5e3 , "n":0})", "a=-1.5e3 n=0"},                    // as written, blanks after it dropped
      {R"({"a":true,"n":false})", "a=true n=false"},                  // booleans
      {R"({"b":{"c":"deep","d":1}})", "b.c=deep"},                    // nested by dotted path
      {R"({"b":{"d":{"c":1}}})", ""},                                 // c, but not at b.c
      {R"({"b.c":"dotted key"})", ""},                                // a key with a dot is not a path
      {R"({"a":[1,2],"b":{"c":{"x":1}}})", ""},                       // arrays and objects have no text
      {R"({"a":"caf\u00e9 \"q\" \ud83d\ude00"})", "a=café \"q\" 😀"},  // escapes decoded
      {R"({"\u0061":"escaped key"})", "a=escaped key"},               // keys are unescaped too
      {R"({"a":"first","a":"second"})", "a=first"},                   // duplicate keys: the first wins
      {R"({"b":{"c":1},"b":{"c":2}})", "b.c=1"},                      // also below the top level
      {R"( {"a":1} )", "a=1"},                                        // blanks around
      {R"({"a":"x","q":[)", "invalid"},                               // cut short
      {R"({"a":1} {"a":2})", "invalid"},                              // more than one object
      {R"({"a":tru})", "invalid"},                                    // a bad value on a named path
      {R"({"a":01})", "invalid"},
      {"{\"a\":\"\xff\"}", "(repaired) a=\xff"},  // not UTF-8: read leniently (below)
      {R"([1,2])", "text"},                       // not an object: not tried
      {"plain text a=1", "text"},
      {"", "text"},
      {R"({"a":")" + long_value + R"("})", "a=" + long_value},
  };
  for (const Case& c : cases) {
    INFO(c.line.substr(0, 80));
    CHECK(read_all(f, paths, c.line) == c.want);
  }
  // A value the rules do not name is skipped unread, so its errors go unseen.
  CHECK(read_all(f, paths, R"({"z":tru,"a":1})") == "a=1");
}

// Issue 32: one bad byte in any string made the whole line "invalid JSON",
// so that no `fields` condition held on it: a client controlling one field
// (a user name, a user agent) escaped every field rule. Each form the probe
// found is read leniently now; only a broken structure is still invalid.
TEST_CASE("json fields: a bad byte or escape in a string is read leniently, the rest decoded") {
  const std::vector<std::string> paths{"level", "svc", "a.b.c"};
  JsonFields f(paths);
  struct Case {
    std::string line;
    std::string want;
  };
  const std::string tail = R"(,"a":{"b":{"c":"x"}}})";
  const std::vector<Case> cases{
      // The probe's line: an invalid byte.
      {"{\"level\":\"error\",\"svc\":\"caf\xe9\"" + tail, "(repaired) level=error svc=caf\xe9 a.b.c=x"},
      // An overlong '/', an encoded surrogate: kept as the bytes they are.
      {"{\"level\":\"error\",\"svc\":\"x\xc0\xafy\"" + tail, "(repaired) level=error svc=x\xc0\xafy a.b.c=x"},
      {"{\"level\":\"error\",\"svc\":\"x\xed\xa0\x80y\"" + tail, "(repaired) level=error svc=x\xed\xa0\x80y a.b.c=x"},
      // A lone surrogate escape has no UTF-8 form: U+FFFD; a pair is decoded.
      {R"({"level":"error","svc":"x\ud800y")" + tail, "(repaired) level=error svc=x\xef\xbf\xbdy a.b.c=x"},
      {R"({"level":"error","svc":"\udc00\ud83d\ude00")" + tail, "(repaired) level=error svc=\xef\xbf\xbd😀 a.b.c=x"},
      {R"({"level":"error","svc":"\ud800\u0041")" + tail,
       "(repaired) level=error svc=\xef\xbf\xbd"
       "A a.b.c=x"},
      // An escape JSON does not have stays as written.
      {R"({"level":"error","svc":"x\uZZZZ")" + tail, "(repaired) level=error svc=x\\uZZZZ a.b.c=x"},
      {R"({"level":"error","svc":"a\qb\u12")" + tail, "(repaired) level=error svc=a\\qb\\u12 a.b.c=x"},
      // A raw control byte (a colour code).
      {"{\"level\":\"error\",\"svc\":\"\x1b[31mred\x1b[0m\"" + tail,
       "(repaired) level=error svc=\x1b[31mred\x1b[0m a.b.c=x"},
      // In a field nobody names, and in a key: the named fields still read.
      {"{\"user\":\"j\xf6rg\",\"level\":\"warn\"}", "(repaired) level=warn"},
      {"{\"l\xe9vel\":\"x\",\"level\":\"warn\"}", "(repaired) level=warn"},
      {"{\"lev\\u0065l\":\"a\\q\",\"svc\":\"\xff\"}", "(repaired) level=a\\q svc=\xff"},
      // Duplicate keys: the first still wins.
      {"{\"svc\":\"one\xff\",\"svc\":\"two\xfe\"}", "(repaired) svc=one\xff"},
      // A broken structure stays invalid, bad bytes or not.
      {"{\"level\":\"error\",\"svc\":\"caf\xe9\"", "invalid"},
      {"{\"level\":\"error\",\"svc\":caf\xe9}", "invalid"},
      {"{\"level\":\"error\",\"svc\":\"unterminated\\", "invalid"},
      {"{\"level\":\"error\"\xff}", "invalid"},
      // A lone surrogate in a value nobody reads goes unseen, as any bad value there.
      {R"({"x":"\ud800","level":"e"})", "level=e"},
  };
  for (const Case& c : cases) {
    INFO(c.line);
    CHECK(read_all(f, paths, c.line) == c.want);
  }
  // The lenient read leaves no trace on the next line.
  CHECK(read_all(f, paths, R"({"svc":"ok"})") == "svc=ok");
}

TEST_CASE("json fields: a named key that is itself bad is read leniently, as its values are") {
  // fuzz_json_strings found it: the key's place in the line was asked of
  // simdjson after unescaped_key() had consumed it (an assertion in a build
  // with them, no lenient key in one without).
  const std::vector<std::string> paths{"caf\xe9", "\xef\xbf\xbd-id", "a.b\\q"};
  JsonFields f(paths);
  CHECK(read_all(f, paths, "{\"caf\xe9\":\"1\",\"\\ud800-id\":\"2\",\"a\":{\"b\\q\":\"3\"}}") ==
        "(repaired) caf\xe9=1 \xef\xbf\xbd-id=2 a.b\\q=3");
}

RuleSet rules_of(const std::string& toml) {
  auto r = parse_rules(toml, "rules.toml");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().str()));
  return std::move(*r);
}

// "rule{events}[captures]" per hit, the hits joined by " ".
std::string describe(const RuleSet& rules, const MatchResult& m) {
  std::string s;
  for (const auto& hit : m.hits) {
    const auto& rule = rules.rules.at(hit.rule);
    s += (s.empty() ? "" : " ") + rule.name + "{";
    bool first = true;
    for (std::size_t e = 0; e < rule.events.size(); ++e) {
      if ((hit.events >> e & 1) == 0) continue;
      s += (first ? "" : ",") + rule.events[e].name;
      first = false;
    }
    s += "}";
    if (!rule.capture_names.empty() && hit.first_capture < m.captures.size()) {
      s += "[";
      for (std::size_t c = 0; c < rule.capture_names.size(); ++c) {
        s += (c ? "," : "") + rule.capture_names[c] + "=" + std::string(m.captures[hit.first_capture + c]);
      }
      s += "]";
    }
  }
  return s;
}

// Matches `lines` one by one, and as one batch with and without the
// prefilter; all three must agree. Returns the one-by-one results.
std::vector<std::string> match_all(const RuleSet& rules, const std::vector<std::string>& lines,
                                   InputFormat format = InputFormat::Auto, uint64_t* invalid = nullptr) {
  std::string text;
  std::vector<LineSpan> spans;
  for (const auto& l : lines) {
    spans.emplace_back(text.size(), l.size());
    text += l + "\n";
  }
  std::vector<std::string> out;
  for (bool prefilter : {false, true}) {
    auto m = Matcher::make(rules, false, prefilter);
    REQUIRE(m.ok());
    m->set_format(format);
    std::vector<MatchResult> batch(lines.size());
    m->match_batch(text, spans, batch);
    MatchResult one;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      m->match(lines[i], one);
      INFO(lines[i]);
      CHECK(describe(rules, one) == describe(rules, batch[i]));
      if (!prefilter) out.push_back(describe(rules, one));
    }
    // Each line was read twice (batch, then one by one).
    const uint64_t bad = m->take_invalid_json();
    CHECK(bad % 2 == 0);
    if (invalid != nullptr) *invalid = bad / 2;
    CHECK(m->take_invalid_json() == 0);
  }
  return out;
}

const char* const kRules = R"(
[[rule]]
name = "eq"
kind = "alert"
threshold = "1/1m"
[[rule.event]]
name = "error"
fields = { level = "error" }

[[rule]]
name = "two"
kind = "alert"
threshold = "1/1m"
key = "{svc}/{code}/{.service.name}/{.missing}"
[[rule.event]]
name = "pay5xx"
fields = { "service.name" = { match = '^(?P<svc>pay)' }, status = { match = '^(?P<code>5\d\d)$' } }
[[rule.event]]
name = "teapot"
fields = { status = "418" }

[[rule]]
name = "both"
kind = "alert"
threshold = "1/1m"
message = "{who} {.msg}"
[[rule.event]]
name = "login"
match = 'login (?P<who>\w+)'
fields = { ok = "false" }
)";

TEST_CASE("json fields: events on fields, all of which must hold") {
  const RuleSet rules = rules_of(kRules);
  struct Case {
    std::string line;
    std::string want;
  };
  const std::vector<Case> cases{
      {R"({"level":"error"})", "eq{error}"},
      {R"({"msg":"x","level":"error"})", "eq{error}"},  // any key order
      {R"({"level":"Error"})", ""},                     // equality is exact
      {R"({"level":"errors"})", ""},                    // and whole
      {R"({"level":"err\u006fr"})", "eq{error}"},       // compared unescaped
      {R"({"level":["error"]})", ""},                   // an array never matches
      {R"({"level":null})", ""},
      {"level=error", ""},          // a text line: fields do not hold
      {R"({"level":"error")", ""},  // invalid JSON: text
      {R"({"service":{"name":"payments"},"status":503})",
       "two{pay5xx}[svc=pay,code=503,.service.name=payments,.missing=]"},
      {R"({"service":{"name":"payments"},"status":"503"})",
       "two{pay5xx}[svc=pay,code=503,.service.name=payments,.missing=]"},
      {R"({"service":{"name":"payments"},"status":200})", ""},  // one field fails: the event does not hold
      {R"({"service":{"name":"search"},"status":503})", ""},
      {R"({"service":"payments","status":503})", ""},  // not nested: b.c is missing
      {R"({"status":418,"service":{"name":"x"}})", "two{teapot}[svc=,code=,.service.name=x,.missing=]"},
      {R"({"status":418.0})", ""},  // numbers compare by their JSON text
      {R"({"service":{"name":"pay"},"status":503,"level":"error"})",
       "eq{error} two{pay5xx}[svc=pay,code=503,.service.name=pay,.missing=]"},
      {R"({"ok":false,"msg":"login bob \"x\""})", "both{login}[who=bob,.msg=login bob \"x\"]"},
      {R"({"ok":true,"msg":"login bob"})", ""},    // match holds, fields do not
      {R"({"ok":false,"msg":"logout bob"})", ""},  // fields hold, match does not
      {"login bob ok=false", ""},
  };
  const std::vector<std::string> lines = [&] {
    std::vector<std::string> v;
    for (const auto& c : cases) v.push_back(c.line);
    return v;
  }();
  uint64_t invalid = 0;
  const auto got = match_all(rules, lines, InputFormat::Auto, &invalid);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO(cases[i].line);
    CHECK(got[i] == cases[i].want);
  }
  CHECK(invalid == 1);  // {"level":"error"  (auto: only lines starting with '{' are tried)
}

TEST_CASE("json fields: field rules hold on a line with a bad byte, which is matched as UTF-8 and as Latin-1") {
  const RuleSet rules = rules_of(R"(
[[rule]]
name = "err"
kind = "alert"
threshold = "1/1m"
key = "{.svc}"
[[rule.event]]
name = "error"
fields = { level = "error" }

[[rule]]
name = "cafe"
kind = "alert"
threshold = "1/1m"
[[rule.event]]
name = "cafe"
fields = { svc = { match = '^caf.$' } }

[[rule]]
name = "agent"
kind = "alert"
threshold = "1/1m"
[[rule.event]]
name = "bot"
fields = { ua = { match = 'bot\S*\s' } }
)");
  const std::vector<std::string> lines{
      "{\"level\":\"error\",\"svc\":\"caf\xe9\",\"a\":{\"b\":{\"c\":\"x\"}}}",  // Latin-1 é: '.' reads it
      "{\"level\":\"error\",\"svc\":\"caf\xc3\xa9\"}",                          // UTF-8 é, valid: not repaired
      "{\"ua\":\"evilbot\xff\x1b \",\"level\":\"info\"}",                       // \S reads a stray byte as Latin-1
      "{\"level\":\"error\",\"svc\":\"x\\ud800\"}",
      "{\"level\":\"error\",\"svc\":\"caf\xe9\"",  // broken: text, fields do not hold
  };
  uint64_t invalid = 0;
  const auto got = match_all(rules, lines, InputFormat::Auto, &invalid);
  CHECK(got == std::vector<std::string>{"err{error}[.svc=caf\xe9] cafe{cafe}", "err{error}[.svc=café] cafe{cafe}",
                                        "agent{bot}", "err{error}[.svc=x\xef\xbf\xbd]", ""});
  CHECK(invalid == 1);
  // Counted apart from invalid lines (each line was read twice, batch and one by one).
  auto m = Matcher::make(rules, false, true);
  REQUIRE(m.ok());
  MatchResult one;
  for (const std::string& l : lines) m->match(l, one);
  CHECK(m->take_repaired_json() == 3);
  CHECK(m->take_invalid_json() == 1);
  CHECK(m->take_repaired_json() == 0);
}

TEST_CASE("json fields: format per input") {
  const RuleSet rules = rules_of(kRules);
  const std::vector<std::string> lines{R"({"level":"error"})", "level error", R"({"level":"error")"};
  uint64_t invalid = 0;
  CHECK(match_all(rules, lines, InputFormat::Auto, &invalid) == std::vector<std::string>{"eq{error}", "", ""});
  CHECK(invalid == 1);
  // json: a line that does not start with '{' is invalid too; all are still matched as text.
  CHECK(match_all(rules, lines, InputFormat::Json, &invalid) == std::vector<std::string>{"eq{error}", "", ""});
  CHECK(invalid == 2);
  // text: no line is read as JSON, so fields never hold.
  CHECK(match_all(rules, lines, InputFormat::Text, &invalid) == std::vector<std::string>{"", "", ""});
  CHECK(invalid == 0);
}

TEST_CASE("json fields: the prefilter stays on where a field has a verbatim literal") {
  const RuleSet lit = rules_of(R"(
[[rule]]
name = "r"
kind = "alert"
threshold = "1/1m"
[[rule.event]]
name = "e"
fields = { level = "error", msg = { match = 'x' } }
)");
  CHECK(lit.rules[0].events[0].stand_in == R"(error|\\u00)");
  CHECK(swthrottle::match::Prefilter::make(lit).active());
  // The stand-in lets lines with the literal or a "\u00" through (JSON can
  // spell an ASCII letter no other way); the escaped spelling must match.
  CHECK(match_all(lit, {R"({"level":"err\u006fr","msg":"x"})", R"({"level":"error","msg":"x"})",
                        R"({"level":"warn","msg":"x"})"}) == std::vector<std::string>{"r{e}", "r{e}", ""});

  // Only patterns, or literals JSON would escape: the empty stand-in, which
  // matches every line; the prefilter stays on all the same, with the
  // escaped spellings of the field's literals ('a"b' is "a\"b" in the line)
  // and the key of the field whose value gives none ("u").
  const RuleSet none = rules_of(R"(
[[rule]]
name = "r"
kind = "alert"
threshold = "1/1m"
[[rule.event]]
name = "e"
fields = { msg = { match = 'a"b' }, q = 'say "hi"', u = "a/b" }
)");
  CHECK(none.rules[0].events[0].stand_in.empty());
  CHECK(swthrottle::match::Prefilter::make(none).active());

  // A field pattern without metacharacters is a literal too (the longest wins).
  const RuleSet plain = rules_of(R"(
[[rule]]
name = "r"
kind = "alert"
threshold = "1/1m"
[[rule.event]]
name = "e"
fields = { level = "ERROR", msg = { match = 'Connection refused' }, x = { match = 'Connection.refused!' } }
)");
  CHECK(plain.rules[0].events[0].stand_in == R"(Connection\ refused|\\u00)");
  CHECK(swthrottle::match::Prefilter::make(plain).active());
  CHECK(match_all(plain, {R"({"level":"ERROR","msg":"a Connection refused b","x":"Connection refused!"})",
                          R"({"level":"ERROR","msg":"a Connection\u0020refused","x":"Connection refused!"})",
                          R"({"level":"ERROR","msg":"a Connection accepted","x":"Connection refused!"})"}) ==
        std::vector<std::string>{"r{e}", "r{e}", ""});
  CHECK(match_all(none, {R"({"msg":"a\"b","q":"say \"hi\"","u":"a\/b"})",
                         R"({"msg":"ab","q":"say \"hi\"","u":"a/b"})"}) == std::vector<std::string>{"r{e}", ""});
}

TEST_CASE("json fields: rules file errors") {
  const std::string head =
      "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"1/1s\"\n[[rule.event]]\nname = \"e\"\n";
  struct Case {
    std::string toml;
    std::string what;
  };
  const std::vector<Case> cases{
      {head + "fields = 5\n", R"(fields must be a table such as { level = "error" }, not 5)"},
      {head + "fields = {}\n", R"([[rule.event]] "e" of [[rule]] "r": fields is empty; name at least one field)"},
      {head + "fields = { status = 500 }\n",
       R"(field "status" must be a string (the field's text, e.g. "500" or "true") or { match = 'RE2' }, not 500)"},
      {head + "fields = { a = { mach = 'x' } }\n",
       R"(unknown key "mach" in field "a" of [[rule.event]] "e" of [[rule]] "r" (did you mean "match"?))"},
      {head + "fields = { a = { match = 5 } }\n", "match must be a string (an RE2 pattern), not 5"},
      {head + "fields = { \"a..b\" = 'x' }\n", R"(field path "a..b" must be names joined by "." ("service.name"))"},
      {head + "match = '(?P<x>a)'\nfields = { a = { match = '(?P<x>b)' } }\n",
       R"(capture group name "x" is used twice in one event)"},
  };
  for (const Case& c : cases) {
    INFO(c.toml);
    auto r = parse_rules(c.toml, "rules.toml");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().what == c.what);
  }
}

TEST_CASE("json fields: a rule's identity holds its fields") {
  auto fp = [](const std::string& level) {
    return rules_of(
               "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"1/1s\"\n[[rule.event]]\nname = \"e\"\n"
               "fields = { level = \"" +
               level + "\" }\n")
        .rules[0]
        .fingerprint;
  };
  CHECK(fp("error") == fp("error"));
  CHECK(fp("error") != fp("warn"));
}

}  // namespace

namespace {

using swthrottle::config::TimestampSpec;
using swthrottle::config::TimezoneSpec;
using swthrottle::match::LogTime;

TEST_CASE("json fields: the time from a named field") {
  TimestampSpec spec;
  spec.field = "meta.ts";
  auto lt = LogTime::make(spec, TimezoneSpec{false, 0, "UTC"}, 0);
  REQUIRE(lt.ok());
  const int64_t base = 1795255200000;  // 2026-11-21T10:00:00Z
  struct Case {
    std::string line;
    std::optional<int64_t> want;
  };
  const std::vector<Case> cases{
      {R"({"meta":{"ts":"2026-11-21T10:00:01.250Z"}})", base + 1250},
      {R"({"meta":{"ts":"2026-11-21T12:00:01+02:00"}})", base + 1000},
      {R"({"meta":{"ts":1795255202}})", base + 2000},                // s
      {R"({"meta":{"ts":1795255202.5}})", base + 2500},              // s with a fraction
      {R"({"meta":{"ts":"1795255203500"}})", base + 3500},           // ms, as a string
      {R"({"meta":{"ts":1795255204123456}})", base + 4123},          // µs
      {R"({"meta":{"ts":1795255205123456789}})", base + 5123},       // ns
      {R"({"ts":"2026-11-21T10:00:09Z","meta":{}})", std::nullopt},  // another field's stamp does not count
      {R"({"meta":{"ts":"soon"}})", std::nullopt},
      {R"({"meta":{"ts":17952552}})", std::nullopt},  // 8 digits: no epoch form
      {R"({"meta":{"ts":1.7e9}})", std::nullopt},
      {R"({"meta":{"ts":null}})", std::nullopt},
      {"2026-11-21T10:00:01Z plain text", std::nullopt},           // not JSON: no field
      {R"({"meta":{"ts":"2026-11-21T10:00:01Z"})", std::nullopt},  // invalid JSON
  };
  // A copy (as each matching thread takes one) reads the same.
  const LogTime copy = *lt;
  for (const Case& c : cases) {
    INFO(c.line);
    CHECK(lt->parse(c.line, base) == c.want);
    CHECK(copy.parse(c.line, base) == c.want);
  }
}

TEST_CASE("json fields: timestamp = { field } in [settings] and [[settings.input]]") {
  const RuleSet set = rules_of(R"([settings]
time = "log"
timestamp = { field = "ts" }
format = "json"
[[settings.input]]
path = "*.json"
timestamp = { field = "@timestamp" }
format = "text"
[[rule]]
name = "r"
kind = "alert"
threshold = "1/1s"
[[rule.event]]
name = "e"
match = 'x'
)");
  CHECK(set.settings.timestamp.field == "ts");
  CHECK(set.settings.timestamp.text == R"({ field = "ts" })");
  CHECK(set.settings.format == InputFormat::Json);
  REQUIRE(set.settings.inputs.size() == 1);
  CHECK(set.settings.inputs[0].timestamp->field == "@timestamp");
  CHECK(set.settings.inputs[0].format == InputFormat::Text);

  auto bad = parse_rules("[settings]\ntimestamp = { field = \"ts\", match = '(x)' }\n", "rules.toml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().what == "settings.timestamp: field goes alone (the field's text is RFC 3339 or an epoch number)");
  auto fmt = parse_rules("[settings]\nformat = \"jsn\"\n", "rules.toml");
  REQUIRE_FALSE(fmt.ok());
  CHECK(fmt.error().what ==
        R"(format must be "auto", "text", "json", "cri" or "docker", not "jsn" (did you mean "json"?))");
}

}  // namespace
