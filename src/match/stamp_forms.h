// The fixed timestamp forms (SPEC §4): RFC 3339 / ISO 8601, syslog, common
// log format and epoch numbers, each read at a given position of a line into
// Fields; and what the search needs to find their candidates quickly.
// Header-only: the readers inline into LogTime's search and its memo paths.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "match/stamp_bytes.h"
#include "match/stamp_fields.h"

namespace swthrottle::match::stamp {

// The heads of the stamps the memos hold (stamp_memo.h), their date and
// time of day: "YYYY-MM-DDTHH:MM:SS", "[dd/Mon/yyyy:HH:MM:SS" and
// "Mon dd HH:MM:SS" (or "Mon  d HH:MM:SS").
constexpr std::size_t kRfc3339Head = 19;
constexpr std::size_t kClfHead = 21;
constexpr std::size_t kSyslogHead = 15;

// "HH:MM:SS" at s[i] into f; returns the end or kNpos.
inline std::size_t hms_at(std::string_view s, std::size_t i, Fields& f) {
  static constexpr Pattern8 kHms = pattern8("dd:dd:dd");
  if (i > s.size() || s.size() - i < 8 || mismatch(s.data() + i, kHms) != 0) return kNpos;
  const char* p = s.data() + i;
  f.hour = (p[0] - '0') * 10 + (p[1] - '0');
  f.minute = (p[3] - '0') * 10 + (p[4] - '0');
  f.second = (p[6] - '0') * 10 + (p[7] - '0');
  return i + 8;
}

// An optional ".123" / ",123" at s[i]; returns the end.
[[gnu::always_inline]] inline std::size_t optional_fraction(std::string_view s, std::size_t i, Fields& f) {
  if (i + 1 < s.size() && (s[i] == '.' || s[i] == ',') && is_digit(s[i + 1])) return fraction(s, i + 1, f.ms);
  return i;
}

// What may follow the time of an RFC 3339 stamp at s[j] (after the fraction,
// if there are seconds): not a digit; an offset, if any, valid.
[[gnu::always_inline]] inline bool rfc3339_end(std::string_view s, std::size_t j, Fields& f) {
  if (j < s.size() && is_digit(s[j])) return false;
  std::size_t end = j;
  switch (offset_at(s, j, f.offset_s, end)) {
    case Offset::Bad: return false;
    case Offset::Ok: f.has_offset = true; break;
    case Offset::None: break;
  }
  return true;
}

// RFC 3339 / ISO 8601 at s[i], where four digits and '-' are known to start:
// YYYY-MM-DD('T'|'t'|' ')HH:MM[:SS[(.|,)frac]][Z|+hh[[:]mm]].
[[gnu::always_inline]] inline bool rfc3339_at(std::string_view s, std::size_t i, Fields& f) {
  // "YYYY-MM-DDTHH:MM" is 16 bytes: with them known to be there, the fixed
  // part needs no bounds checks.
  static constexpr Pattern8 kDate = pattern8("dddd-dd-");
  static constexpr Pattern8 kTime = pattern8("dd*dd:dd");
  if (s.size() - i < 16) return false;
  const char* p = s.data() + i;
  if ((mismatch(p, kDate) | mismatch(p + 8, kTime)) != 0) return false;
  if (p[10] != 'T' && p[10] != 't' && p[10] != ' ') return false;
  auto num2 = [p](int k) { return (p[k] - '0') * 10 + (p[k + 1] - '0'); };
  f.year = num2(0) * 100 + num2(2);
  f.month = num2(5);
  f.day = num2(8);
  f.hour = num2(11);
  f.minute = num2(14);
  const std::size_t j = i + 16;
  if (j < s.size() && s[j] == ':') {
    f.second = two_digits(s, j + 1);
    if (f.second < 0) return false;
    return rfc3339_end(s, optional_fraction(s, j + 3, f), f);
  }
  return rfc3339_end(s, j, f);
}

// What may follow the time of a syslog stamp at s[j]: a fraction, then " YYYY"
// and a space, tab, ']' or ')' (into f.year); or no digit.
[[gnu::always_inline]] inline bool syslog_end(std::string_view s, std::size_t j, Fields& f) {
  j = optional_fraction(s, j, f);
  if (j + 5 <= s.size() && s[j] == ' ') {
    const int y = digits(s, j + 1, 4);
    const char after = j + 5 < s.size() ? s[j + 5] : ' ';
    if (y >= 0 && (after == ' ' || after == '\t' || after == ']' || after == ')')) {
      f.year = y;
      return true;
    }
  }
  return j >= s.size() || !is_digit(s[j]);
}

// Syslog at s[i], where a three-letter word is known to start:
// "Mon dd HH:MM:SS" or "Mon  d HH:MM:SS" (also "Mon d"), an optional fraction,
// and an optional " YYYY" as ctime() writes it ("Dec 04 04:47:44 2005").
[[gnu::always_inline]] inline bool syslog_at(std::string_view s, std::size_t i, Fields& f) {
  f.month = month_abbr(s, i);
  std::size_t j = i + 3;
  if (f.month == 0 || j >= s.size() || s[j] != ' ') return false;
  ++j;
  const bool padded = j < s.size() && s[j] == ' ';  // "Jul  1"
  if (padded) ++j;
  if (j >= s.size() || !is_digit(s[j])) return false;
  f.day = s[j++] - '0';
  if (!padded && j < s.size() && is_digit(s[j])) f.day = f.day * 10 + (s[j++] - '0');
  if (j >= s.size() || s[j] != ' ') return false;
  j = hms_at(s, j + 1, f);
  if (j == kNpos) return false;
  return syslog_end(s, j, f);
}

// What follows the time of a CLF stamp at s[j]: an optional " +zzzz", then ']'.
[[gnu::always_inline]] inline bool clf_end(std::string_view s, std::size_t j, Fields& f) {
  if (j < s.size() && s[j] == ' ') {
    std::size_t end = j;
    if (offset_at(s, j + 1, f.offset_s, end) != Offset::Ok) return false;
    f.has_offset = true;
    j = end;
  }
  return j < s.size() && s[j] == ']';
}

// Common log format at s[i] == '[': "[dd/Mon/yyyy:HH:MM:SS +zzzz]" (the
// offset may be left out).
[[gnu::always_inline]] inline bool clf_at(std::string_view s, std::size_t i, Fields& f) {
  static constexpr Pattern8 kDayMonth = pattern8("[dd/***/");
  static constexpr Pattern8 kYear = pattern8("dddd:***");
  if (s.size() - i < 21) return false;
  const char* p = s.data() + i;
  if ((mismatch(p, kDayMonth) | mismatch(p + 8, kYear)) != 0) return false;
  f.month = month_abbr(s, i + 4);
  if (f.month == 0) return false;
  f.day = (p[1] - '0') * 10 + (p[2] - '0');
  f.year = ((p[8] - '0') * 10 + (p[9] - '0')) * 100 + (p[10] - '0') * 10 + (p[11] - '0');
  const std::size_t j = hms_at(s, i + 13, f);
  if (j == kNpos) return false;
  return clf_end(s, j, f);
}

// Epoch seconds (10 digits, optional ".frac") or milliseconds (13 digits) at
// the very start of s, not followed by another digit.
inline int64_t epoch_at_start(std::string_view s) {
  std::size_t k = 0;
  int64_t v = 0;
  while (k < s.size() && k < 14 && is_digit(s[k])) v = v * 10 + (s[k++] - '0');
  if (k == 13 && (k == s.size() || !is_digit(s[k]))) return v;
  if (k != 10) return kNoTime;
  int ms = 0;
  if (k + 1 < s.size() && s[k] == '.' && is_digit(s[k + 1])) fraction(s, k + 1, ms);
  return v * 1000 + ms;
}

// The first "dd:dd" (two digits, a colon, two digits) in s: the position of
// its first digit, or kNpos. Every form the search looks for but epoch has one
// (the HH:MM of its time), kMaxLead bytes or less after the stamp's first byte.
inline std::size_t first_clock(std::string_view s) {
  const char* const b = s.data();
  const std::size_t n = s.size();
  if (n < 5) return kNpos;
  const std::size_t last = n - 3;       // the last colon with two bytes after it
  auto clock_at = [b](std::size_t k) {  // k: a colon, 2 <= k <= last
    return is_digit(b[k - 2]) && is_digit(b[k - 1]) && is_digit(b[k + 1]) && is_digit(b[k + 2]);
  };
#if defined(__SSE2__)
  // Sixteen bytes at a time, the last block overlapping the one before: a
  // call of memchr() per colon cost more than the rest of a line without a
  // stamp (a stack trace line).
  if (n >= 18) {
    const __m128i colon = _mm_set1_epi8(':');
    auto colons = [&](std::size_t at) {
      return static_cast<unsigned>(
          _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + at)), colon)));
    };
    for (std::size_t at = 2;; at += 16) {
      const bool tail = at + 16 >= n;
      if (tail) at = n - 16;
      // The tail block sees some colons again: they fail again.
      for (unsigned mask = colons(at); mask != 0; mask &= mask - 1) {
        const std::size_t k = at + static_cast<std::size_t>(std::countr_zero(mask));
        if (k <= last && clock_at(k)) return k - 2;
      }
      if (tail) return kNpos;
    }
  }
#endif
  for (std::size_t k = 2; k <= last; ++k) {
    const void* hit = std::memchr(b + k, ':', last + 1 - k);
    if (hit == nullptr) return kNpos;
    k = static_cast<std::size_t>(static_cast<const char*>(hit) - b);
    if (clock_at(k)) return k - 2;
  }
  return kNpos;
}

// The most bytes from a stamp's first byte to its HH: CLF's "[dd/Mon/yyyy:"
// (13); RFC 3339's "YYYY-MM-DDT" takes 11, syslog's "Mon  d " 7.
constexpr std::size_t kMaxLead = 13;

// What a byte can start, for the search: most bytes start nothing and are
// skipped by one table lookup.
enum : uint8_t { kNothing = 0, kDigit, kLetter, kBracket };
constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = kDigit;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = kLetter;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = kLetter;
  t['['] = kBracket;
  return t;
}();

}  // namespace swthrottle::match::stamp
