// `key` and `message` templates (config/template.h): the fuzzed text parsed
// against the built-in fields and a few captures, then rendered with short,
// empty and long values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/template.h"
#include "fuzz/fuzz_check.h"

namespace swthrottle::fuzz {

inline void template_one_input(const uint8_t* data, std::size_t size) {
  static const std::vector<std::string> kNames{"rule", "event",      "count", "threshold", "window",       "key",
                                               "line", "suppressed", "ip",    "user",      ".service.name"};
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto resolve = [](std::string_view name) {
    for (std::size_t i = 0; i < kNames.size(); ++i)
      if (kNames[i] == name) return static_cast<int>(i);
    return -1;
  };
  auto t = config::Template::parse(text, resolve, kNames);
  if (!t.ok()) {
    FUZZ_CHECK(t.error().col >= 0 && static_cast<std::size_t>(t.error().col) <= size + 1);
    FUZZ_CHECK(!t.error().what.empty());
    return;
  }
  FUZZ_CHECK(t->text() == text);
  const std::string long_value(300, 'v');
  const std::vector<std::string_view> values{"ssh", "fail", "12", "5", "1m", "10.0.0.1", long_value, "0", "ü€𝄞"};
  std::string out;
  t->render(out, values);
  const std::string once = out;
  t->render(out, {});  // missing values render empty
  FUZZ_CHECK(out.compare(0, once.size(), once) == 0);
  for (int f = -1; f < static_cast<int>(kNames.size()) + 1; ++f) (void)t->uses(f);
}

}  // namespace swthrottle::fuzz
