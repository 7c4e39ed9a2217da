// value_hash: the 64-bit hash a rule keeps of a rendered value (`distinct`,
// `new`) instead of the value itself. Stable on every host and build, so a
// --state file means the same to the run that loads it.
//
// FNV-1a over the bytes, then MurmurHash3's 64-bit finalizer, so that every
// output bit depends on every input bit: HyperLogLog
// (window/hyperloglog.h) takes the top 12 bits as a register and counts the
// leading zeros of the rest, and FNV-1a alone leaves its top bits weak for
// short, similar texts ("10.0.0.1", "10.0.0.2"). Two values share a hash
// with a chance of about 2^-64 per pair. Not a security boundary: anyone can
// make two texts with one hash.
#pragma once

#include <cstdint>
#include <string_view>

namespace swthrottle {

namespace detail {

inline constexpr uint64_t kFnvOffset = 0xcbf29ce484222325u;
inline constexpr uint64_t kFnvPrime = 0x100000001b3u;

constexpr uint64_t fnv1a(uint64_t h, std::string_view s) {
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= kFnvPrime;
  }
  return h;
}

constexpr uint64_t finalize(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdu;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53u;
  h ^= h >> 33;
  return h;
}

}  // namespace detail

constexpr uint64_t value_hash(std::string_view value) {
  return detail::finalize(detail::fnv1a(detail::kFnvOffset, value));
}

// A value of one key: the key's length goes in first, so that no key and
// value pair hashes as another one split elsewhere ("a|b" + "c", "a" + "b|c").
constexpr uint64_t value_hash(std::string_view key, std::string_view value) {
  uint64_t h = detail::kFnvOffset;
  for (uint64_t n = key.size(), i = 0; i < 8; ++i, n >>= 8) {
    h ^= n & 0xff;
    h *= detail::kFnvPrime;
  }
  return detail::finalize(detail::fnv1a(detail::fnv1a(h, key), value));
}

}  // namespace swthrottle
