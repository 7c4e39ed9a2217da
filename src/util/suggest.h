// "did you mean" hints for typos in names (rule keys, events, template fields).
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace swthrottle {

// Edit distance between a and b where swapping two neighbouring letters
// counts as one edit ("whne" -> "when"), as typos usually are (optimal string
// alignment). Small strings only: keys and names.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// The candidate closest to `word`, if it is close enough to be a likely typo
// (distance <= max(1, len/3)); "" otherwise.
inline std::string closest_match(std::string_view word, std::span<const std::string> candidates) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(1, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

// ` (did you mean "x"?)` or "" -- ready to append to a message.
inline std::string did_you_mean(std::string_view word, std::span<const std::string> candidates) {
  std::string m = closest_match(word, candidates);
  return m.empty() ? std::string() : " (did you mean \"" + m + "\"?)";
}

}  // namespace swthrottle
