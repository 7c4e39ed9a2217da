#include "config/toml_walk.h"

#include <algorithm>

#include <fmt/format.h>

#include "config/duration.h"
#include "util/suggest.h"
#include "util/utf8.h"

namespace swthrottle::config {

Pos pos_of(const toml::source_region& r) { return {static_cast<int>(r.begin.line), static_cast<int>(r.begin.column)}; }

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string describe(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return quote(n.as_string()->get());
    case toml::node_type::integer: return std::to_string(n.as_integer()->get());
    case toml::node_type::floating_point: return fmt::format("{}", n.as_floating_point()->get());
    case toml::node_type::boolean: return n.as_boolean()->get() ? "true" : "false";
    case toml::node_type::array: return n.as_array()->empty() ? "an empty array" : "an array";
    case toml::node_type::table: return "a table";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

std::string quoted_choices(const std::vector<std::string>& choices) {
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) out += (i + 1 == choices.size()) ? " or " : ", ";
    out += quote(choices[i]);
  }
  return out;
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += sep;
    out += v[i];
  }
  return out;
}

std::vector<std::pair<const toml::key*, const toml::node*>> ordered(const toml::table& t) {
  std::vector<std::pair<const toml::key*, const toml::node*>> v;
  for (auto&& [k, n] : t) v.emplace_back(&k, &n);
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    auto pa = a.first->source().begin;
    auto pb = b.first->source().begin;
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  });
  return v;
}

TomlReader::TomlReader(std::string_view text, std::string_view file) : text_(text), file_(file) {
  std::size_t start = 0;
  while (start <= text_.size()) {
    std::size_t nl = text_.find('\n', start);
    if (nl == std::string_view::npos) {
      lines_.push_back(text_.substr(start));
      break;
    }
    lines_.push_back(text_.substr(start, nl - start));
    start = nl + 1;
  }
}

namespace {

std::size_t byte_of_column(std::string_view line, int col) {
  std::size_t b = 0;
  for (int c = 1; c < col && b < line.size(); ++c) {
    ++b;
    while (b < line.size() && is_utf8_continuation(static_cast<unsigned char>(line[b]))) ++b;
  }
  return b;
}

int code_points(std::string_view s) {
  return static_cast<int>(
      std::count_if(s.begin(), s.end(), [](char c) { return !is_utf8_continuation(static_cast<unsigned char>(c)); }));
}

std::size_t utf8_length(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

}  // namespace

Pos TomlReader::in_string(const toml::node& n, int col) const {
  Pos p = pos_of(n.source());
  if (col <= 0 || p.line <= 0 || static_cast<std::size_t>(p.line) > lines_.size()) return p;
  std::string_view line = lines_[static_cast<std::size_t>(p.line) - 1];
  std::size_t open = byte_of_column(line, p.col);
  if (open >= line.size()) return p;
  char q = line[open];
  // Multi-line strings: the offset would need line breaks counted; point at the value.
  if ((q != '"' && q != '\'') || line.substr(open, 3) == "\"\"\"" || line.substr(open, 3) == "'''") return p;
  std::size_t src = open + 1;
  auto want = static_cast<std::size_t>(col - 1);  // decoded bytes before the offset
  if (q == '\'') {
    src = std::min(line.size(), src + want);
  } else {
    while (want > 0 && src < line.size() && line[src] != '"') {
      if (line[src] == '\\' && src + 1 < line.size()) {
        char e = line[src + 1];
        std::size_t hex = e == 'u' ? 4 : e == 'U' ? 8 : 0;
        if (hex > 0 && src + 2 + hex <= line.size()) {
          uint32_t cp = 0;
          for (std::size_t k = 0; k < hex; ++k) {
            char h = line[src + 2 + k];
            cp = cp * 16 + static_cast<uint32_t>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
          }
          want -= std::min(want, utf8_length(cp));
          src += 2 + hex;
        } else {
          want -= 1;
          src += 2;
        }
      } else {
        want -= 1;
        src += 1;
      }
    }
  }
  return {p.line, p.col + 1 + code_points(line.substr(open + 1, src - (open + 1)))};
}

MaybeError TomlReader::unknown_keys(const toml::table& t, const std::vector<std::string>& allowed,
                                    std::string_view where) const {
  for (auto [k, n] : ordered(t)) {
    if (std::find(allowed.begin(), allowed.end(), k->str()) == allowed.end()) {
      return err(*k, fmt::format("unknown key {} in {}{}", quote(k->str()), where, did_you_mean(k->str(), allowed)));
    }
  }
  return std::nullopt;
}

Result<int> TomlReader::choose(const toml::node& v, std::string_view key,
                               const std::vector<std::string>& choices) const {
  std::string expected = fmt::format("{} must be {}, not {}", key, quoted_choices(choices), describe(v));
  const auto* s = v.as_string();
  if (s == nullptr) return err(v, expected);
  auto it = std::find(choices.begin(), choices.end(), s->get());
  if (it == choices.end()) return err(v, expected + did_you_mean(s->get(), choices));
  return static_cast<int>(it - choices.begin());
}

Result<int64_t> TomlReader::integer(const toml::node& v, std::string_view key, int64_t lo, int64_t hi) const {
  const auto* i = v.as_integer();
  if (i == nullptr || i->get() < lo || i->get() > hi) {
    if (hi == INT64_MAX) return err(v, fmt::format("{} must be an integer >= {}, not {}", key, lo, describe(v)));
    return err(v, fmt::format("{} must be an integer from {} to {}, not {}", key, lo, hi, describe(v)));
  }
  return i->get();
}

Result<int64_t> TomlReader::duration(const toml::node& v, std::string_view key) const {
  const auto* s = v.as_string();
  if (s == nullptr) {
    return err(v, fmt::format("{} must be a duration such as \"30s\", \"5m\" or \"1h30m\", not {}", key, describe(v)));
  }
  auto d = parse_duration(s->get());
  if (!d) return err_in(v, d.error().col, d.error().what);
  return *d;
}

}  // namespace swthrottle::config
