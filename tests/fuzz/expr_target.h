// `when` expressions (config/expr.h): the fuzzed text compiled against a
// fixed list of events, then evaluated on a few sets of counts (zeros, small,
// and the largest a window can hold).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "config/expr.h"
#include "fuzz/fuzz_check.h"

namespace swthrottle::fuzz {

inline void expr_one_input(const uint8_t* data, std::size_t size) {
  static const std::vector<std::string> kEvents{"request", "error", "fail", "e_1", "x"};
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto e = config::Expr::parse(text, kEvents);
  if (!e.ok()) {
    // Error::col is a 1-based offset into the text (or 0: unknown), one past its end at most.
    FUZZ_CHECK(e.error().col >= 0 && static_cast<std::size_t>(e.error().col) <= size + 1);
    FUZZ_CHECK(!e.error().what.empty());
    return;
  }
  FUZZ_CHECK(e->text() == text);
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  const std::vector<std::vector<uint64_t>> counts{
      {0, 0, 0, 0, 0}, {1, 2, 3, 4, 5}, {100, 0, 7, 1, 0}, {kMax, kMax, 1, 0, kMax}};
  for (const auto& c : counts) {
    const bool first = e->eval(c);
    FUZZ_CHECK(e->eval(c) == first);  // no state between evaluations
  }
}

}  // namespace swthrottle::fuzz
