// The JSON line parser (match/json_fields.h), as structured input uses it:
// a fixed list of paths (nested, duplicated prefixes, journald's MESSAGE),
// byte 0 turning byte arrays on or off, the rest read line by line by one
// JsonFields (its buffers are reused between lines, as in a run).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "match/json_fields.h"

namespace swthrottle::fuzz {

inline void json_fields_one_input(const uint8_t* data, std::size_t size) {
  if (size < 1) return;
  static const std::vector<std::string> kPaths{"level", "msg",     "service.name", "service",    "a.b.c",
                                               "ts",    "MESSAGE", "x.y",          "http.status"};
  match::JsonFields fields(kPaths);
  fields.set_byte_arrays(data[0] & 1);
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    const auto read = fields.read(line);
    FUZZ_CHECK((read == match::JsonFields::Read::Text) == !match::JsonFields::looks_like_json(line));
    for (std::size_t i = 0; i < kPaths.size(); ++i) {
      const auto text = fields.text(i);
      if (read != match::JsonFields::Read::Json && read != match::JsonFields::Read::Repaired) FUZZ_CHECK(!text);
      if (text) {
        volatile std::size_t sum = 0;  // every byte of the view is readable (ASan)
        for (char c : *text) sum = sum + static_cast<unsigned char>(c);
      }
    }
    FUZZ_CHECK(fields.slot_of("service.name") == 2);
  }
}

}  // namespace swthrottle::fuzz
