#include "config/rule_table.h"

#include <algorithm>

#include <fmt/format.h>

#include "config/event_parser.h"
#include "config/template.h"

namespace swthrottle::config {
namespace {

// The "{.path}" fields of a template's text, each with its leading ".";
// "{{" is a literal brace. Template::parse checks the rest of the syntax.
std::vector<std::string> json_field_refs(std::string_view text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') continue;
    if (i + 1 < text.size() && text[i + 1] == '{') {
      ++i;
      continue;
    }
    const std::size_t end = text.find_first_of(":}", i + 1);
    if (end == std::string_view::npos) break;
    const std::string_view name = text.substr(i + 1, end - i - 1);
    if (name.size() > 1 && name.front() == '.') out.emplace_back(name);
    i = end;
  }
  return out;
}

}  // namespace

std::string trim_blanks(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

void add_json_field_captures(const toml::table& t, const char* which, Rule& rule) {
  const toml::node* n = t.get(which);
  if (n == nullptr || !n->is_string()) return;
  for (const std::string& path : json_field_refs(n->as_string()->get())) {
    if (std::find(rule.capture_names.begin(), rule.capture_names.end(), path) == rule.capture_names.end()) {
      rule.capture_names.push_back(path);
    }
  }
}

KeyFields key_fields(const Rule& rule) {
  KeyFields f{{kBuiltinFields[kFieldRule], kBuiltinFields[kFieldEvent]}, {kFieldRule, kFieldEvent}};
  for (std::size_t i = 0; i < rule.capture_names.size(); ++i) {
    f.names.push_back(rule.capture_names[i]);
    f.ids.push_back(kFieldFirstCapture + static_cast<int>(i));
  }
  return f;
}

Result<Template> parse_template(const TomlReader& in, const toml::node& v, std::string_view key,
                                const std::vector<std::string>& known, const std::vector<int>& ids) {
  const auto* s = v.as_string();
  if (s == nullptr) {
    return in.err(v, fmt::format("{} must be a string (a template such as \"{{ip}}\"), not {}", key, describe(v)));
  }
  auto resolve = [&](std::string_view name) -> int {
    auto it = std::find(known.begin(), known.end(), name);
    return it == known.end() ? -1 : ids[static_cast<std::size_t>(it - known.begin())];
  };
  auto t = Template::parse(s->get(), resolve, known);
  if (!t) return in.err_in(v, t.error().col, fmt::format("{}: {}", key, t.error().what));
  return std::move(*t);
}

}  // namespace swthrottle::config
