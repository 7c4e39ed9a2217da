// The byte-level readers every timestamp form is built from: digits,
// fractions, UTC offsets, month abbreviations, and eight bytes checked
// against a pattern at once. Header-only so that they inline into the form
// readers (stamp_forms.h) and the strptime subset (strptime_format.cpp).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace swthrottle::match::stamp {

constexpr std::size_t kNpos = std::string_view::npos;

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) {
  const char l = static_cast<char>(c | 0x20);
  return l >= 'a' && l <= 'z';
}
inline char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c | 0x20) : c; }

// Two digits at s[i], or -1.
inline int two_digits(std::string_view s, std::size_t i) {
  if (i + 2 > s.size() || !is_digit(s[i]) || !is_digit(s[i + 1])) return -1;
  return (s[i] - '0') * 10 + (s[i + 1] - '0');
}

// `width` digits at s[i], or -1.
inline int digits(std::string_view s, std::size_t i, std::size_t width) {
  if (i + width > s.size()) return -1;
  int v = 0;
  for (std::size_t k = i; k < i + width; ++k) {
    if (!is_digit(s[k])) return -1;
    v = v * 10 + (s[k] - '0');
  }
  return v;
}

// The digits of a fraction starting at s[i] (a digit): milliseconds, with
// digits past the third cut off. Returns the end of the digits.
[[gnu::always_inline]] inline std::size_t fraction(std::string_view s, std::size_t i, int& ms) {
  const std::size_t n = s.size();
  int v = s[i] - '0';
  std::size_t k = i + 1;
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
inline int month_abbr(std::string_view s, std::size_t i) {
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

enum class Offset { None, Bad, Ok };

// A UTC offset at s[i]: "Z", "+hh", "+hhmm" or "+hh:mm" (or '-'). None when
// nothing there looks like one; Bad when a sign and two digits start one that
// is out of range or runs on into more digits ("+25:00", "+02001").
[[gnu::always_inline]] inline Offset offset_at(std::string_view s, std::size_t i, int64_t& offset_s, std::size_t& end) {
  if (i >= s.size()) return Offset::None;
  const char c = s[i];
  if (c == 'Z' || c == 'z') {
    offset_s = 0;
    end = i + 1;
    return Offset::Ok;
  }
  if (c != '+' && c != '-') return Offset::None;
  const std::size_t n = s.size();
  const char* p = s.data();
  if (n - i < 3 || !is_digit(p[i + 1]) || !is_digit(p[i + 2])) return Offset::None;
  const int hh = (p[i + 1] - '0') * 10 + (p[i + 2] - '0');
  std::size_t j = i + 3;  // <= n
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

}  // namespace swthrottle::match::stamp
