// Bytes inside the strings of a JSON line (issue 32): the input is put, as
// string content, into a value on a named path, a key and a value nobody
// names, of a line whose structure is otherwise sound. Whatever the bytes
// (not UTF-8, control bytes, bad or lone escapes), the line is read as JSON
// (strictly or leniently, match/json_repair.h): the other named fields keep
// their text, and the named string's text is its lenient decoding, which for
// a valid string is what simdjson itself decodes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "match/json_fields.h"
#include "match/json_repair.h"

namespace swthrottle::fuzz {

// `data` as the content of a JSON string that ends where it should: no '"'
// (a quote would end it early), and no odd run of backslashes at the end
// (it would escape the closing quote).
inline std::string string_content(const uint8_t* data, std::size_t size) {
  std::string c;
  for (std::size_t i = 0; i < size; ++i)
    if (data[i] != '"') c += static_cast<char>(data[i]);
  std::size_t slashes = 0;
  while (slashes < c.size() && c[c.size() - 1 - slashes] == '\\') ++slashes;
  if (slashes % 2 == 1) c.pop_back();
  return c;
}

inline void json_strings_one_input(const uint8_t* data, std::size_t size) {
  static const std::vector<std::string> kPaths{"level", "svc", "a.b.c"};
  static match::JsonFields fields(kPaths);  // reused, as in a run
  const std::string c = string_content(data, size);
  const std::string line =
      R"({"level":"error","svc":")" + c + R"(","a":{"b":{"c":"x"}},")" + c + R"(":1,"z":")" + c + R"("})";
  const auto read = fields.read(line);
  FUZZ_CHECK(read == match::JsonFields::Read::Json || read == match::JsonFields::Read::Repaired);
  FUZZ_CHECK(fields.text(0) && *fields.text(0) == "error");
  FUZZ_CHECK(fields.text(2) && *fields.text(2) == "x");
  std::string want;
  match::decode_lenient(c, want);
  FUZZ_CHECK(fields.text(1) && *fields.text(1) == want);
}

}  // namespace swthrottle::fuzz
