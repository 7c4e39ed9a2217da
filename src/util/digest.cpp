#include "util/digest.h"

#include <cstdint>

#include <fmt/format.h>

namespace swthrottle {

namespace {

uint64_t fnv1a(std::string_view s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

std::string digest(std::string_view text) {
  return fmt::format("{:016x}{:016x}", fnv1a(text, 0xcbf29ce484222325ULL), fnv1a(text, 0x84222325cbf29ce4ULL));
}

}  // namespace swthrottle
