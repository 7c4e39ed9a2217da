// NewlineScan: the "\n"s of a run of bytes, in order, 64 bytes at a time.
//
// A batch splits thousands of ~120-byte lines; memchr per line pays its
// setup for every line. This compares 64 bytes at once into a bit mask (as
// simdjson finds its structural characters) and hands out one "\n" per set
// bit, so a line costs a bit scan. The tail shorter than 64 bytes goes to
// memchr. Without SSE2 (not x86-64), memchr does it all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace swthrottle::input {

class NewlineScan {
 public:
  // The "\n"s in [from, limit).
  NewlineScan(const char* from, const char* limit) : next_(from), limit_(limit) {}

  // The next "\n" at or after `from` (which must not go back, and must be
  // past the last one returned), or nullptr when none is left before limit.
  const char* find(const char* from) {
#if defined(__SSE2__)
    // Bits of the current block below `from` belong to lines already taken.
    if (from >= next_) {
      mask_ = 0;
      next_ = from;
    } else if (mask_ != 0) {
      const auto skip = static_cast<unsigned>(from - (next_ - 64));
      mask_ &= skip >= 64 ? 0 : ~uint64_t{0} << skip;
    }
    while (mask_ == 0) {
      if (limit_ - next_ < 64) {
        if (next_ >= limit_) return nullptr;
        const void* nl = std::memchr(next_, '\n', static_cast<std::size_t>(limit_ - next_));
        if (nl == nullptr) {
          next_ = limit_;
          return nullptr;
        }
        next_ = static_cast<const char*>(nl) + 1;
        return static_cast<const char*>(nl);
      }
      mask_ = block_mask(next_);
      next_ += 64;
    }
    const char* nl = next_ - 64 + __builtin_ctzll(mask_);
    mask_ &= mask_ - 1;
    return nl;
#else
    if (from >= limit_) return nullptr;
    return static_cast<const char*>(std::memchr(from, '\n', static_cast<std::size_t>(limit_ - from)));
#endif
  }

 private:
#if defined(__SSE2__)
  static uint64_t block_mask(const char* p) {
    const __m128i nl = _mm_set1_epi8('\n');
    uint64_t m = 0;
    for (int i = 0; i < 4; ++i) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
      m |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)))) << (16 * i);
    }
    return m;
  }
  uint64_t mask_ = 0;  // "\n"s not yet returned in the 64 bytes before next_
#endif
  const char* next_;  // where the next block (or the memchr tail) starts
  const char* limit_;
};

}  // namespace swthrottle::input
