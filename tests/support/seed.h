// Seeds for randomized tests: fixed by default so CI is repeatable;
// SWTHROTTLE_SEED=N replays a case, SWTHROTTLE_SEED=random explores.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

namespace swthrottle::test {

inline uint64_t base_seed(uint64_t fixed) {
  const char* env = std::getenv("SWTHROTTLE_SEED");
  if (env == nullptr || *env == '\0') return fixed;
  if (std::string(env) == "random") return std::random_device{}() * 2654435761u + std::random_device{}();
  return std::strtoull(env, nullptr, 10);
}

}  // namespace swthrottle::test
