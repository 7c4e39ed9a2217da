#include "backtest/terminal_text.h"

#include <fmt/format.h>

#include "util/civil_date.h"
#include "util/json.h"
#include "util/utf8.h"

namespace swthrottle::backtest {
namespace {

// The code point starting at text[i] and its length in bytes; a byte that
// does not start a well-formed sequence is taken alone (as one column).
std::pair<char32_t, std::size_t> decode(std::string_view text, std::size_t i) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data()) + i;
  const auto* end = reinterpret_cast<const unsigned char*>(text.data()) + text.size();
  if (p[0] < 0x80) return {p[0], 1};
  const int n = utf8_sequence_length(p, end);
  if (n < 2) return {0xFFFD, 1};
  char32_t cp = p[0] & (0x7F >> n);
  for (int k = 1; k < n; ++k) cp = cp << 6 | (p[k] & 0x3F);
  return {cp, static_cast<std::size_t>(n)};
}

// East Asian Wide and Fullwidth, coarsely (Unicode's EastAsianWidth.txt
// ranges that terminals draw in two columns). Coarse in the safe direction:
// a range that is mostly wide counts wholly as wide.
bool is_wide(char32_t cp) {
  return (cp >= 0x1100 && cp <= 0x115F) ||    // Hangul Jamo initials
         (cp >= 0x2E80 && cp <= 0xA4CF) ||    // CJK radicals .. Yi
         (cp >= 0xAC00 && cp <= 0xD7A3) ||    // Hangul syllables
         (cp >= 0xF900 && cp <= 0xFAFF) ||    // CJK compatibility ideographs
         (cp >= 0xFE30 && cp <= 0xFE4F) ||    // CJK compatibility forms
         (cp >= 0xFF00 && cp <= 0xFF60) ||    // fullwidth forms
         (cp >= 0xFFE0 && cp <= 0xFFE6) ||    // fullwidth signs
         (cp >= 0x1F300 && cp <= 0x1FAFF) ||  // emoji and pictographs
         (cp >= 0x20000 && cp <= 0x3FFFD);    // CJK extensions B..
}

// The end of the ANSI escape sequence starting at text[i] (an ESC).
std::size_t skip_escape(std::string_view text, std::size_t i) {
  ++i;
  if (i < text.size() && text[i] == '[') {
    ++i;
    while (i < text.size() && !(text[i] >= 0x40 && text[i] <= 0x7E)) ++i;
    if (i < text.size()) ++i;  // the final byte ("m")
  }
  return i;
}

}  // namespace

int display_columns(std::string_view text) {
  int columns = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\x1b') {
      i = skip_escape(text, i);
      continue;
    }
    const auto [cp, len] = decode(text, i);
    columns += is_wide(cp) ? 2 : 1;
    i += len;
  }
  return columns;
}

std::string terminal_safe(std::string_view text) {
  std::string out;
  append_text_escaped(out, text);
  return out;
}

std::string cut_columns(std::string_view safe, int columns) {
  if (display_columns(safe) <= columns) return std::string(safe);
  // Keep what fits in columns - 1, then the ellipsis.
  std::string out;
  int used = 0;
  bool painted = false;
  for (std::size_t i = 0; i < safe.size();) {
    if (safe[i] == '\x1b') {
      const std::size_t end = skip_escape(safe, i);
      out.append(safe, i, end - i);
      painted = true;
      i = end;
      continue;
    }
    const auto [cp, len] = decode(safe, i);
    const int w = is_wide(cp) ? 2 : 1;
    if (used + w > columns - 1) break;
    out.append(safe, i, len);
    used += w;
    i += len;
  }
  out += "…";
  if (painted) out += "\x1b[0m";
  return out;
}

std::string fit_columns(std::string_view text, int columns) { return cut_columns(terminal_safe(text), columns); }

std::string pad_right(std::string_view text, int columns) {
  std::string out(text);
  const int w = display_columns(text);
  if (w < columns) out.append(static_cast<std::size_t>(columns - w), ' ');
  return out;
}

std::string pad_left(std::string_view text, int columns) {
  const int w = display_columns(text);
  std::string out(w < columns ? static_cast<std::size_t>(columns - w) : 0, ' ');
  out += text;
  return out;
}

std::string grouped(uint64_t n) {
  const std::string digits = fmt::format("{}", n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string utc_time(int64_t ms) {
  constexpr int64_t kDayMs = 86'400'000;
  const int64_t days = civil::floor_div(ms, kDayMs);
  const int64_t in_day = (ms - days * kDayMs) / 1000;
  const civil::Date d = civil::civil_from_days(days);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", d.year, d.month, d.day, in_day / 3600, in_day / 60 % 60,
                     in_day % 60);
}

std::string span_text(int64_t ms) {
  struct Unit {
    const char* name;
    int64_t ms;
  };
  static constexpr Unit kUnits[] = {{"d", 86'400'000}, {"h", 3'600'000}, {"m", 60'000}, {"s", 1'000}};
  if (ms < 1000) return fmt::format("{}ms", ms < 0 ? 0 : ms);
  for (std::size_t u = 0; u < std::size(kUnits); ++u) {
    if (ms < kUnits[u].ms) continue;
    const int64_t whole = ms / kUnits[u].ms;
    std::string out = fmt::format("{}{}", whole, kUnits[u].name);
    if (u + 1 < std::size(kUnits)) {
      const int64_t rest = ms % kUnits[u].ms / kUnits[u + 1].ms;
      if (rest > 0) out += fmt::format(" {}{}", rest, kUnits[u + 1].name);
    }
    return out;
  }
  return "0s";  // not reached: ms >= 1000
}

std::vector<std::string> wrap_words(std::string_view text, int columns, std::string_view first_indent,
                                    std::string_view indent) {
  std::vector<std::string> lines;
  std::string line(first_indent);
  bool line_has_word = false;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    if (i == text.size()) break;
    std::size_t end = text.find(' ', i);
    if (end == std::string_view::npos) end = text.size();
    std::string word = terminal_safe(text.substr(i, end - i));
    i = end;
    const int room = columns - display_columns(line) - (line_has_word ? 1 : 0);
    if (line_has_word && display_columns(word) > room) {
      lines.push_back(std::move(line));
      line = std::string(indent);
      line_has_word = false;
    }
    const int left = columns - display_columns(line) - (line_has_word ? 1 : 0);
    if (display_columns(word) > left) word = cut_columns(word, left < 1 ? 1 : left);
    if (line_has_word) line += ' ';
    line += word;
    line_has_word = true;
  }
  if (line_has_word || lines.empty()) lines.push_back(std::move(line));
  return lines;
}

}  // namespace swthrottle::backtest
