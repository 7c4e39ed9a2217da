#include "config/regex_lint.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include <fmt/format.h>

namespace swthrottle::config {
namespace {

// A letter or "_": what may follow "(?<" in a .NET/PCRE named group.
bool starts_name(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }

struct Unsupported {
  std::size_t offset = 0;  // 0-based byte offset in the pattern
  std::string message;
};

// Perl/PCRE constructs that RE2 rejects, found before RE2 sees the pattern so
// that the message can say why (RE2's own "invalid perl operator: (?=" does
// not) and what to write instead.
std::optional<Unsupported> find_unsupported(std::string_view p, RegexUse use) {
  const std::string negative_advice = use == RegexUse::Event
                                          ? "list what must not count in the rule's ignore pattern instead"
                                          : "match what must be there instead of excluding what must not";
  auto unsupported = [](std::size_t at, std::string_view what, std::string_view token, std::string_view advice) {
    return Unsupported{at, fmt::format("pattern uses {} \"{}\", which RE2 does not support "
                                       "(RE2 guarantees linear time); {}",
                                       what, token, advice)};
  };
  const std::string possessive_advice = "RE2 never backtracks, so the plain quantifier does the same";
  bool in_class = false;
  std::size_t i = 0;
  while (i < p.size()) {
    char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size()) break;
      char d = p[i + 1];
      if (d == 'Q') {  // \Q...\E is literal text
        std::size_t end = p.find("\\E", i + 2);
        i = end == std::string_view::npos ? p.size() : end + 2;
        continue;
      }
      if (!in_class && d >= '1' && d <= '9') {
        return unsupported(i, "a backreference", p.substr(i, 2),
                           "repeat the group's pattern instead of referring back to it");
      }
      if (!in_class && d == 'k' && i + 2 < p.size() && (p[i + 2] == '<' || p[i + 2] == '{' || p[i + 2] == '\'')) {
        return unsupported(i, "a backreference", p.substr(i, 3),
                           "repeat the group's pattern instead of referring back to it");
      }
      i += 2;
      continue;
    }
    if (in_class) {
      if (c == '[' && i + 1 < p.size() && p[i + 1] == ':') {  // [:alpha:]
        std::size_t end = p.find(":]", i + 2);
        i = end == std::string_view::npos ? p.size() : end + 2;
        continue;
      }
      if (c == ']') in_class = false;
      ++i;
      continue;
    }
    if (c == '[') {
      in_class = true;
      ++i;
      if (i < p.size() && p[i] == '^') ++i;
      if (i < p.size() && p[i] == ']') ++i;  // a leading ']' is literal
      continue;
    }
    if (c == '(' && i + 1 < p.size() && p[i + 1] == '?') {
      std::string_view rest = p.substr(i + 2);
      if (rest.starts_with("=")) {
        return unsupported(i, "a lookahead", "(?=", "match the text that follows as part of the pattern");
      }
      if (rest.starts_with("!")) return unsupported(i, "a negative lookahead", "(?!", negative_advice);
      if (rest.starts_with("<=")) {
        return unsupported(i, "a lookbehind", "(?<=", "match the text before as part of the pattern");
      }
      if (rest.starts_with("<!")) return unsupported(i, "a negative lookbehind", "(?<!", negative_advice);
      if (rest.starts_with(">")) {
        return unsupported(i, "an atomic group", "(?>",
                           "use a plain group \"(?:\"; RE2 never backtracks, so it does the same");
      }
      if (rest.starts_with("<") && rest.size() > 1 && starts_name(rest[1])) {
        std::size_t close = rest.find('>');
        std::string name(rest.substr(1, close == std::string_view::npos ? 0 : close - 1));
        return Unsupported{i, fmt::format("RE2 writes a named group as \"(?P<{0}>\", not \"(?<{0}>\"", name)};
      }
      i += 2;  // "(?" is not a quantifier
      continue;
    }
    std::size_t quant_end = 0;  // one past a quantifier starting at i, or 0
    if (c == '*' || c == '+' || c == '?') {
      quant_end = i + 1;
    } else if (c == '{') {
      // {n}, {n,}, {n,m}; anything else is a literal brace in RE2
      std::size_t j = i + 1;
      std::size_t digits = 0;
      while (j < p.size() && p[j] >= '0' && p[j] <= '9') ++j, ++digits;
      if (digits > 0 && j < p.size() && p[j] == ',') {
        ++j;
        while (j < p.size() && p[j] >= '0' && p[j] <= '9') ++j;
      }
      if (digits > 0 && j < p.size() && p[j] == '}') quant_end = j + 1;
    }
    if (quant_end > 0) {
      if (quant_end < p.size() && p[quant_end] == '+') {
        return unsupported(i, "a possessive quantifier", p.substr(i, quant_end + 1 - i),
                           fmt::format("write \"{}\"; {}", p.substr(i, quant_end - i), possessive_advice));
      }
      i = quant_end;
      continue;
    }
    ++i;
  }
  return std::nullopt;
}

}  // namespace

Result<std::unique_ptr<RE2>> compile_regex(const TomlReader& in, const toml::node& v, RegexUse use) {
  const std::string& pattern = v.as_string()->get();
  if (auto u = find_unsupported(pattern, use)) return in.err_in(v, static_cast<int>(u->offset) + 1, u->message);
  RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_unique<RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    std::size_t at = re->error_arg().empty() ? std::string::npos : pattern.find(re->error_arg());
    int col = at == std::string::npos ? 0 : static_cast<int>(at) + 1;
    return in.err_in(v, col, fmt::format("invalid regex '{}': {}", pattern, re->error()));
  }
  return re;
}

Result<std::vector<std::string>> event_captures(const TomlReader& in, const toml::node& match, const RE2& re,
                                                const std::vector<std::string>& builtin_fields) {
  const std::string& pattern = match.as_string()->get();
  std::vector<std::string> captures;
  for (const auto& [group, capture] : re.CapturingGroupNames()) {
    std::string token = "(?P<" + capture + ">";
    std::size_t at = pattern.find(token);
    int col = static_cast<int>(at) + 1;  // npos + 1 == 0: no column
    if (std::find(captures.begin(), captures.end(), capture) != captures.end()) {
      std::size_t again = at == std::string::npos ? at : pattern.find(token, at + 1);
      return in.err_in(match, static_cast<int>(again) + 1,
                       fmt::format("capture group name {} is used twice in one pattern", quote(capture)));
    }
    if (std::find(builtin_fields.begin(), builtin_fields.end(), capture) != builtin_fields.end()) {
      return in.err_in(match, col,
                       fmt::format("capture group {} has the name of a built-in template field; rename it "
                                   "(built-ins: {})",
                                   quote(capture), join(builtin_fields, ", ")));
    }
    captures.push_back(capture);
  }
  return captures;
}

}  // namespace swthrottle::config
