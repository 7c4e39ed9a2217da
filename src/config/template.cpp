#include "config/template.h"

#include <fmt/format.h>

#include <iterator>
#include <limits>
#include <string>
#include <utility>

#include "util/suggest.h"

namespace swthrottle::config {
namespace {

// A width beyond this is a typo, not a layout: "{line:>100000000}" would make
// every record that large.
constexpr std::size_t kMaxWidth = 1024;

Error error_at(std::size_t pos, std::string what) {
  Error e;
  e.col = static_cast<int>(pos) + 1;
  e.what = std::move(what);
  return e;
}

std::string quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

// Does a run of digits in `spec` that is not a precision (after '.') stand
// for more than kMaxWidth? Such a run is the width (or, alone before an
// align char, a digit used as fill: one digit, never more than 9). Checked
// before fmt sees the spec, because fmt's formatted_size writes the padding
// one char at a time into a counter: "{ip:>999999999}" took seconds to load.
bool width_too_large(std::string_view spec) {
  for (std::size_t i = 0; i < spec.size();) {
    if (spec[i] < '0' || spec[i] > '9') {
      ++i;
      continue;
    }
    const bool precision = i > 0 && spec[i - 1] == '.';
    std::size_t j = i;
    while (j < spec.size() && spec[j] == '0') ++j;  // leading zeros: the '0' flag, or nothing
    const std::size_t first = j;
    while (j < spec.size() && spec[j] >= '0' && spec[j] <= '9') ++j;
    const std::string_view digits = spec.substr(first, j - first);
    // Beyond an int fmt itself says "number is too big", without counting.
    if (!precision && !digits.empty() && digits.size() <= 10) {
      const unsigned long long width = std::stoull(std::string(digits));
      if (width > kMaxWidth && width <= static_cast<unsigned long long>(std::numeric_limits<int>::max())) return true;
    }
    i = j;
  }
  return false;
}

bool all_digits(std::string_view s) {
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return !s.empty();
}

std::string name_example(std::span<const std::string> known) {
  return known.empty() ? std::string() : ", e.g. \"{" + known.front() + "}\"";
}

std::string unknown_field(std::string_view name, std::span<const std::string> known) {
  std::string m = "unknown field " + quote(name);
  if (known.empty()) return m;
  m += " (fields: ";
  for (std::size_t i = 0; i < known.size(); ++i) {
    if (i > 0) m += ", ";
    m += known[i];
  }
  const std::string close = closest_match(name, known);
  if (!close.empty()) m += "; did you mean " + quote(close) + "?";
  return m + ")";
}

}  // namespace

Result<Template> Template::parse(std::string_view text, const std::function<int(std::string_view)>& resolve,
                                 std::span<const std::string> known_names) {
  Template t;
  t.text_ = std::string(text);
  std::string literal;
  auto flush_literal = [&] {
    if (literal.empty()) return;
    Segment s;
    s.literal = std::move(literal);
    t.segments_.push_back(std::move(s));
    t.formats_.emplace_back();
    literal.clear();
  };

  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const char c = text[i];
    if (c == '}') {
      if (i + 1 < n && text[i + 1] == '}') {
        literal += '}';
        i += 2;
        continue;
      }
      return error_at(i, "unmatched \"}\" (write \"}}\" for a literal brace)");
    }
    if (c != '{') {
      literal += c;
      ++i;
      continue;
    }
    if (i + 1 < n && text[i + 1] == '{') {
      literal += '{';
      i += 2;
      continue;
    }

    // A field: "{" name [":" spec] "}".
    const std::size_t open = i;
    std::size_t colon = std::string_view::npos;
    std::size_t close = open + 1;
    for (; close < n && text[close] != '}'; ++close) {
      if (text[close] == '{') {
        if (colon == std::string_view::npos) {
          return error_at(open, "unmatched \"{\" (write \"{{\" for a literal brace)");
        }
        // fmt's dynamic width/precision ("{ip:>{}}"): nothing could fill it.
        return error_at(close, "nested \"{\" in the format spec of field " +
                                   quote(text.substr(open + 1, colon - open - 1)) + " is not supported");
      }
      if (text[close] == ':' && colon == std::string_view::npos) colon = close;
    }
    if (close == n) return error_at(open, "unmatched \"{\" (write \"{{\" for a literal brace)");

    const std::size_t name_end = colon == std::string_view::npos ? close : colon;
    const std::string_view name = text.substr(open + 1, name_end - open - 1);
    const std::string_view spec =
        colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1, close - colon - 1);
    const std::string_view whole = text.substr(open, close - open + 1);
    if (name.empty()) {
      return error_at(open, "field " + quote(whole) + " has no name (use a name" + name_example(known_names) + ")");
    }
    if (all_digits(name)) {
      return error_at(open + 1, "positional field " + quote(whole) + " is not supported (use a name" +
                                    name_example(known_names) + ")");
    }
    const int id = resolve(name);
    if (id < 0) return error_at(open + 1, unknown_field(name, known_names));

    std::string format;
    if (!spec.empty()) {
      format = "{:" + std::string(spec) + "}";
      // Field values are always text, so a spec that formats a sample string
      // formats every value; formatted_size parses it the same way. It
      // counts the padding one char at a time, so a width beyond kMaxWidth
      // is turned away before it (width_too_large).
      std::size_t size = 0;
      try {
        size = width_too_large(spec) ? kMaxWidth + 1 : fmt::formatted_size(fmt::runtime(format), std::string_view("x"));
      } catch (const fmt::format_error& e) {
        return error_at(colon + 1,
                        "invalid format spec " + quote(spec) + " for field " + quote(name) + ": " + e.what());
      }
      if (size > kMaxWidth) {
        return error_at(colon + 1, "format spec " + quote(spec) + " for field " + quote(name) + " is wider than " +
                                       std::to_string(kMaxWidth) + " characters");
      }
    }
    flush_literal();
    Segment s;
    s.field = id;
    s.spec = std::string(spec);
    t.segments_.push_back(std::move(s));
    t.formats_.push_back(std::move(format));
    i = close + 1;
  }
  flush_literal();
  return t;
}

void Template::render(std::string& out, std::span<const std::string_view> values) const {
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    const Segment& s = segments_[i];
    if (s.field < 0) {
      out += s.literal;
      continue;
    }
    const auto id = static_cast<std::size_t>(s.field);
    const std::string_view value = id < values.size() ? values[id] : std::string_view();
    if (formats_[i].empty()) {
      out += value;
    } else {
      // Writes straight into `out` (fmt appends to a std::string in place).
      fmt::format_to(std::back_inserter(out), fmt::runtime(formats_[i]), value);
    }
  }
}

bool Template::uses(int field) const {
  for (const Segment& s : segments_) {
    if (s.field >= 0 && s.field == field) return true;
  }
  return false;
}

}  // namespace swthrottle::config
