// UTF-8 well-formedness: the one definition every part of swthrottle uses
// (the matcher's choice of readings, the JSON repair, the state file's choice
// between a string and base64), so that they can never disagree about a byte.
//
// Well-formed means RFC 3629 / Unicode Table 3-7: no overlong forms, no
// surrogates (U+D800-U+DFFF), nothing above U+10FFFF. This is also exactly
// what nlohmann-json accepts inside a string, so text that passes
// is_valid_utf8 can be written as a JSON string and read back as the same bytes.
#pragma once

#include <cstddef>
#include <string_view>

namespace swthrottle {

// A byte 10xxxxxx: never the first byte of a character.
constexpr bool is_utf8_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the well-formed sequence that starts at the non-ASCII byte *p
// (2..4), or minus the length of its maximal subpart (-1..-3) when it is not
// well-formed: the bytes a decoder replaces with one U+FFFD (Unicode §3.9).
// p < end. The lead byte fixes the allowed range of the first continuation
// byte; that is what rules out overlongs (E0 80..9F, F0 80..8F), surrogates
// (ED A0..BF) and code points above U+10FFFF (F4 90..BF).
inline int utf8_sequence_length(const unsigned char* p, const unsigned char* end) {
  const unsigned char c = p[0];
  int need;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return -1;  // 80..C1 (continuation or overlong lead), F5..FF
  }
  for (int i = 1; i <= need; ++i) {
    if (p + i == end || p[i] < lo || p[i] > hi) return -i;
    lo = 0x80;
    hi = 0xBF;
  }
  return need + 1;
}

// Whether all of `text` is well-formed UTF-8. On the matcher's hot path (once
// per line that is not pure ASCII): ASCII goes 8 bytes per step.
bool is_valid_utf8(std::string_view text);

}  // namespace swthrottle
