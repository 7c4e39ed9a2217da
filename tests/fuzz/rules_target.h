// The rules loader on whole TOML files: config::parse_rules, the function
// load_rules (and so main, through app::load_generation) gives each file's
// text to. What loads must be usable: its expressions evaluate and its
// templates render.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/rules.h"
#include "fuzz/fuzz_check.h"

namespace swthrottle::fuzz {

inline void rules_one_input(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto rules = config::parse_rules(text, "fuzz.toml");
  if (!rules.ok()) {
    FUZZ_CHECK(!rules.error().what.empty());
    return;
  }
  std::vector<std::string_view> values{"r", "e", "1", "2", "1m", "k", "a line", "0", "cap"};
  std::string out;
  for (const auto& r : rules->rules) {
    FUZZ_CHECK(!r.events.empty());
    std::vector<uint64_t> counts(r.events.size(), 0);
    (void)r.when.eval(counts);
    for (auto& c : counts) c = 1000;
    (void)r.when.eval(counts);
    if (r.resolve_when) (void)r.resolve_when->eval(counts);
    if (r.key) r.key->render(out, values);
    if (r.message) r.message->render(out, values);
  }
}

}  // namespace swthrottle::fuzz
