#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "input/newline_scan.h"

using swthrottle::input::NewlineScan;

namespace {

// The "\n"s memchr finds, line after line, from `start`.
std::vector<std::size_t> by_memchr(const std::string& s, std::size_t start) {
  std::vector<std::size_t> out;
  for (std::size_t at = start; at < s.size();) {
    const void* nl = std::memchr(s.data() + at, '\n', s.size() - at);
    if (nl == nullptr) break;
    out.push_back(static_cast<std::size_t>(static_cast<const char*>(nl) - s.data()));
    at = out.back() + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("newline_scan: finds what memchr finds, for every density, start and length") {
  std::mt19937 rng(17);
  for (int density : {1, 2, 5, 30, 63, 64, 65, 120, 400, 100000}) {
    for (std::size_t size : {0u, 1u, 63u, 64u, 65u, 127u, 128u, 129u, 1000u, 4099u}) {
      std::string s(size, 'x');
      for (auto& c : s) {
        const auto r = rng();
        if (r % static_cast<unsigned>(density) == 0) c = '\n';
        else if (r % 7 == 0) c = static_cast<char>(0x80 + r % 128);  // high bytes must not look like "\n"
      }
      for (std::size_t start : {std::size_t{0}, std::size_t{1}, std::size_t{63}, size / 2}) {
        if (start > size) continue;
        CAPTURE(density);
        CAPTURE(size);
        CAPTURE(start);
        NewlineScan scan(s.data() + start, s.data() + s.size());
        std::vector<std::size_t> got;
        for (const char* from = s.data() + start;;) {
          const char* nl = scan.find(from);
          if (nl == nullptr) break;
          got.push_back(static_cast<std::size_t>(nl - s.data()));
          from = nl + 1;
        }
        CHECK(got == by_memchr(s, start));
      }
    }
  }
}

TEST_CASE("newline_scan: a caller that skips ahead inside a block gets no newline behind it") {
  // A line cut at max_line is skipped to its end by the caller: find() is
  // then asked from past newlines it has already put in its mask.
  std::string s;
  for (int i = 0; i < 40; ++i) s += "ab\n";
  NewlineScan scan(s.data(), s.data() + s.size());
  const char* first = scan.find(s.data());
  REQUIRE(first == s.data() + 2);
  const char* later = scan.find(s.data() + 31);  // inside the first 64 bytes
  REQUIRE(later != nullptr);
  CHECK(later - s.data() == 32);
  const char* far = scan.find(s.data() + 100);  // past the first block
  REQUIRE(far != nullptr);
  CHECK(far - s.data() == 101);
}
