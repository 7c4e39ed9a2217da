#include "config/duration.h"

#include <cstddef>
#include <limits>
#include <optional>
#include <utility>

namespace swthrottle::config {
namespace {

struct Unit {
  std::string_view name;
  int64_t ms;
};

// Largest first: the order a duration must be written in, and the order
// format_duration() emits.
constexpr Unit kUnits[] = {{"d", 86'400'000}, {"h", 3'600'000}, {"m", 60'000}, {"s", 1'000}, {"ms", 1}};
constexpr std::size_t kNoUnit = std::size(kUnits);
constexpr std::string_view kUnitList = "(units: ms, s, m, h, d)";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::size_t unit_index(std::string_view name) {
  for (std::size_t u = 0; u < kNoUnit; ++u) {
    if (kUnits[u].name == name) return u;
  }
  return kNoUnit;
}

// Where `text` starts and ends once surrounding whitespace is dropped.
std::pair<std::size_t, std::string_view> trim(std::string_view text) {
  std::size_t b = 0, e = text.size();
  while (b < e && is_space(text[b])) ++b;
  while (e > b && is_space(text[e - 1])) --e;
  return {b, text.substr(b, e - b)};
}

// A parse failure inside a trimmed duration: `pos` is 0-based in that text,
// `reason` is the part of the message after `invalid duration "...": `.
struct Failure {
  std::size_t pos;
  std::string reason;
};

struct Parsed {
  int64_t ms = 0;
  std::optional<Failure> failure;
};

Parsed fail(std::size_t pos, std::string reason) { return Parsed{0, Failure{pos, std::move(reason)}}; }

Parsed parse_trimmed(std::string_view s);

// "1.5m": no fractions, but say what to write instead when the value is a
// whole number of milliseconds and the fraction is the whole duration.
std::string fraction_reason(std::string_view s, std::size_t part, std::size_t dot) {
  std::string reason = "fractions are not allowed";
  std::size_t e = dot + 1;
  while (e < s.size() && is_digit(s[e])) ++e;
  std::string_view frac = s.substr(dot + 1, e - dot - 1);
  std::size_t u0 = e;
  while (e < s.size() && is_alpha(s[e])) ++e;
  std::size_t u = unit_index(s.substr(u0, e - u0));
  // Bounds keep every product below 2^63: frac * unit < 10^9 * 8.64e7.
  if (part != 0 || e != s.size() || u == kNoUnit || frac.size() > 9 || dot - part > 12) return reason;
  int64_t whole = 0;
  for (std::size_t i = part; i < dot; ++i) whole = whole * 10 + (s[i] - '0');
  int64_t f = 0, scale = 1;
  for (char c : frac) {
    f = f * 10 + (c - '0');
    scale *= 10;
  }
  int64_t unit_ms = kUnits[u].ms;
  if (whole > std::numeric_limits<int64_t>::max() / unit_ms || (f * unit_ms) % scale != 0) return reason;
  int64_t ms = whole * unit_ms + f * unit_ms / scale;
  if (ms > 0) reason += " (write \"" + format_duration(ms) + "\")";
  return reason;
}

// "1h 30m": say so, and show the duration without the spaces when that parses.
std::string space_reason(std::string_view s) {
  std::string reason = "spaces are not allowed inside a duration";
  std::string joined;
  for (char c : s) {
    if (!is_space(c)) joined += c;
  }
  if (!parse_trimmed(joined).failure) reason += " (write \"" + joined + "\")";
  return reason;
}

// Parses a non-empty duration without surrounding whitespace.
Parsed parse_trimmed(std::string_view s) {
  const std::size_t n = s.size();
  std::size_t i = 0;
  std::size_t prev_unit = kNoUnit;  // kNoUnit: no part yet
  int64_t total = 0;
  std::optional<std::size_t> overflow_at;
  // A unit out of order is reported only after the rest was read, so that the
  // message can show the correctly ordered duration.
  std::optional<Failure> order;
  auto lexical = [&](std::size_t pos, std::string reason) {
    return order ? Parsed{0, std::move(order)} : fail(pos, std::move(reason));
  };

  while (i < n) {
    const std::size_t part = i;
    const char c = s[i];
    if (c == '.' && i + 1 < n && is_digit(s[i + 1])) return lexical(i, fraction_reason(s, part, i));
    if (!is_digit(c)) {
      if (c == '-' || c == '+') return lexical(i, "a duration has no sign");
      if (is_space(c)) return lexical(i, space_reason(s));
      return lexical(i, "expected a number, found \"" + std::string(s.substr(i)) + "\"");
    }
    uint64_t value = 0;
    bool big = false;
    for (; i < n && is_digit(s[i]); ++i) {
      auto d = static_cast<uint64_t>(s[i] - '0');
      if (value > (std::numeric_limits<uint64_t>::max() - d) / 10) big = true;
      else value = value * 10 + d;
    }
    const std::size_t num_end = i;
    if (i < n && s[i] == '.') return lexical(i, fraction_reason(s, part, i));
    for (; i < n && is_alpha(s[i]); ++i) {
    }
    const std::string_view unit_text = s.substr(num_end, i - num_end);
    if (unit_text.empty()) {
      if (i < n && is_space(s[i])) return lexical(i, space_reason(s));
      return lexical(
          i, "missing unit after \"" + std::string(s.substr(part, num_end - part)) + "\" " + std::string(kUnitList));
    }
    const std::size_t u = unit_index(unit_text);
    if (u == kNoUnit) {
      return lexical(num_end, "unknown unit \"" + std::string(unit_text) + "\" " + std::string(kUnitList));
    }
    if (!order && prev_unit != kNoUnit) {
      if (u == prev_unit) {
        order = Failure{num_end, "unit \"" + std::string(unit_text) + "\" appears twice"};
      } else if (u < prev_unit) {
        order = Failure{part, "units must go from largest to smallest"};
      }
    }
    prev_unit = u;
    if (!overflow_at) {
      const int64_t max = std::numeric_limits<int64_t>::max();
      const int64_t unit_ms = kUnits[u].ms;
      if (big || value > static_cast<uint64_t>(max / unit_ms) || static_cast<int64_t>(value) * unit_ms > max - total) {
        overflow_at = part;
      } else {
        total += static_cast<int64_t>(value) * unit_ms;
      }
    }
  }
  if (order) {
    if (!overflow_at && total > 0) order->reason += " (write \"" + format_duration(total) + "\")";
    return Parsed{0, std::move(order)};
  }
  if (overflow_at) {
    return fail(*overflow_at, "too large (at most " + format_duration(std::numeric_limits<int64_t>::max()) + ")");
  }
  if (total == 0) return fail(0, "must be greater than zero");
  return Parsed{total, std::nullopt};
}

Error make_error(int col, std::string what) {
  Error e;
  e.col = col;
  e.what = std::move(what);
  return e;
}

int col_of(std::size_t pos) { return static_cast<int>(pos) + 1; }

}  // namespace

Result<int64_t> parse_duration(std::string_view text) {
  auto [lead, s] = trim(text);
  const std::string quoted = "invalid duration \"" + std::string(s) + "\": ";
  if (s.empty()) return make_error(1, quoted + "empty");
  Parsed p = parse_trimmed(s);
  if (p.failure) return make_error(col_of(lead + p.failure->pos), quoted + p.failure->reason);
  return p.ms;
}

std::string format_duration(int64_t ms) {
  if (ms == 0) return "0ms";
  std::string out;
  // Magnitude in unsigned, so that INT64_MIN does not overflow on negation.
  uint64_t rest = static_cast<uint64_t>(ms);
  if (ms < 0) {
    out += '-';
    rest = ~rest + 1;
  }
  for (const Unit& u : kUnits) {
    const auto unit_ms = static_cast<uint64_t>(u.ms);
    if (rest >= unit_ms) {
      out += std::to_string(rest / unit_ms);
      out += u.name;
      rest %= unit_ms;
    }
  }
  return out;
}

Result<Threshold> parse_threshold(std::string_view text) {
  // Not a structured binding: `err` captures lead, which clang 14 (the
  // fuzzing build, tests/fuzz) cannot do with a binding.
  const auto [lead_at, s] = trim(text);
  const std::size_t lead = lead_at;
  const std::string quoted = "invalid threshold \"" + std::string(s) + "\": ";
  const std::size_t n = s.size();
  auto err = [&](std::size_t pos, const std::string& reason) {
    return make_error(col_of(lead + pos), quoted + reason);
  };
  if (s.empty()) return make_error(1, quoted + "empty (write \"Y per X\", e.g. \"5 per 1m\")");
  if (!is_digit(s[0])) return err(0, "expected a count first, as in \"5 per 1m\"");

  std::size_t i = 0;
  uint64_t count = 0;
  for (; i < n && is_digit(s[i]); ++i) {
    auto d = static_cast<uint64_t>(s[i] - '0');
    if (count > (std::numeric_limits<uint64_t>::max() - d) / 10) return err(0, "the count is too large");
    count = count * 10 + d;
  }
  if (i < n && s[i] == '.') return err(i, "the count must be a whole number");
  if (count == 0) return err(0, "the count must be at least 1");

  std::size_t k = i;
  while (k < n && is_space(s[k])) ++k;
  if (k < n && s[k] == '/') {
    ++k;
  } else if (k > i && s.substr(k, 3) == "per" && (k + 3 == n || is_space(s[k + 3]))) {
    k += 3;
  } else {
    return err(k, "expected \"per\" or \"/\" after the count, as in \"5 per 1m\"");
  }
  while (k < n && is_space(s[k])) ++k;
  if (k == n) return err(k, "missing the window, as in \"5 per 1m\"");

  const std::string_view window = s.substr(k);
  Parsed p = parse_trimmed(window);
  if (p.failure) {
    return err(k + p.failure->pos, "window \"" + std::string(window) + "\": " + p.failure->reason);
  }
  return Threshold{count, p.ms, std::string(window)};
}

}  // namespace swthrottle::config
