#include "match/logtime.h"

#include <re2/re2.h>
#include <time.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <array>
#include <bit>
#include <climits>
#include <cstring>
#include <utility>

#include "util/civil_date.h"

namespace swthrottle::match {

namespace detail {

constexpr int kUnset = INT_MIN;

struct Fields {
  int year = kUnset;  // kUnset: infer (SPEC §4)
  int month = 0;      // 1..12; 0 = not given (then yday must be)
  int day = 0;
  int yday = 0;       // %j, used only without a month
  int hour = 0;
  int minute = 0;
  int second = 0;
  int ms = 0;
  bool hour12 = false;  // %I: hour is on a 12-hour clock
  bool pm = false;
  bool has_offset = false;
  int64_t offset_s = 0;
  bool has_epoch = false;  // %s: an absolute time; the other fields are ignored but ms
  int64_t epoch_s = 0;
};

}  // namespace detail

namespace {

using detail::FormatOp;
using detail::kUnset;
using Fields = detail::Fields;

constexpr int64_t kDayMs = 86'400'000;
constexpr size_t kNpos = std::string_view::npos;
// LogTime::kNoTime: a sentinel, not an optional, inside the parser (see parse() in the header).
constexpr int64_t kNoTime = INT64_MIN;

constexpr const char* kMonths[12] = {"January", "February", "March",     "April",   "May",      "June",
                                     "July",    "August",   "September", "October", "November", "December"};
constexpr const char* kWeekdays[7] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) {
  const char l = static_cast<char>(c | 0x20);
  return l >= 'a' && l <= 'z';
}
inline char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c | 0x20) : c; }

using civil::days_from_civil;
using civil::floor_div;

// Two digits at s[i], or -1.
inline int two_digits(std::string_view s, size_t i) {
  if (i + 2 > s.size() || !is_digit(s[i]) || !is_digit(s[i + 1])) return -1;
  return (s[i] - '0') * 10 + (s[i + 1] - '0');
}

// `width` digits at s[i], or -1.
inline int digits(std::string_view s, size_t i, size_t width) {
  if (i + width > s.size()) return -1;
  int v = 0;
  for (size_t k = i; k < i + width; ++k) {
    if (!is_digit(s[k])) return -1;
    v = v * 10 + (s[k] - '0');
  }
  return v;
}

// The digits of a fraction starting at s[i] (a digit): milliseconds, with
// digits past the third cut off. Returns the end of the digits.
[[gnu::always_inline]] inline size_t fraction(std::string_view s, size_t i, int& ms) {
  const size_t n = s.size();
  int v = s[i] - '0';
  size_t k = i + 1;
  if (k < n && is_digit(s[k])) {
    v = v * 10 + (s[k++] - '0');
    if (k < n && is_digit(s[k])) {
      v = v * 10 + (s[k++] - '0');
      while (k < n && is_digit(s[k])) ++k;
    } else {
      v *= 10;
    }
  } else {
    v *= 100;
  }
  ms = v;
  return k;
}

// Eight bytes against a pattern, a few instructions for all eight: 'd' is a
// digit, '*' any byte, another character itself.
struct Pattern8 {
  uint64_t literal_mask;
  uint64_t literal;
  uint64_t digit_mask;
};

consteval Pattern8 pattern8(const char (&text)[9]) {
  std::array<unsigned char, 8> literal_mask{}, literal{}, digit_mask{};
  for (int k = 0; k < 8; ++k) {
    if (text[k] == 'd') {
      digit_mask[k] = 0xFF;
    } else if (text[k] != '*') {
      literal_mask[k] = 0xFF;
      literal[k] = static_cast<unsigned char>(text[k]);
    }
  }
  // bit_cast keeps the byte order of memory, whatever the machine's.
  return {std::bit_cast<uint64_t>(literal_mask), std::bit_cast<uint64_t>(literal), std::bit_cast<uint64_t>(digit_mask)};
}

inline uint64_t load8(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Nonzero unless p[0..8) matches the pattern: the mismatches of several
// patterns can be or-ed and tested once.
inline uint64_t mismatch(const char* p, const Pattern8& pat) {
  constexpr uint64_t k30 = 0x3030303030303030u, kF0 = 0xF0F0F0F0F0F0F0F0u, k06 = 0x0606060606060606u;
  const uint64_t x = load8(p);
  // Non-digit positions become '0'. A byte is a digit when its high nibble
  // is 3 and adding 6 does not carry out of the low nibble (a carry that
  // crosses into the next byte needs a high nibble above 3 there, which
  // the first test catches).
  const uint64_t y = (x & pat.digit_mask) | (k30 & ~pat.digit_mask);
  return ((x & pat.literal_mask) ^ pat.literal) | ((y & kF0) ^ k30) | (((y + k06) & kF0) ^ k30);
}

constexpr uint32_t pack3(char a, char b, char c) {
  return static_cast<uint32_t>(static_cast<unsigned char>(a)) |
         static_cast<uint32_t>(static_cast<unsigned char>(b)) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(c)) << 16;
}

// "Jan".."Dec" exactly as syslog and CLF write them (title case) at s[i]: 1..12, or 0.
inline int month_abbr(std::string_view s, size_t i) {
  if (i + 3 > s.size()) return 0;
  switch (pack3(s[i], s[i + 1], s[i + 2])) {
    case pack3('J', 'a', 'n'): return 1;
    case pack3('F', 'e', 'b'): return 2;
    case pack3('M', 'a', 'r'): return 3;
    case pack3('A', 'p', 'r'): return 4;
    case pack3('M', 'a', 'y'): return 5;
    case pack3('J', 'u', 'n'): return 6;
    case pack3('J', 'u', 'l'): return 7;
    case pack3('A', 'u', 'g'): return 8;
    case pack3('S', 'e', 'p'): return 9;
    case pack3('O', 'c', 't'): return 10;
    case pack3('N', 'o', 'v'): return 11;
    case pack3('D', 'e', 'c'): return 12;
    default: return 0;
  }
}

// A full or three-letter English name at s[i], case-insensitive, the full name
// preferred: its index, advancing i; or -1.
int name_at(std::string_view s, size_t& i, const char* const* names, int count) {
  auto matches = [&](const char* name, size_t len) {
    if (i + len > s.size()) return false;
    for (size_t k = 0; k < len; ++k) {
      if (lower(s[i + k]) != lower(name[k])) return false;
    }
    return true;
  };
  for (int n = 0; n < count; ++n) {
    const size_t len = std::strlen(names[n]);
    if (matches(names[n], len)) {
      i += len;
      return n;
    }
  }
  for (int n = 0; n < count; ++n) {
    if (matches(names[n], 3)) {
      i += 3;
      return n;
    }
  }
  return -1;
}

enum class Offset { None, Bad, Ok };

// A UTC offset at s[i]: "Z", "+hh", "+hhmm" or "+hh:mm" (or '-'). None when
// nothing there looks like one; Bad when a sign and two digits start one that
// is out of range or runs on into more digits ("+25:00", "+02001").
[[gnu::always_inline]] inline Offset offset_at(std::string_view s, size_t i, int64_t& offset_s, size_t& end) {
  if (i >= s.size()) return Offset::None;
  const char c = s[i];
  if (c == 'Z' || c == 'z') {
    offset_s = 0;
    end = i + 1;
    return Offset::Ok;
  }
  if (c != '+' && c != '-') return Offset::None;
  const size_t n = s.size();
  const char* p = s.data();
  if (n - i < 3 || !is_digit(p[i + 1]) || !is_digit(p[i + 2])) return Offset::None;
  const int hh = (p[i + 1] - '0') * 10 + (p[i + 2] - '0');
  size_t j = i + 3;  // <= n
  int mm = 0;
  if (n - j >= 3 && p[j] == ':' && is_digit(p[j + 1]) && is_digit(p[j + 2])) {
    mm = (p[j + 1] - '0') * 10 + (p[j + 2] - '0');
    j += 3;
  } else if (n - j >= 2 && is_digit(p[j]) && is_digit(p[j + 1])) {
    mm = (p[j] - '0') * 10 + (p[j + 1] - '0');
    j += 2;
  }
  if (j < n && is_digit(p[j])) return Offset::Bad;
  if (hh > 23 || mm > 59) return Offset::Bad;
  offset_s = (c == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
  end = j;
  return Offset::Ok;
}

}  // namespace

namespace detail {

// The head of the last stamp of one form (its date and time of day, kLen
// bytes), an extra key, and kWords values derived from them, so that the
// next line with the same head skips its checks and the date arithmetic.
//
// A seqlock keeps parse() safe to call from several threads at once: a
// reader that overlaps a store sees the sequence number move and misses;
// of two threads that store at once, one gives up. (swthrottle gives each
// thread its own LogTime: the memo is shared only by whoever shares one.)
template <size_t kLen, size_t kWords>
class HeadMemo {
  static_assert(kLen >= 8 && kLen <= 24);
  // Three 8-byte words cover the head, overlapping when it is shorter than 24.
  static constexpr size_t kMid = kLen <= 16 ? kLen - 8 : 8;

 public:
  // The values stored with the kLen bytes at head and extra, if those are
  // what was stored last.
  bool find(const char* head, int64_t extra, int64_t (&values)[kWords]) const {
    const uint32_t seq = seq_.load(std::memory_order_acquire);
    // Acquire, so that the second load of seq_ cannot move above these.
    const uint64_t k0 = key_[0].load(std::memory_order_acquire);
    const uint64_t k1 = key_[1].load(std::memory_order_acquire);
    const uint64_t k2 = key_[2].load(std::memory_order_acquire);
    const int64_t e = extra_.load(std::memory_order_acquire);
    for (size_t w = 0; w < kWords; ++w) values[w] = values_[w].load(std::memory_order_acquire);
    if (seq == 0 || (seq & 1) != 0 || seq_.load(std::memory_order_relaxed) != seq) return false;
    return ((load8(head) ^ k0) | (load8(head + kMid) ^ k1) | (load8(head + kLen - 8) ^ k2) |
            static_cast<uint64_t>(extra ^ e)) == 0;
  }

  void store(const char* head, int64_t extra, const int64_t (&values)[kWords]) {
    uint32_t seq = seq_.load(std::memory_order_relaxed);
    if ((seq & 1) != 0 || !seq_.compare_exchange_strong(seq, seq + 1, std::memory_order_relaxed)) return;
    // Release, so that a reader that sees any of these sees the odd seq_.
    key_[0].store(load8(head), std::memory_order_release);
    key_[1].store(load8(head + kMid), std::memory_order_release);
    key_[2].store(load8(head + kLen - 8), std::memory_order_release);
    extra_.store(extra, std::memory_order_release);
    for (size_t w = 0; w < kWords; ++w) values_[w].store(values[w], std::memory_order_release);
    seq_.store(seq + 2, std::memory_order_release);
  }

 private:
  std::atomic<uint32_t> seq_{0};  // 0: nothing stored yet; odd: a store in progress
  std::atomic<uint64_t> key_[3]{};
  std::atomic<int64_t> extra_{0};
  std::atomic<int64_t> values_[kWords]{};
};

}  // namespace detail

// RFC 3339 and CLF stamps carry their year: the value is the head's local
// time in seconds * 2, + 1 for a leap second (:60). Syslog stamps do not:
// the extra key is wall_now_ms, and the values are a leap second flag and
// the local times in the two years finish() may choose (kNoTime: no such day).
struct LogTime::Memos {
  detail::HeadMemo<kRfc3339Head, 1> rfc3339;
  detail::HeadMemo<kClfHead, 1> clf;
  detail::HeadMemo<kSyslogHead, 3> syslog;
};

namespace {

// "HH:MM:SS" at s[i] into f; returns the end or kNpos.
inline size_t hms_at(std::string_view s, size_t i, Fields& f) {
  static constexpr Pattern8 kHms = pattern8("dd:dd:dd");
  if (i > s.size() || s.size() - i < 8 || mismatch(s.data() + i, kHms) != 0) return kNpos;
  const char* p = s.data() + i;
  f.hour = (p[0] - '0') * 10 + (p[1] - '0');
  f.minute = (p[3] - '0') * 10 + (p[4] - '0');
  f.second = (p[6] - '0') * 10 + (p[7] - '0');
  return i + 8;
}

// An optional ".123" / ",123" at s[i]; returns the end.
[[gnu::always_inline]] inline size_t optional_fraction(std::string_view s, size_t i, Fields& f) {
  if (i + 1 < s.size() && (s[i] == '.' || s[i] == ',') && is_digit(s[i + 1])) return fraction(s, i + 1, f.ms);
  return i;
}

// What may follow the time of an RFC 3339 stamp at s[j] (after the fraction,
// if there are seconds): not a digit; an offset, if any, valid.
[[gnu::always_inline]] inline bool rfc3339_end(std::string_view s, size_t j, Fields& f) {
  if (j < s.size() && is_digit(s[j])) return false;
  size_t end = j;
  switch (offset_at(s, j, f.offset_s, end)) {
    case Offset::Bad: return false;
    case Offset::Ok: f.has_offset = true; break;
    case Offset::None: break;
  }
  return true;
}

// RFC 3339 / ISO 8601 at s[i], where four digits and '-' are known to start:
// YYYY-MM-DD('T'|'t'|' ')HH:MM[:SS[(.|,)frac]][Z|+hh[[:]mm]].
[[gnu::always_inline]] inline bool rfc3339_at(std::string_view s, size_t i, Fields& f) {
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
  const size_t j = i + 16;
  if (j < s.size() && s[j] == ':') {
    f.second = two_digits(s, j + 1);
    if (f.second < 0) return false;
    return rfc3339_end(s, optional_fraction(s, j + 3, f), f);
  }
  return rfc3339_end(s, j, f);
}

// What may follow the time of a syslog stamp at s[j]: a fraction, then " YYYY"
// and a space, tab, ']' or ')' (into f.year); or no digit.
[[gnu::always_inline]] inline bool syslog_end(std::string_view s, size_t j, Fields& f) {
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
[[gnu::always_inline]] inline bool syslog_at(std::string_view s, size_t i, Fields& f) {
  f.month = month_abbr(s, i);
  size_t j = i + 3;
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
[[gnu::always_inline]] inline bool clf_end(std::string_view s, size_t j, Fields& f) {
  if (j < s.size() && s[j] == ' ') {
    size_t end = j;
    if (offset_at(s, j + 1, f.offset_s, end) != Offset::Ok) return false;
    f.has_offset = true;
    j = end;
  }
  return j < s.size() && s[j] == ']';
}

// Common log format at s[i] == '[': "[dd/Mon/yyyy:HH:MM:SS +zzzz]" (the
// offset may be left out).
[[gnu::always_inline]] inline bool clf_at(std::string_view s, size_t i, Fields& f) {
  static constexpr Pattern8 kDayMonth = pattern8("[dd/***/");
  static constexpr Pattern8 kYear = pattern8("dddd:***");
  if (s.size() - i < 21) return false;
  const char* p = s.data() + i;
  if ((mismatch(p, kDayMonth) | mismatch(p + 8, kYear)) != 0) return false;
  f.month = month_abbr(s, i + 4);
  if (f.month == 0) return false;
  f.day = (p[1] - '0') * 10 + (p[2] - '0');
  f.year = ((p[8] - '0') * 10 + (p[9] - '0')) * 100 + (p[10] - '0') * 10 + (p[11] - '0');
  const size_t j = hms_at(s, i + 13, f);
  if (j == kNpos) return false;
  return clf_end(s, j, f);
}

// Epoch seconds (10 digits, optional ".frac") or milliseconds (13 digits) at
// the very start of s, not followed by another digit.
int64_t epoch_at_start(std::string_view s) {
  size_t k = 0;
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
size_t first_clock(std::string_view s) {
  const char* const b = s.data();
  const size_t n = s.size();
  if (n < 5) return kNpos;
  const size_t last = n - 3;  // the last colon with two bytes after it
  auto clock_at = [b](size_t k) {  // k: a colon, 2 <= k <= last
    return is_digit(b[k - 2]) && is_digit(b[k - 1]) && is_digit(b[k + 1]) && is_digit(b[k + 2]);
  };
#if defined(__SSE2__)
  // Sixteen bytes at a time, the last block overlapping the one before: a
  // call of memchr() per colon cost more than the rest of a line without a
  // stamp (a stack trace line).
  if (n >= 18) {
    const __m128i colon = _mm_set1_epi8(':');
    auto colons = [&](size_t at) {
      return static_cast<unsigned>(
          _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + at)), colon)));
    };
    for (size_t at = 2;; at += 16) {
      const bool tail = at + 16 >= n;
      if (tail) at = n - 16;
      // The tail block sees some colons again: they fail again.
      for (unsigned mask = colons(at); mask != 0; mask &= mask - 1) {
        const size_t k = at + static_cast<size_t>(std::countr_zero(mask));
        if (k <= last && clock_at(k)) return k - 2;
      }
      if (tail) return kNpos;
    }
  }
#endif
  for (size_t k = 2; k <= last; ++k) {
    const void* hit = std::memchr(b + k, ':', last + 1 - k);
    if (hit == nullptr) return kNpos;
    k = static_cast<size_t>(static_cast<const char*>(hit) - b);
    if (clock_at(k)) return k - 2;
  }
  return kNpos;
}

// The most bytes from a stamp's first byte to its HH: CLF's "[dd/Mon/yyyy:"
// (13); RFC 3339's "YYYY-MM-DDT" takes 11, syslog's "Mon  d " 7.
constexpr size_t kMaxLead = 13;

// The time of day checked and settled (12-hour clock, leap second). False:
// no such time.
inline bool settle_time(Fields& f) {
  if (f.hour12) f.hour = f.hour % 12 + (f.pm ? 12 : 0);
  if (f.hour > 23 || f.minute > 59 || f.second > 60) return false;
  if (f.second == 60) {
    // A leap second: :59.999 keeps it after :59 and before the next minute.
    f.second = 59;
    f.ms = 999;
  }
  return true;
}

// The date and time of f in `year` as seconds since the epoch as if in UTC,
// or kNoTime when that date does not exist.
inline int64_t local_seconds(const Fields& f, int year) {
  int month = f.month;
  int day = f.day;
  if (month == 0) {
    if (f.yday < 1 || f.yday > (civil::is_leap(year) ? 366 : 365)) return kNoTime;
    const civil::Date c = civil::civil_from_days(days_from_civil(year, 1, 1) + f.yday - 1);
    month = static_cast<int>(c.month);
    day = static_cast<int>(c.day);
  }
  if (month < 1 || month > 12 || day < 1 || day > static_cast<int>(civil::days_in_month(year, static_cast<unsigned>(month)))) {
    return kNoTime;
  }
  return days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 + f.hour * 3600 +
         f.minute * 60 + f.second;
}

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

// Reads 1..width digits at s[i] after optional spaces (as strptime does).
bool number_at(std::string_view s, size_t& i, size_t width, int& v) {
  while (i < s.size() && s[i] == ' ') ++i;
  const size_t start = i;
  v = 0;
  while (i < s.size() && i - start < width && is_digit(s[i])) v = v * 10 + (s[i++] - '0');
  return i > start;
}

bool is_named_form(std::string_view f) {
  return f == "auto" || f == "rfc3339" || f == "syslog" || f == "epoch" || f == "clf";
}

}  // namespace

LogTime::ZoneCache::ZoneCache() {
  for (auto& slot : slots) slot.store(static_cast<uint32_t>(INT32_MIN), std::memory_order_relaxed);
}

LogTime::LogTime(LogTime&&) noexcept = default;
LogTime& LogTime::operator=(LogTime&&) noexcept = default;
LogTime::~LogTime() = default;

LogTime::LogTime(const LogTime& other)
    : kind_(other.kind_),
      ops_(other.ops_),
      match_(other.match_),
      local_(other.local_),
      offset_s_(other.offset_s_),
      year_(other.year_),
      from_local_(std::make_unique<ZoneCache>()),
      from_utc_(std::make_unique<ZoneCache>()),
      memos_(std::make_unique<Memos>()) {
  std::string ignored;
  compile_match(&ignored);  // cannot fail: the pattern compiled before
}

LogTime& LogTime::operator=(const LogTime& other) {
  if (this != &other) *this = LogTime(other);
  return *this;
}

bool LogTime::compile_match(std::string* error) {
  re_.reset();
  if (match_.empty()) return true;
  RE2::Options options;
  options.set_log_errors(false);
  re_ = std::make_unique<RE2>(match_, options);
  if (!re_->ok()) {
    *error = re_->error();
    return false;
  }
  return true;
}

Result<LogTime> LogTime::make(const config::TimestampSpec& spec, const config::TimezoneSpec& tz, int year) {
  LogTime lt;
  lt.local_ = tz.local;
  lt.offset_s_ = static_cast<int64_t>(tz.offset_minutes) * 60;
  lt.year_ = year;
  lt.from_local_ = std::make_unique<ZoneCache>();
  lt.from_utc_ = std::make_unique<ZoneCache>();
  lt.memos_ = std::make_unique<Memos>();

  using Form = config::TimestampSpec::Form;
  Form form = spec.form;
  // `format = "syslog"` next to `match` names a form, not a strptime format.
  if (form == Form::Strptime && is_named_form(spec.format)) {
    form = spec.format == "rfc3339" ? Form::Rfc3339
           : spec.format == "syslog" ? Form::Syslog
           : spec.format == "epoch"  ? Form::Epoch
           : spec.format == "clf"    ? Form::Clf
                                     : Form::Auto;
  }
  switch (form) {
    case Form::Auto: lt.kind_ = Kind::Auto; break;
    case Form::Rfc3339: lt.kind_ = Kind::Rfc3339; break;
    case Form::Syslog: lt.kind_ = Kind::Syslog; break;
    case Form::Epoch: lt.kind_ = Kind::Epoch; break;
    case Form::Clf: lt.kind_ = Kind::Clf; break;
    case Form::Strptime: lt.kind_ = Kind::Strptime; break;
  }

  if (lt.kind_ == Kind::Strptime) {
    const std::string& fmt = spec.format;
    auto bad = [&](const std::string& why) {
      return Error{.file = {}, .line = 0, .col = 0, .what = "invalid timestamp format \"" + fmt + "\": " + why};
    };
    auto add = [&](char code, char literal = 0) {
      if (code == ' ' && !lt.ops_.empty() && lt.ops_.back().code == ' ') return;
      lt.ops_.push_back(FormatOp{code, literal});
    };
    bool day = false, month = false, yday = false, epoch = false;
    for (size_t i = 0; i < fmt.size(); ++i) {
      const char c = fmt[i];
      if (c == ' ' || c == '\t' || c == '\n') {
        add(' ');
        continue;
      }
      if (c != '%') {
        add('L', c);
        continue;
      }
      if (++i == fmt.size()) return bad("it ends with a lone %");
      const char d = fmt[i];
      switch (d) {
        case 'Y': case 'y': case 'H': case 'I': case 'M': case 'S': case 'f':
        case 'a': case 'A': case 'z': case 'Z': case 'p':
          add(d);
          break;
        case 'm': case 'b': case 'B': case 'h':
          add(d == 'm' ? 'm' : 'b');
          month = true;
          break;
        case 'd': case 'e':
          add('d');
          day = true;
          break;
        case 'j': add('j'); yday = true; break;
        case 's': add('s'); epoch = true; break;
        case 'T': add('H'); add('L', ':'); add('M'); add('L', ':'); add('S'); break;
        case 'R': add('H'); add('L', ':'); add('M'); break;
        case 'D': add('m'); add('L', '/'); add('d'); add('L', '/'); add('y'); day = month = true; break;
        case 'F': add('Y'); add('L', '-'); add('m'); add('L', '-'); add('d'); day = month = true; break;
        case 'n': case 't': add(' '); break;
        case '%': add('L', '%'); break;
        default:
          return bad(std::string("unsupported conversion %") + d +
                     " (supported: %Y %y %m %d %e %j %H %I %M %S %f %p %b %h %B %a %A %z %Z %s %T %R %D %F %n %t %%)");
      }
    }
    if (!(day && month) && !yday && !epoch) {
      return bad("it has no date (it needs %d with %m or %b, or %F, %D, %j or %s)");
    }
  }

  lt.match_ = spec.match;
  std::string re_error;
  if (!lt.compile_match(&re_error)) {
    return Error{.file = {}, .line = 0, .col = 0, .what = "invalid timestamp match '" + spec.match + "': " + re_error};
  }
  if (lt.re_ && lt.re_->NumberOfCapturingGroups() < 1) {
    return Error{.file = {},
                 .line = 0,
                 .col = 0,
                 .what = "timestamp match '" + spec.match + "' has no capture group: put the timestamp in ( )"};
  }
  return lt;
}

int64_t LogTime::parse_ms(std::string_view line, int64_t wall_now_ms) const {
  std::string_view text = line;
  if (re_) {
    re2::StringPiece groups[2];
    if (!re_->Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), RE2::UNANCHORED, groups, 2) ||
        groups[1].data() == nullptr) {
      return kNoTime;
    }
    text = std::string_view(groups[1].data(), groups[1].size());
  }
  if (kind_ != Kind::Strptime) return search(text, wall_now_ms);
  Fields f;
  if (!run_format(text, f)) return kNoTime;
  return finish(f, wall_now_ms);
}

// Leftmost first. Only the bytes that can start a stamp are looked at: the
// first digit of a run (RFC 3339 needs exactly four, then '-'), the first
// letter of a word (syslog needs a three-letter month), and '['.
//
// The token at the start of the line is tried first, as most stamps are
// there. Past it the scan skips to kMaxLead bytes before the first "dd:dd"
// (see first_clock): a stamp that starts further left would have its HH:MM
// further left. The scan must resume where the full scan would be, on the
// first byte of a token, so it backs up over a run of digits or letters it
// lands in; every token it passes over that way starts too early to be a stamp.
int64_t LogTime::search(std::string_view s, int64_t wall_now_ms) const {
  const bool any = kind_ == Kind::Auto;
  const size_t n = s.size();
  // The commonest line of all: the same RFC 3339 head at the start as the
  // line before. Its '-' at s[4] rules out epoch, and the scan would start
  // with it. If what follows the head does not make a stamp, the scan below
  // looks at it again, in its turn.
  if ((any || kind_ == Kind::Rfc3339) && n >= kRfc3339Head && s[4] == '-') {
    if (int64_t head[1]; memos_->rfc3339.find(s.data(), 0, head)) {
      if (const int64_t t = rfc3339_after_head(s, 0, head[0]); t != kNoTime) return t;
    }
  }
  if (any || kind_ == Kind::Epoch) {
    // Epoch needs ten digits or more: most lines are turned away by the first eight.
    static constexpr Pattern8 kDigits = pattern8("dddddddd");
    if (n >= 10 && mismatch(s.data(), kDigits) == 0) {
      if (const int64_t t = epoch_at_start(s); t != kNoTime) return t;
    }
    if (!any) return kNoTime;
  }
  const bool rfc = any || kind_ == Kind::Rfc3339;
  const bool syslog = any || kind_ == Kind::Syslog;
  const bool clf = any || kind_ == Kind::Clf;
  bool skipped = false;
  size_t i = 0;
  while (i < n) {
    switch (kByteClass[static_cast<unsigned char>(s[i])]) {
      case kNothing:
        ++i;
        break;
      case kDigit: {
        size_t j = i + 1;
        while (j < n && is_digit(s[j])) ++j;
        if (rfc && j - i == 4 && j < n && s[j] == '-') {
          if (const int64_t t = rfc3339_time(s, i); t != kNoTime) return t;
        }
        i = j;
        break;
      }
      case kLetter: {
        size_t j = i + 1;
        while (j < n && is_alpha(s[j])) ++j;
        if (syslog && j - i == 3) {
          if (const int64_t t = syslog_time(s, i, wall_now_ms); t != kNoTime) return t;
        }
        i = j;
        break;
      }
      case kBracket: {
        if (clf) {
          if (const int64_t t = clf_time(s, i); t != kNoTime) return t;
        }
        ++i;
        break;
      }
    }
    if (!skipped) {
      skipped = true;
      const size_t clock = first_clock(s);
      if (clock == kNpos) return kNoTime;
      size_t start = clock > kMaxLead ? clock - kMaxLead : 0;
      const uint8_t cls = kByteClass[static_cast<unsigned char>(s[start])];
      if (cls == kDigit || cls == kLetter) {
        while (start > 0 && kByteClass[static_cast<unsigned char>(s[start - 1])] == cls) --start;
      }
      if (start > i) i = start;
    }
  }
  return kNoTime;
}

// One candidate each, out of line: inlined into the scan, they crowded its
// registers and slowed the lines without a stamp. Each first asks its memo
// whether the head is the last one seen (then only what follows the head is
// read, as always), else parses and validates it all and stores the head.

int64_t LogTime::rfc3339_time(std::string_view s, size_t i) const {
  int64_t head[1];
  if (s.size() - i >= kRfc3339Head && memos_->rfc3339.find(s.data() + i, 0, head)) {
    return rfc3339_after_head(s, i, head[0]);
  }
  Fields f;
  if (!rfc3339_at(s, i, f)) return kNoTime;
  // Without seconds the head is shorter than the memo's.
  return remember(f, s.size() - i > 16 && s[i + 16] == ':' ? &memos_->rfc3339 : nullptr, s.data() + i);
}

// The RFC 3339 stamp at s[i] whose head the memo gave.
[[gnu::always_inline]] inline int64_t LogTime::rfc3339_after_head(std::string_view s, size_t i, int64_t head) const {
  Fields f;
  if (!rfc3339_end(s, optional_fraction(s, i + kRfc3339Head, f), f)) return kNoTime;
  return from_head(head, f);
}

int64_t LogTime::clf_time(std::string_view s, size_t i) const {
  int64_t head[1];
  if (s.size() - i >= kClfHead && memos_->clf.find(s.data() + i, 0, head)) {
    Fields f;
    if (!clf_end(s, i + kClfHead, f)) return kNoTime;
    return from_head(head[0], f);
  }
  Fields f;
  if (!clf_at(s, i, f)) return kNoTime;
  return remember(f, &memos_->clf, s.data() + i);
}

// finish() for a stamp with its year, storing its head in memo (if any).
template <typename Memo>
int64_t LogTime::remember(Fields& f, Memo* memo, const char* head) const {
  const bool leap = f.second == 60;
  if (!settle_time(f)) return kNoTime;
  const int64_t local_s = local_seconds(f, f.year);
  if (local_s == kNoTime) return kNoTime;
  if (memo != nullptr) memo->store(head, 0, {local_s * 2 + leap});
  return utc_ms(local_s, f);
}

// A head from the memo and the rest of its stamp in f.
int64_t LogTime::from_head(int64_t head, Fields& f) const {
  if ((head & 1) != 0) f.ms = 999;
  return utc_ms(head >> 1, f);
}

int64_t LogTime::syslog_time(std::string_view s, size_t i, int64_t wall_now_ms) const {
  // With settings.year, now does not matter.
  const int64_t now_key = year_ != 0 ? 0 : wall_now_ms;
  int64_t memo[3];
  if (s.size() - i >= kSyslogHead && memos_->syslog.find(s.data() + i, now_key, memo)) {
    Fields f;
    if (!syslog_end(s, i + kSyslogHead, f)) return kNoTime;
    // A year in the line ("Dec 04 04:47:44 2005") is left to the slow path.
    if (f.year == kUnset) {
      if (memo[0] != 0) f.ms = 999;
      return syslog_year(memo, f, wall_now_ms);
    }
  }
  Fields f;
  if (!syslog_at(s, i, f)) return kNoTime;
  // The head is "Mon dd HH:MM:SS" or "Mon  d HH:MM:SS"; "Mon d HH:MM:SS" is shorter.
  if (f.year != kUnset || (s[i + 4] != ' ' && !is_digit(s[i + 5]))) return finish(f, wall_now_ms);
  // finish(), keeping the local times for the memo.
  const bool leap = f.second == 60;
  if (!settle_time(f)) return kNoTime;
  const int y = year_ != 0 ? year_ : zone_year(wall_now_ms);
  const int64_t stored[3] = {leap, local_seconds(f, y), year_ != 0 ? kNoTime : local_seconds(f, y - 1)};
  memos_->syslog.store(s.data() + i, now_key, stored);
  return syslog_year(stored, f, wall_now_ms);
}

// finish()'s choice of the year for a syslog stamp, from the local times in
// the year it takes first and the year before.
int64_t LogTime::syslog_year(const int64_t (&local_s)[3], const Fields& f, int64_t wall_now_ms) const {
  if (local_s[1] != kNoTime) {
    const int64_t t = utc_ms(local_s[1], f);
    if (year_ != 0 || t <= wall_now_ms + kDayMs) return t;
  } else if (year_ != 0) {
    return kNoTime;
  }
  return local_s[2] == kNoTime ? kNoTime : utc_ms(local_s[2], f);
}

bool LogTime::run_format(std::string_view s, Fields& f) const {
  size_t i = 0;
  for (const FormatOp& op : ops_) {
    int v = 0;
    switch (op.code) {
      case ' ':
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
        break;
      case 'L':
        if (i >= s.size() || s[i] != op.literal) return false;
        ++i;
        break;
      case 'Y':
        if (!number_at(s, i, 4, f.year)) return false;
        break;
      case 'y':
        if (!number_at(s, i, 2, v)) return false;
        f.year = v < 69 ? 2000 + v : 1900 + v;  // POSIX: 69-99 are 19xx
        break;
      case 'm':
        if (!number_at(s, i, 2, f.month) || f.month == 0) return false;
        break;
      case 'd':
        if (!number_at(s, i, 2, f.day)) return false;
        break;
      case 'j':
        if (!number_at(s, i, 3, f.yday) || f.yday == 0) return false;
        break;
      case 'H':
        if (!number_at(s, i, 2, f.hour)) return false;
        f.hour12 = false;
        break;
      case 'I':
        if (!number_at(s, i, 2, f.hour) || f.hour < 1 || f.hour > 12) return false;
        f.hour12 = true;
        break;
      case 'M':
        if (!number_at(s, i, 2, f.minute)) return false;
        break;
      case 'S':
        if (!number_at(s, i, 2, f.second)) return false;
        break;
      case 'f':
        if (i >= s.size() || !is_digit(s[i])) return false;
        i = fraction(s, i, f.ms);
        break;
      case 'b':
        f.month = name_at(s, i, kMonths, 12) + 1;
        if (f.month == 0) return false;
        break;
      case 'a':
      case 'A':
        if (name_at(s, i, kWeekdays, 7) < 0) return false;
        break;
      case 'p':
        if (i + 2 > s.size() || lower(s[i + 1]) != 'm' || (lower(s[i]) != 'a' && lower(s[i]) != 'p')) return false;
        f.pm = lower(s[i]) == 'p';
        i += 2;
        break;
      case 'z': {
        size_t end = i;
        if (offset_at(s, i, f.offset_s, end) != Offset::Ok) return false;
        f.has_offset = true;
        i = end;
        break;
      }
      case 'Z': {
        // Like glibc, a zone name is read and ignored, but names that mean
        // UTC are honoured: other abbreviations are ambiguous ("IST").
        const size_t start = i;
        while (i < s.size() && is_alpha(s[i])) ++i;
        const std::string_view name = s.substr(start, i - start);
        if (name.empty()) return false;
        if (name == "UTC" || name == "GMT" || name == "UT" || name == "Z") {
          f.has_offset = true;
          f.offset_s = 0;
        }
        break;
      }
      case 's': {
        const size_t start = i;
        int64_t e = 0;
        while (i < s.size() && i - start < 12 && is_digit(s[i])) e = e * 10 + (s[i++] - '0');
        if (i == start) return false;
        f.has_epoch = true;
        f.epoch_s = e;
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

// Validates the fields and fills in what the stamp does not say: the year
// (SPEC §4) and the zone.
[[gnu::always_inline]] inline int64_t LogTime::finish(Fields& f, int64_t wall_now_ms) const {
  if (f.has_epoch) return f.epoch_s * 1000 + f.ms;
  if (!settle_time(f)) return kNoTime;
  if (f.year != kUnset) return to_utc_ms(f, f.year);
  if (year_ != 0) return to_utc_ms(f, year_);
  const int y = zone_year(wall_now_ms);
  if (const int64_t t = to_utc_ms(f, y); t != kNoTime && t <= wall_now_ms + kDayMs) return t;
  return to_utc_ms(f, y - 1);
}

[[gnu::always_inline]] inline int64_t LogTime::to_utc_ms(const Fields& f, int year) const {
  const int64_t local_s = local_seconds(f, year);
  if (local_s == kNoTime) return kNoTime;
  return utc_ms(local_s, f);
}

// The local time of a stamp in the configured zone (or its own offset).
[[gnu::always_inline]] inline int64_t LogTime::utc_ms(int64_t local_s, const Fields& f) const {
  const int64_t offset_s = f.has_offset ? f.offset_s : local_ ? offset_of_local(local_s) : offset_s_;
  return (local_s - offset_s) * 1000 + f.ms;
}

int LogTime::zone_year(int64_t wall_now_ms) const {
  const int64_t utc_s = floor_div(wall_now_ms, 1000);
  const int64_t local_s = utc_s + (local_ ? offset_of_utc(utc_s) : offset_s_);
  return static_cast<int>(civil::civil_from_days(floor_div(local_s, 86400)).year);
}

namespace {

// Every zone in use since the 1970s changes its offset only on a quarter hour
// (of local time and of UTC), so the offset at the start of a quarter hour
// holds for all of it. Keys beyond int32 (years past ±60000) skip the cache.
template <typename Compute>
int64_t cached_offset(std::array<std::atomic<uint64_t>, 64>& slots, int64_t s, Compute compute) {
  const int64_t key = floor_div(s, 900);
  if (key < INT32_MIN || key > INT32_MAX) return compute(s);
  std::atomic<uint64_t>& slot = slots[static_cast<uint32_t>(key) % slots.size()];
  const uint64_t packed = slot.load(std::memory_order_relaxed);
  const auto cached = static_cast<int32_t>(static_cast<uint32_t>(packed));
  if (static_cast<int32_t>(packed >> 32) == key && cached != INT32_MIN) return cached;
  const int64_t offset = compute(key * 900);
  slot.store((static_cast<uint64_t>(static_cast<uint32_t>(key)) << 32) | static_cast<uint32_t>(offset),
             std::memory_order_relaxed);
  return offset;
}

int64_t gmtoff_at(int64_t utc_s) {
  const time_t t = static_cast<time_t>(utc_s);
  struct tm tm {};
  if (localtime_r(&t, &tm) == nullptr) return 0;
  return tm.tm_gmtoff;
}

}  // namespace

int64_t LogTime::offset_of_local(int64_t local_s) const {
  return cached_offset(from_local_->slots, local_s, [](int64_t s) -> int64_t {
    const civil::Date c = civil::civil_from_days(floor_div(s, 86400));
    const int64_t sod = s - floor_div(s, 86400) * 86400;
    struct tm tm {};
    tm.tm_year = static_cast<int>(c.year - 1900);
    tm.tm_mon = static_cast<int>(c.month) - 1;
    tm.tm_mday = static_cast<int>(c.day);
    tm.tm_hour = static_cast<int>(sod / 3600);
    tm.tm_min = static_cast<int>(sod / 60 % 60);
    tm.tm_sec = static_cast<int>(sod % 60);
    tm.tm_isdst = -1;  // let the zone rules decide
    const time_t t = mktime(&tm);
    // -1 is also a valid time, but not for a whole quarter hour in any real zone.
    if (t == static_cast<time_t>(-1)) return gmtoff_at(s);
    return s - static_cast<int64_t>(t);
  });
}

int64_t LogTime::offset_of_utc(int64_t utc_s) const { return cached_offset(from_utc_->slots, utc_s, gmtoff_at); }

}  // namespace swthrottle::match
