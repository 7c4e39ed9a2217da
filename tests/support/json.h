// Reading swthrottle's JSON output in the tests, with nlohmann-json.
//
// swthrottle writes valid UTF-8 only (invalid input bytes become U+FFFD, see
// util/json.h), and nlohmann-json refuses ill-formed UTF-8 in a string, so a
// record that parses here is also valid UTF-8.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace swthrottle::test {

// s as exactly one JSON value (RFC 8259), or nullopt when it is not one, or
// when an object has the same member twice (nlohmann-json would silently keep
// the last one, and a record must not carry a field twice).
inline std::optional<nlohmann::json> parse_json(std::string_view s) {
  using Event = nlohmann::json::parse_event_t;
  std::vector<std::set<std::string>> names;  // the member names of each open object
  bool duplicate = false;
  auto check = [&](int /*depth*/, Event event, nlohmann::json& parsed) {
    if (event == Event::object_start) names.emplace_back();
    if (event == Event::object_end && !names.empty()) names.pop_back();
    if (event == Event::key && !names.empty() && !names.back().insert(parsed.get<std::string>()).second)
      duplicate = true;
    return true;
  };
  nlohmann::json j = nlohmann::json::parse(s.begin(), s.end(), check, /*allow_exceptions=*/false);
  if (j.is_discarded() || duplicate) return std::nullopt;
  return j;
}

// One text for equal JSON values: object members sorted by name, strings
// re-escaped one way, non-ASCII text as raw UTF-8. Comparing these compares
// field by field, whatever order the fields came in.
inline std::string canonical(const nlohmann::json& j) { return j.dump(); }

}  // namespace swthrottle::test
