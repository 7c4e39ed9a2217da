// journald input (--input journal, DESIGN.md §1): journalctl -o json records read
// as JSON, byte-array fields read as their bytes, and the preset the command
// line makes of the rules' settings.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/load_generation.h"
#include "cli/options.h"
#include "config/rules.h"
#include "match/json_fields.h"
#include "match/matcher.h"
#include "support/temp_dir.h"

namespace {

namespace sw = swthrottle;
using sw::match::JsonFields;

// A journalctl -o json record, as journald writes it: every value a string,
// except MESSAGE when it is not UTF-8 ([...] of its bytes).
std::string record(std::string_view unit, std::string_view priority, std::string_view message_json,
                   std::string_view realtime = "1795255200000000") {
  return std::string(R"({"__CURSOR":"s=3f1c0e9b8a2d4c6f9e7d5b3a1c0e9b8a;i=1a2b;b=9d4e2f6a8c0b4d7e9f1a3c5e7b9d1f3a;)") +
         R"(m=1f2e3d;t=63a1b2c3d4e5f;x=8f7e6d5c4b3a2918","__REALTIME_TIMESTAMP":")" + std::string(realtime) +
         R"(","__MONOTONIC_TIMESTAMP":"86412345678","_BOOT_ID":"9d4e2f6a8c0b4d7e9f1a3c5e7b9d1f3a",)" +
         R"("PRIORITY":")" + std::string(priority) + R"(","_SYSTEMD_UNIT":")" + std::string(unit) +
         R"(","SYSLOG_IDENTIFIER":"nginx","_HOSTNAME":"web-1","MESSAGE":)" + std::string(message_json) + "}";
}

TEST_CASE("journal: an array of integers 0-255 reads as its bytes, only when asked") {
  const std::vector<std::string> paths{"MESSAGE", "PRIORITY"};
  JsonFields f(paths);
  struct Case {
    std::string line;
    std::optional<std::string> want;  // MESSAGE's text
  };
  const std::vector<Case> cases{
      {R"({"MESSAGE":[104,105]})", "hi"},
      {R"({"MESSAGE":[0,9,27,255]})", std::string("\0\t\x1b\xff", 4)},  // any byte, NUL too
      {R"({"MESSAGE":[ 104 , 105 ]})", "hi"},                           // blanks between
      {R"({"MESSAGE":[]})", ""},                                        // empty: ""
      {R"({"MESSAGE":[104,256]})", std::nullopt},                       // not a byte
      {R"({"MESSAGE":[104,-1]})", std::nullopt},
      {R"({"MESSAGE":[104,1.0]})", std::nullopt},
      {R"({"MESSAGE":[104,"i"]})", std::nullopt},
      {R"({"MESSAGE":[104,[105]]})", std::nullopt},
      {R"({"MESSAGE":[104,010]})", std::nullopt},           // not JSON's way to write a number
      {R"({"MESSAGE":"plain","MESSAGE":[104]})", "plain"},  // duplicate keys: the first still wins
      {R"({"MESSAGE":[104],"MESSAGE":"later"})", "h"},
  };
  f.set_byte_arrays(true);
  for (const Case& c : cases) {
    INFO(c.line);
    REQUIRE(f.read(c.line) == JsonFields::Read::Json);
    CHECK(f.text(0) == c.want);
  }
  // A bad array element after a good one does not hide the next field.
  REQUIRE(f.read(R"({"MESSAGE":[104,"x",105],"PRIORITY":"3"})") == JsonFields::Read::Json);
  CHECK(f.text(0) == std::nullopt);
  CHECK(f.text(1) == "3");
  // Off (the default, and every input but journal): an array has no text.
  f.set_byte_arrays(false);
  REQUIRE(f.read(R"({"MESSAGE":[104,105]})") == JsonFields::Read::Json);
  CHECK(f.text(0) == std::nullopt);
}

TEST_CASE("journal: the matcher reads both MESSAGE forms, into fields and templates") {
  auto rules = sw::config::parse_rules(R"toml(
[[rule]]
name = "nginx"
kind = "alert"
threshold = "1/1m"
key = "{._SYSTEMD_UNIT}"
message = "{._HOSTNAME} {.SYSLOG_IDENTIFIER}: {.MESSAGE} ({what})"
[[rule.event]]
name = "err"
fields = { _SYSTEMD_UNIT = "nginx.service", PRIORITY = "3", MESSAGE = { match = '^(?P<what>\w+) failed' } }
)toml",
                                       "rules.toml");
  REQUIRE(rules.ok());
  auto m = sw::match::Matcher::make(*rules, false, true);
  REQUIRE(m.ok());
  m->set_format(sw::config::InputFormat::Json);
  m->set_byte_arrays(true);
  sw::match::MatchResult out;
  auto captures = [&](const std::string& line) {
    out.clear();
    m->match(line, out);
    std::string s;
    for (const auto& hit : out.hits)
      for (std::size_t c = 0; c < rules->rules[hit.rule].capture_names.size(); ++c)
        s += (c ? "|" : "") + std::string(out.captures[hit.first_capture + c]);
    return s;
  };
  // Capture order: what, then the "{.path}"s in template order.
  CHECK(captures(record("nginx.service", "3", R"("upstream failed")")) ==
        "upstream|nginx.service|web-1|nginx|upstream failed");
  // "upstream failed \xff": not UTF-8, so journald sends the bytes.
  CHECK(captures(record("nginx.service", "3", "[117,112,115,116,114,101,97,109,32,102,97,105,108,101,100,32,255]")) ==
        "upstream|nginx.service|web-1|nginx|upstream failed \xff");
  CHECK(captures(record("nginx.service", "4", R"("upstream failed")")).empty());  // PRIORITY differs
  CHECK(captures(record("sshd.service", "3", R"("upstream failed")")).empty());   // unit differs
  CHECK(captures(record("nginx.service", "3", "[104,105]")).empty());             // "hi": no match
  CHECK(m->take_invalid_json() == 0);
  // Without byte arrays (not journal input) the array form never matches.
  m->set_byte_arrays(false);
  CHECK(captures(record("nginx.service", "3", "[117,112,32,102,97,105,108,101,100]")).empty());
}

// `text` as journald's byte-array form: [70,97,...].
std::string bytes_json(std::string_view text) {
  std::string s = "[";
  for (char c : text) s += (s.size() > 1 ? "," : "") + std::to_string(static_cast<unsigned char>(c));
  return s + "]";
}

TEST_CASE("journal: match and ignore look at MESSAGE, in both forms, prefilter on or off") {
  auto rules = sw::config::parse_rules(R"toml(
[[rule]]
name = "ssh"
kind = "alert"
threshold = "1/1m"
key = "{ip}"
ignore = 'from 10\.'
[[rule.event]]
name = "fail"
match = 'Failed password for \S+ from (?P<ip>[0-9.]+)'
[[rule.event]]
name = "disk"
match = 'disk full'
fields = { _SYSTEMD_UNIT = "nginx.service" }
)toml",
                                       "rules.toml");
  REQUIRE(rules.ok());
  sw::config::use_journal(*rules);
  CHECK(rules->settings.journal);
  CHECK(rules->rules[0].ignore_field == "MESSAGE");
  CHECK(rules->rules[0].events[0].match.empty());
  REQUIRE(rules->rules[0].events[0].fields.size() == 1);
  CHECK(rules->rules[0].events[0].fields[0].path == "MESSAGE");
  CHECK(rules->rules[0].events[1].stand_in == R"(nginx\.service|\\u00|\[)");

  const std::string fail = "Failed password for root from 1.2.3.4 port 22";
  const std::vector<std::string> lines{
      record("sshd.service", "5", "\"" + fail + "\""),                                         // 0: fail 1.2.3.4
      record("sshd.service", "5", bytes_json(fail + " \xff")),                                 // 1: the same, as bytes
      record("sshd.service", "5", R"("\u0046ailed password for root from 1.2.3.4")"),          // 2: an escape
      record("sshd.service", "5", R"("Failed password for root from 10.0.0.1")"),              // 3: ignored
      record("sshd.service", "5", bytes_json("Failed password for root from 10.0.0.1 \xff")),  // 4: ignored
      // 5: the words are in the line, not in MESSAGE: no match
      record("Failed password for root from 1.2.3.4", "5", R"("session opened")"),
      record("sshd.service", "5", R"("ok")") + " ignore from 10.",                           // 6: not JSON
      record("nginx.service", "3", R"("disk full on /")"),                                   // 7: disk
      record("nginx.service", "3", bytes_json("/: disk full")),                              // 8: disk
      record("redis.service", "3", R"("disk full on /")"),                                   // 9: another unit
      record("sshd.service", "5", R"("Failed password for root from 5.6.7.8, disk full")"),  // 10: fail
  };
  std::string text;
  std::vector<sw::match::LineSpan> spans;
  for (const std::string& l : lines) {
    spans.emplace_back(text.size(), l.size());
    text += l + "\n";
  }
  std::vector<std::string> want{"fail:1.2.3.4", "fail:1.2.3.4", "fail:1.2.3.4", "", "", "", "", "disk:", "disk:", "",
                                "fail:5.6.7.8"};
  for (bool prefilter : {false, true}) {
    INFO("prefilter " << prefilter);
    auto m = sw::match::Matcher::make(*rules, true, prefilter);
    REQUIRE(m.ok());
    m->set_format(sw::config::InputFormat::Json);
    m->set_byte_arrays(true);
    std::vector<sw::match::MatchResult> out(lines.size());
    m->match_batch(text, spans, out);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      INFO(i << ": " << lines[i]);
      std::string got;
      for (const auto& hit : out[i].hits) {
        for (uint32_t e = 0; e < 2; ++e)
          if (hit.events >> e & 1) got += rules->rules[hit.rule].events[e].name + ":";
        got += std::string(out[i].captures[hit.first_capture]);
      }
      CHECK(got == want[i]);
      sw::match::MatchResult one;
      m->match(lines[i], one);
      CHECK(one.hits.size() == out[i].hits.size());
    }
  }
}

TEST_CASE("journal: --input on the command line") {
  auto parse = [](std::vector<const char*> argv) {
    argv.insert(argv.begin(), "swthrottle");
    return sw::cli::parse_options(static_cast<int>(argv.size()), argv.data());
  };
  auto p = parse({"--input", "journal", "-r", "r.toml"});
  REQUIRE(p.options);
  CHECK(p.options->input == "journal");
  CHECK(parse({"-r", "r.toml"}).options->input.empty());
  auto bad = parse({"--input", "journald", "-r", "r.toml"});
  CHECK_FALSE(bad.options);
  CHECK(bad.exit_status == 2);
  CHECK(bad.text.find("--input") != std::string::npos);
  auto typo = parse({"--inptu", "journal", "-r", "r.toml"});
  CHECK(typo.text.find("did you mean --input?") != std::string::npos);
  CHECK(parse({"--help"}).text.find("--input") != std::string::npos);
}

TEST_CASE("journal: the preset overrides format and timestamp everywhere") {
  sw::test::TempDir dir;
  const std::string rules = dir.write("rules.toml", R"(
[settings]
time = "log"
format = "text"
timestamp = "rfc3339"
[[settings.input]]
path = "a.log"
format = "text"
timestamp = { field = "ts" }
[[rule]]
name = "r"
kind = "alert"
threshold = "1/1m"
[[rule.event]]
name = "e"
fields = { PRIORITY = "3" }
)");
  sw::cli::Options o;
  o.rule_files = {rules};
  {
    auto g = sw::app::load_generation(o);
    REQUIRE(g.ok());
    CHECK((*g)->format_for("a.log") == sw::config::InputFormat::Text);
    CHECK_FALSE((*g)->journal);
  }
  o.input = "journal";
  auto g = sw::app::load_generation(o);
  REQUIRE(g.ok());
  const auto& gen = **g;
  CHECK(gen.journal);
  for (const std::string input : {"a.log", "-"}) {
    INFO(input);
    CHECK(gen.format_for(input) == sw::config::InputFormat::Json);
    CHECK(gen.timestamp_for(input).field == "__REALTIME_TIMESTAMP");
    // 2026-11-21T10:00:00.123456Z, in µs as a string.
    const auto* lt = gen.logtime_for(input);
    REQUIRE(lt != nullptr);
    CHECK(lt->parse(record("x", "3", R"("m")", "1795255200123456"), 1795255300000) == 1795255200123);
  }
  o.input = "auto";
  auto a = sw::app::load_generation(o);
  REQUIRE(a.ok());
  CHECK((*a)->format_for("a.log") == sw::config::InputFormat::Auto);
  CHECK((*a)->timestamp_for("a.log").field == "ts");  // only journal changes the timestamp
  CHECK_FALSE((*a)->journal);
}

}  // namespace
