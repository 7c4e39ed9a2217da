// Inputs the fuzzers (tests/fuzz) found, run through the same target
// functions as the harnesses: each once crashed, hung or ran out of memory.
// A case passes when the target returns (a failed FUZZ_CHECK aborts) and the
// behaviour it pins holds.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "config/template.h"
#include "fuzz/json_strings_target.h"
#include "fuzz/template_target.h"

namespace {

namespace sw = swthrottle;

void run_template(const std::string& input) {
  sw::fuzz::template_one_input(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

TEST_CASE("fuzz regression: a template width of 111 million is refused at once, not counted out") {
  // fuzz_template: timeout. fmt's formatted_size wrote the padding one char at a time.
  const auto start = std::chrono::steady_clock::now();
  run_template("{ip:>111111115}|\xff\xff\xff\xff");
  const std::vector<std::string> names{"ip"};
  auto t = sw::config::Template::parse(
      "{ip:>111111115}", [](std::string_view n) { return n == "ip" ? 0 : -1; }, names);
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().what == "format spec \">111111115\" for field \"ip\" is wider than 1024 characters");
  CHECK(t.error().col == 5);
  // The widest fmt reads: counted out, 2^31 chars took seconds even without sanitizers.
  auto widest = sw::config::Template::parse(
      "{ip:*^2147483647}", [](std::string_view n) { return n == "ip" ? 0 : -1; }, names);
  REQUIRE_FALSE(widest.ok());
  CHECK(widest.error().what == "format spec \"*^2147483647\" for field \"ip\" is wider than 1024 characters");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
}

// fuzz_json_strings (issue 32): each form of bad string content the probe
// found made the whole line invalid JSON, and FUZZ_CHECK aborted on it: the
// line must be read (leniently), its other fields intact.
TEST_CASE("fuzz regression: bad bytes and escapes inside a JSON string keep the line JSON") {
  for (const std::string& content : std::vector<std::string>{
           "caf\xe9", "x\xc0\xafy", "x\xed\xa0\x80y", "x\\ud800y", "x\\uZZZZ", "\x1b[31mred", "\\udc00\\ud83d\\ude00",
           "a\\q\\", std::string("nul\0", 4), "\xf4\x90\x80\x80", "\\u12", "ok \\\"quoted\\\" \\u00e9"}) {
    CAPTURE(content);
    sw::fuzz::json_strings_one_input(reinterpret_cast<const uint8_t*>(content.data()), content.size());
  }
}

}  // namespace
