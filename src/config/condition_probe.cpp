#include "config/condition_probe.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

namespace swthrottle::config {
namespace {

// The counts tried for each event: 0..10, and each number of the condition
// rounded down and up, one either side, and twice it (ratios: 2 * 0.05).
std::vector<uint64_t> candidate_counts(const Expr& e) {
  std::vector<uint64_t> v;
  for (uint64_t i = 0; i <= 10; ++i) v.push_back(i);
  auto add = [&](double x) {
    if (x >= 0 && x < 1e15) v.push_back(static_cast<uint64_t>(x));
  };
  for (double n : e.numbers()) {
    for (double x : {std::floor(n) - 1, std::floor(n), std::ceil(n), std::ceil(n) + 1, 2 * n, 10 * n, 100 * n}) add(x);
    if (n > 0 && n < 1) add(std::ceil(1 / n) + 1);  // a ratio's denominator
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

ConditionProbe probe_condition(const Expr& e, std::size_t events) {
  ConditionProbe p;
  const std::size_t n = std::clamp<std::size_t>(events, 1, 64);
  std::array<uint64_t, 64> counts{};
  const std::span<const uint64_t> view(counts.data(), n);
  p.holds_when_empty = e.eval(view);
  const std::vector<uint64_t> values = candidate_counts(e);
  bool other = false;  // held on counts that are not all 0
  auto try_counts = [&] {
    if (!e.eval(view)) return;
    p.holds_somewhere = true;
    if (std::any_of(view.begin(), view.end(), [](uint64_t c) { return c != 0; })) other = true;
  };
  // Every combination while they are few enough (an odometer over the
  // values), else kProbeCombinations drawn from them.
  double combinations = 1;
  for (std::size_t i = 0; i < n; ++i) combinations *= static_cast<double>(values.size());
  if (combinations <= static_cast<double>(kProbeCombinations)) {
    std::vector<std::size_t> at(n, 0);
    for (;;) {
      for (std::size_t i = 0; i < n; ++i) counts[i] = values[at[i]];
      try_counts();
      std::size_t i = 0;
      while (i < n && ++at[i] == values.size()) at[i++] = 0;
      if (i == n) break;
    }
  } else {
    std::mt19937_64 rng(20261121);
    for (std::size_t k = 0; k < kProbeCombinations && !(other && p.holds_when_empty); ++k) {
      for (std::size_t i = 0; i < n; ++i) counts[i] = values[rng() % values.size()];
      try_counts();
    }
  }
  p.holds_somewhere = p.holds_somewhere || p.holds_when_empty;
  p.holds_only_when_empty = p.holds_when_empty && !other;
  return p;
}

}  // namespace swthrottle::config
