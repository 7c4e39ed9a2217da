#include "util/utf8.h"

#include <cstdint>
#include <cstring>

namespace swthrottle {

// The matcher's validator, kept as it was written for the hot path: it checks
// the length up front and branches on the lead byte once, which measured
// faster on non-ASCII text than a loop over utf8_sequence_length (that one
// has to find the maximal subpart too, which a yes/no answer never needs).
bool is_valid_utf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    if (n - i >= 8) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    const unsigned c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned lo = 0x80;  // allowed range of the second byte
    unsigned hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c == 0xE0) {
      len = 3;
      lo = 0xA0;  // below: overlong
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
      len = 3;
    } else if (c == 0xED) {
      len = 3;
      hi = 0x9F;  // above: surrogates
    } else if (c == 0xF0) {
      len = 4;
      lo = 0x90;  // below: overlong
    } else if (c >= 0xF1 && c <= 0xF3) {
      len = 4;
    } else if (c == 0xF4) {
      len = 4;
      hi = 0x8F;  // above: past U+10FFFF
    } else {
      return false;  // continuation byte without a lead, C0, C1, F5..FF
    }
    if (n - i < len || p[i + 1] < lo || p[i + 1] > hi) return false;
    for (std::size_t k = 2; k < len; ++k) {
      if (!is_utf8_continuation(p[i + k])) return false;
    }
    i += len;
  }
  return true;
}

}  // namespace swthrottle
