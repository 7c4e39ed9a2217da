// The fixed timestamp forms (DESIGN.md §4): RFC 3339 / ISO 8601, syslog, common
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
// With kSlash, the form of nginx's error.log and Go's log package instead:
// YYYY/MM/DD HH:MM:SS, with the same optional fraction and offset after it
// (it shares RFC 3339's memo, whose heads are 19 bytes with seconds).
template <bool kSlash = false>
[[gnu::always_inline]] inline bool rfc3339_at(std::string_view s, std::size_t i, Fields& f) {
  // "YYYY-MM-DDTHH:MM" is 16 bytes: with them known to be there, the fixed
  // part needs no bounds checks.
  static constexpr Pattern8 kDate = kSlash ? pattern8("dddd/dd/") : pattern8("dddd-dd-");
  static constexpr Pattern8 kTime = pattern8("dd*dd:dd");
  if (s.size() - i < 16) return false;
  const char* p = s.data() + i;
  if ((mismatch(p, kDate) | mismatch(p + 8, kTime)) != 0) return false;
  if (kSlash ? p[10] != ' ' || s.size() - i < 19 || p[16] != ':' : p[10] != 'T' && p[10] != 't' && p[10] != ' ') {
    return false;
  }
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

// A whole token that is an RFC 3339 time with its offset (a container
// runtime's: "2026-01-01T00:00:00.123456789Z", "...+01:00"): ms since the
// epoch, or kNoTime (no offset, or anything after it).
inline int64_t rfc3339_utc_ms(std::string_view token) {
  Fields f;
  if (token.size() < 20 || !rfc3339_at(token, 0, f) || !f.has_offset || token[10] == ' ') return kNoTime;
  // rfc3339_end() checked the offset but not where it ends: it must end the token.
  const char last = token.back();
  if (last != 'Z' && last != 'z' && !is_digit(last)) return kNoTime;
  if (!settle_time(f)) return kNoTime;
  const int64_t local_s = local_seconds(f, f.year);
  if (local_s == kNoTime) return kNoTime;
  return (local_s - f.offset_s) * 1000 + f.ms;
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

// Basic ISO 8601 at s[i], where eight digits and 'T' are known to start:
// YYYYMMDDTHHMMSS, an optional fraction and offset ("20260101T190000Z",
// "20260101T190000.5+0100"), and no digit after it. Like epoch numbers it
// counts only at the very start of a line: it has no "HH:MM" for the search
// to skip ahead to, and looking for its 'T' as well made every line without a
// stamp (a stack trace line) 25 % slower.
inline bool iso_basic_at(std::string_view s, std::size_t i, Fields& f) {
  static constexpr Pattern8 kDate = pattern8("dddddddd");
  static constexpr Pattern8 kTime = pattern8("dTdddddd");
  if (s.size() - i < 15) return false;
  const char* p = s.data() + i;
  if ((mismatch(p, kDate) | mismatch(p + 7, kTime)) != 0) return false;
  auto num2 = [p](int k) { return (p[k] - '0') * 10 + (p[k + 1] - '0'); };
  f.year = num2(0) * 100 + num2(2);
  f.month = num2(4);
  f.day = num2(6);
  f.hour = num2(9);
  f.minute = num2(11);
  f.second = num2(13);
  return rfc3339_end(s, optional_fraction(s, i + 15, f), f);
}

// The JSON keys whose numbers are epoch times: "ts", "time", "timestamp",
// "@timestamp" and journald's "__REALTIME_TIMESTAMP" (microseconds, as a
// string). True when a key of these ends at s[close], its closing quote.
inline bool epoch_key_before(std::string_view s, std::size_t close) {
  static constexpr std::string_view kKeys[] = {"ts", "time", "timestamp", "@timestamp", "__REALTIME_TIMESTAMP"};
  for (std::string_view key : kKeys) {
    if (close >= key.size() + 1 && s[close - key.size() - 1] == '"' &&
        s.compare(close - key.size(), key.size(), key) == 0) {
      return true;
    }
  }
  return false;
}

// An epoch number of `digits` digits, value v, in ms: its digit count says
// the unit, 10 seconds (plus `ms`, from a fraction), 13 milliseconds, 16
// microseconds, 19 nanoseconds (a fraction after those is ignored); any other
// count is no epoch (kNoTime).
inline int64_t epoch_ms_by_digits(uint64_t v, std::size_t digits, int ms) {
  switch (digits) {
    case 10: return static_cast<int64_t>(v) * 1000 + ms;
    case 13: return static_cast<int64_t>(v);
    case 16: return static_cast<int64_t>(v / 1000);
    case 19: return static_cast<int64_t>(v / 1000000);
    default: return kNoTime;
  }
}

// A JSON field's text that is an epoch number: digits, optionally a '.' and
// a fraction, nothing else. Its magnitude says the unit: below 1e8 it is no
// time at all (a count or a duration, not a date after 1973), then seconds
// (the fraction gives ms) up to 1e11, milliseconds up to 1e14, microseconds
// up to 1e17, nanoseconds up to 1e20. Returns ms since the epoch, or kNoTime
// (also for text that is not such a number).
inline int64_t epoch_by_magnitude(std::string_view s) {
  std::size_t k = 0;
  while (k < s.size() && s[k] == '0') ++k;  // leading zeros do not count
  uint64_t v = 0;
  std::size_t digits = 0;
  for (; k < s.size() && is_digit(s[k]); ++k) {
    if (++digits > 20) return kNoTime;
    v = v * 10 + static_cast<uint64_t>(s[k] - '0');
  }
  if (k == 0) return kNoTime;
  int ms = 0;
  if (k < s.size()) {
    if (s[k] != '.' || k + 1 >= s.size() || !is_digit(s[k + 1])) return kNoTime;
    if (fraction(s, k + 1, ms) != s.size()) return kNoTime;
  }
  if (digits == 20 || v < 100'000'000ULL) return kNoTime;
  if (v < 100'000'000'000ULL) return static_cast<int64_t>(v) * 1000 + ms;
  if (v < 100'000'000'000'000ULL) return static_cast<int64_t>(v);
  if (v < 100'000'000'000'000'000ULL) return static_cast<int64_t>(v / 1000);
  return static_cast<int64_t>(v / 1'000'000);
}

// An epoch number in a JSON field at s[i..j), a run of digits, in a line that
// is a JSON object (its first byte is '{': the search looks for these only
// there, so that other lines do not pay for it): the value of one of the keys above ("ts":1767294000.5, "time" :
// "1767294000123"). Its digits say the unit: 10 seconds (with an optional fraction), 13 milliseconds, 16 microseconds,
// 19 nanoseconds (a fraction after those is ignored). A quoted number must end at its quote; a bare one at a byte that
// cannot go on a JSON number. Returns ms since the epoch, or kNoTime.
inline int64_t json_epoch_at(std::string_view s, std::size_t i, std::size_t j) {
  const std::size_t len = j - i;
  if (len != 10 && len != 13 && len != 16 && len != 19) return kNoTime;
  std::size_t k = i;
  const bool quoted = k > 0 && s[k - 1] == '"';
  if (quoted) --k;
  while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t')) --k;
  if (k == 0 || s[k - 1] != ':') return kNoTime;
  --k;
  while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == '\t')) --k;
  if (k < 2 || s[k - 1] != '"' || !epoch_key_before(s, k - 1)) return kNoTime;
  uint64_t v = 0;  // 19 digits fit
  for (std::size_t d = i; d < j; ++d) v = v * 10 + static_cast<uint64_t>(s[d] - '0');
  int ms = 0;
  std::size_t end = j;
  if (end + 1 < s.size() && s[end] == '.' && is_digit(s[end + 1])) end = fraction(s, end + 1, ms);
  if (quoted ? end >= s.size() || s[end] != '"' : end < s.size() && (s[end] == '.' || s[end] == 'e' || s[end] == 'E')) {
    return kNoTime;
  }
  return epoch_ms_by_digits(v, len, ms);
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
//
// With kJson (for a line that is a JSON object) a colon after a quote or a
// blank counts too, as if a clock started two bytes before it: a JSON key,
// whose epoch value comes after it ("ts":1, "ts" : 1). Finding one too many
// only makes the search look further. A template flag, so that other lines
// do not pay for it.
template <bool kJson = false>
inline std::size_t first_clock(std::string_view s) {
  const char* const b = s.data();
  const std::size_t n = s.size();
  if (n < 5) return kNpos;
  const std::size_t last = n - 3;       // the last colon with two bytes after it
  auto clock_at = [b](std::size_t k) {  // k: a colon, 2 <= k <= last
    if constexpr (kJson) {
      if (b[k - 1] == '"' || b[k - 1] == ' ' || b[k - 1] == '\t') return true;
    }
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
// (13); RFC 3339's "YYYY-MM-DDT" and "YYYY/MM/DD " take 11, syslog's
// "Mon  d " 7.
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
