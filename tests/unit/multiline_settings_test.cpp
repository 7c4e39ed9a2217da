// `multiline` in [settings] and [[settings.input]] (config/rules.h
// MultilineSpec), and Generation::multiline_for, which picks an input's by
// its name.
#include <doctest/doctest.h>

#include <string>

#include "config/rules.h"
#include "pipeline/generation.h"

namespace {

using swthrottle::config::parse_rules;
using Kind = swthrottle::config::MultilineSpec::Kind;

const std::string kRule = R"(
[[rule]]
name      = "r"
kind      = "alert"
threshold = "1 per 1s"
  [[rule.event]]
  name  = "e"
  match = 'x'
)";

}  // namespace

TEST_CASE("multiline settings: presets, patterns, and the first matching input entry's, else [settings]'s") {
  auto rules = parse_rules(R"([settings]
multiline = "python"

[[settings.input]]
path = "*/java/*.log"
multiline = "java"

[[settings.input]]
path = "*/custom/*.log"
multiline = { start = '^\d{4}-' }

[[settings.input]]
path = "*/cont/*.log"
multiline = { continue = '^\s' }

[[settings.input]]
path = "*/plain/*.log"
multiline = "off"

[[settings.input]]
path = "*.log"
timezone = "UTC"
)" + kRule,
                           "rules.toml");
  REQUIRE_MESSAGE(rules.ok(), (rules.ok() ? "" : rules.error().str()));
  swthrottle::pipeline::Generation g;
  g.rules = std::make_unique<swthrottle::config::RuleSet>(std::move(*rules));
  CHECK(g.multiline_for("/srv/java/a.log").kind == Kind::Java);
  CHECK(g.multiline_for("/srv/custom/a.log").kind == Kind::Start);
  CHECK(g.multiline_for("/srv/custom/a.log").pattern == R"(^\d{4}-)");
  CHECK(g.multiline_for("/srv/cont/a.log").kind == Kind::Continue);
  CHECK(g.multiline_for("/srv/plain/a.log").kind == Kind::Off);
  // The first matching entry sets no multiline: [settings]'s, as for timestamp.
  CHECK(g.multiline_for("/srv/other/a.log").kind == Kind::Python);
  CHECK(g.multiline_for("-").kind == Kind::Python);
}

TEST_CASE("multiline settings: a table sets the caps, for a preset too") {
  auto rules = parse_rules(R"([settings]
multiline = { preset = "java", max_lines = 50, max_bytes = 4096 }

[[settings.input]]
path = "*.py.log"
multiline = { start = '^\d', max_lines = 2 }
)" + kRule,
                           "rules.toml");
  REQUIRE_MESSAGE(rules.ok(), (rules.ok() ? "" : rules.error().str()));
  const auto& s = rules->settings;
  CHECK(s.multiline.kind == Kind::Java);
  CHECK(s.multiline.max_lines == 50);
  CHECK(s.multiline.max_bytes == 4096);
  CHECK(s.multiline.text == R"({ preset = "java", max_lines = 50, max_bytes = 4096 })");
  REQUIRE(s.inputs.size() == 1);
  CHECK(s.inputs[0].multiline->kind == Kind::Start);
  CHECK(s.inputs[0].multiline->max_lines == 2);
  CHECK(s.inputs[0].multiline->max_bytes == swthrottle::config::MultilineSpec::kDefaultMaxBytes);
}

TEST_CASE("multiline settings: without it, no input groups lines") {
  auto rules = parse_rules("[settings]\n" + kRule, "rules.toml");
  REQUIRE(rules.ok());
  swthrottle::pipeline::Generation g;
  g.rules = std::make_unique<swthrottle::config::RuleSet>(std::move(*rules));
  CHECK(g.multiline_for("a.log").kind == Kind::Off);
}

TEST_CASE("multiline settings: errors point at the value, with did-you-mean") {
  struct Case {
    std::string toml;
    int line;
    int col;
    std::string what;
  };
  for (
      const Case& c : {
          Case{
              "[settings]\nmultiline = \"jaav\"\n", 2, 13,
              R"(multiline must be "java", "python", "off", { start = 'REGEX' }, { continue = 'REGEX' } or { preset = "java" } (a table may add max_lines and max_bytes), not "jaav" (did you mean "java"?))"},
          Case{
              "[settings]\nmultiline = 3\n", 2, 13,
              R"(multiline must be "java", "python", "off", { start = 'REGEX' }, { continue = 'REGEX' } or { preset = "java" } (a table may add max_lines and max_bytes), not 3)"},
          Case{"[settings]\nmultiline = { strat = 'x' }\n", 2, 15,
               R"(unknown key "strat" in multiline (did you mean "start"?))"},
          Case{"[settings]\nmultiline = { start = 'x', continue = 'y' }\n", 2, 13,
               "multiline needs exactly one of start = 'REGEX' (a line it finds starts an event), "
               "continue = 'REGEX' (a line it finds continues the event before it) or preset = \"java\" or "
               "\"python\""},
          Case{"[settings]\nmultiline = { preset = \"pyhton\" }\n", 2, 24,
               R"(preset must be "java", "python" or "off", not "pyhton" (did you mean "python"?))"},
          Case{"[settings]\nmultiline = { preset = \"java\", max_lines = 0 }\n", 2, 44,
               "max_lines must be an integer from 1 to 1000000, not 0"},
          Case{"[settings]\n[[settings.input]]\npath = \"x\"\nmultilin = \"java\"\n", 4, 1,
               R"(unknown key "multilin" in [[settings.input]] (did you mean "multiline"?))"},
      }) {
    INFO(c.toml);
    auto r = parse_rules(c.toml + kRule, "rules.toml");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().line == c.line);
    CHECK(r.error().col == c.col);
    CHECK(r.error().what == c.what);
  }
  // A pattern RE2 rejects: RE2's error, inside the pattern.
  auto bad = parse_rules("[settings]\nmultiline = { continue = '(' }\n" + kRule, "rules.toml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().line == 2);
  CHECK(bad.error().what.find("missing )") != std::string::npos);
}
