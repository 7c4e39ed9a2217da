#include "delivery/redact.h"

#include <algorithm>

namespace swthrottle::delivery {

std::string redact(std::string text, std::vector<std::string> secrets) {
  // Longest first: a URL whole before its path, which it contains.
  std::sort(secrets.begin(), secrets.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  static const std::string kMark = "<redacted>";
  for (const std::string& s : secrets) {
    if (s.empty()) continue;
    for (std::size_t at = text.find(s); at != std::string::npos; at = text.find(s, at + kMark.size()))
      text.replace(at, s.size(), kMark);
  }
  return text;
}

}  // namespace swthrottle::delivery
