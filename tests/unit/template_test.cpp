#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/template.h"

using swthrottle::config::Template;

namespace {

// Field ids are the index in this list.
const std::vector<std::string> kNames = {"rule", "event", "count", "ip", "user"};

int resolve(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<int>(i);
  }
  return -1;
}

Template must_parse(std::string_view text) {
  auto t = Template::parse(text, resolve, kNames);
  INFO("template: ", text);
  INFO("error: ", t.ok() ? std::string() : t.error().what);
  REQUIRE(t.ok());
  return *t;
}

std::string render(std::string_view text, const std::vector<std::string_view>& values) {
  std::string out;
  must_parse(text).render(out, values);
  return out;
}

// rule, event, count, ip, user
const std::vector<std::string_view> kValues = {"ssh", "failed", "5", "1.2.3.4", "administrator"};

}  // namespace

TEST_CASE("template: render") {
  struct Case {
    std::string text;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"", ""},
      {"plain text", "plain text"},
      {"{count} failed logins from {ip}", "5 failed logins from 1.2.3.4"},
      {"{rule}/{event}", "ssh/failed"},
      {"{ip}{ip}", "1.2.3.41.2.3.4"},
      {"{{literal}} {ip}", "{literal} 1.2.3.4"},
      {"}}{{", "}{"},
      {"{{{ip}}}", "{1.2.3.4}"},
      {"{ip:>15}", "        1.2.3.4"},
      {"{ip:<10}|", "1.2.3.4   |"},
      {"{ip:^9}", " 1.2.3.4 "},
      {"{ip:*^11}", "**1.2.3.4**"},
      {"{ip:7}", "1.2.3.4"},        // a width shorter than the value does not cut
      {"{ip:10}|", "1.2.3.4   |"},  // text aligns left by default
      {"{user:.3}", "adm"},
      {"{user:>5.3}", "  adm"},
      {"{user:.0}", ""},
      {"{user:s}", "administrator"},
      {"{ip:}", "1.2.3.4"},  // an empty spec is no spec
      {"{ip:>1024}", nullptr},
      {"x: {ip:a^9}", "x: a1.2.3.4a"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    const std::string got = render(c.text, kValues);
    if (c.want) CHECK(got == c.want);
    else CHECK(got == std::string(1024 - 7, ' ') + "1.2.3.4");
  }
}

TEST_CASE("template: render appends to out") {
  Template t = must_parse("{count} from {ip}");
  std::string out = "alert: ";
  t.render(out, kValues);
  CHECK(out == "alert: 5 from 1.2.3.4");
  t.render(out, kValues);
  CHECK(out == "alert: 5 from 1.2.3.45 from 1.2.3.4");
}

TEST_CASE("template: a value beyond values.size() renders as empty") {
  const std::vector<std::string_view> three = {"ssh", "failed", "5"};
  CHECK(render("[{ip}] [{user}] {count}", three) == "[] [] 5");
  CHECK(render("[{ip:>3}]", three) == "[   ]");
  CHECK(render("[{rule}]", {}) == "[]");
}

TEST_CASE("template: width and precision count characters, not bytes") {
  const std::vector<std::string_view> v = {"", "", "", "", "h\xc3\xa9llo"};
  CHECK(render("{user:.2}", v) == "h\xc3\xa9");
  CHECK(render("{user:>7}", v) == "  h\xc3\xa9llo");
  // Invalid UTF-8 must not break rendering: each non-continuation byte counts as one.
  const std::vector<std::string_view> bad = {"", "", "", "", "\xff\xfe\xfd"};
  CHECK(render("{user:.2}", bad) == "\xff\xfe");
  CHECK(render("{user}", bad) == "\xff\xfe\xfd");
}

TEST_CASE("template: uses, empty, text") {
  Template t = must_parse("{ip} failed {count} times");
  CHECK(t.uses(3));
  CHECK(t.uses(2));
  CHECK_FALSE(t.uses(0));
  CHECK_FALSE(t.uses(4));
  CHECK_FALSE(t.uses(-1));  // literal segments are not a field
  CHECK_FALSE(t.empty());
  CHECK(t.text() == "{ip} failed {count} times");

  Template literal_only = must_parse("{{ip}}");
  CHECK_FALSE(literal_only.uses(3));
  CHECK_FALSE(literal_only.empty());

  CHECK(must_parse("").empty());
  CHECK(Template().empty());
  std::string out = "x";
  Template().render(out, kValues);
  CHECK(out == "x");
}

TEST_CASE("template: errors") {
  struct Bad {
    std::string text;
    int col;
    const char* what;
  };
  const std::vector<Bad> cases = {
      {"{ipp}", 2, "unknown field \"ipp\" (fields: rule, event, count, ip, user; did you mean \"ip\"?)"},
      {"from {ipp} now", 7, "unknown field \"ipp\" (fields: rule, event, count, ip, user; did you mean \"ip\"?)"},
      {"{xyz}", 2, "unknown field \"xyz\" (fields: rule, event, count, ip, user)"},
      {"{IP}", 2, "unknown field \"IP\" (fields: rule, event, count, ip, user)"},
      {"{ipp:>5}", 2, "unknown field \"ipp\" (fields: rule, event, count, ip, user; did you mean \"ip\"?)"},
      {"{count", 1, "unmatched \"{\" (write \"{{\" for a literal brace)"},
      {"a {ip {count}", 3, "unmatched \"{\" (write \"{{\" for a literal brace)"},
      {"{", 1, "unmatched \"{\" (write \"{{\" for a literal brace)"},
      {"{{{", 3, "unmatched \"{\" (write \"{{\" for a literal brace)"},
      {"count}", 6, "unmatched \"}\" (write \"}}\" for a literal brace)"},
      {"}}}", 3, "unmatched \"}\" (write \"}}\" for a literal brace)"},
      {"{ip}}", 5, "unmatched \"}\" (write \"}}\" for a literal brace)"},
      {"{}", 1, "field \"{}\" has no name (use a name, e.g. \"{rule}\")"},
      {"x {:>5}", 3, "field \"{:>5}\" has no name (use a name, e.g. \"{rule}\")"},
      {"{0}", 2, "positional field \"{0}\" is not supported (use a name, e.g. \"{rule}\")"},
      {"{1:>3}", 2, "positional field \"{1:>3}\" is not supported (use a name, e.g. \"{rule}\")"},
      {"{ip:>{}}", 6, "nested \"{\" in the format spec of field \"ip\" is not supported"},
      // fmt's own reasons (fmt 9.1 core.h) for specs a text value cannot take.
      {"{ip:d}", 5, "invalid format spec \"d\" for field \"ip\": invalid type specifier"},
      {"{ip:+}", 5, "invalid format spec \"+\" for field \"ip\": format specifier requires numeric argument"},
      {"{ip:>99999999999}", 5, "invalid format spec \">99999999999\" for field \"ip\": number is too big"},
      {"{ip:>1025}", 5, "format spec \">1025\" for field \"ip\" is wider than 1024 characters"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto t = Template::parse(c.text, resolve, kNames);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().what == c.what);
    CHECK(t.error().col == c.col);
  }
}

TEST_CASE("template: errors without known names") {
  auto none = [](std::string_view) { return -1; };
  auto t = Template::parse("{x}", none, {});
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().what == "unknown field \"x\"");
  auto e = Template::parse("{}", none, {});
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().what == "field \"{}\" has no name (use a name)");
}
