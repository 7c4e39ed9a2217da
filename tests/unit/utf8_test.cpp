// util/utf8.h: the one definition of well-formed UTF-8. Its users must agree
// with it: the JSON repair (a valid string comes out unchanged) and
// nlohmann-json's serializer (which the state file relies on, see
// state_codec.h: a valid string is written as a string, never refused).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "util/json.h"
#include "util/utf8.h"

using swthrottle::is_utf8_continuation;
using swthrottle::is_valid_utf8;
using swthrottle::utf8_sequence_length;
using namespace std::string_literals;

namespace {

int sequence(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  return utf8_sequence_length(p, p + s.size());
}

// What nlohmann's strict serializer says: true when it writes the string.
bool nlohmann_accepts(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

bool repair_keeps(const std::string& s) {
  std::string out;
  swthrottle::append_utf8_repaired(out, s);
  return out == s;
}

}  // namespace

TEST_CASE("utf8: is_valid_utf8, case by case") {
  struct Case {
    std::string text;
    bool valid;
  };
  const Case cases[] = {
      {"", true},
      {"plain ascii, longer than one 8-byte block", true},
      {"a\0b"s, true},
      {"caf\xc3\xa9", true},
      {"\xe2\x82\xac", true},                  // U+20AC
      {"\xf0\x9f\x98\x80", true},              // U+1F600
      {"\xf4\x8f\xbf\xbf", true},              // U+10FFFF
      {"\xed\x9f\xbf", true},                  // U+D7FF, just below the surrogates
      {"\xee\x80\x80", true},                  // U+E000, just above them
      {"12345678caf\xc3\xa9 12345678", true},  // non-ASCII between ASCII blocks
      {"\x80", false},                         // continuation without a lead
      {"\xc0\x80", false},                     // overlong NUL
      {"\xc1\xbf", false},                     // overlong
      {"\xe0\x9f\xbf", false},                 // overlong, three bytes
      {"\xed\xa0\x80", false},                 // U+D800
      {"\xf0\x8f\xbf\xbf", false},             // overlong, four bytes
      {"\xf4\x90\x80\x80", false},             // above U+10FFFF
      {"\xf5\x80\x80\x80", false},
      {"\xff", false},
      {"\xe2\x82", false},          // cut short
      {"12345678\xe2\x82", false},  // cut short after a block
      {"\xc3\xa9\x80", false},      // stray continuation
      {"\xe2\x28\xa1", false},      // bad second byte
      {"\xe2\x82\x28", false},      // bad third byte
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    CHECK(is_valid_utf8(c.text) == c.valid);
  }
}

TEST_CASE("utf8: sequence length, or the maximal subpart to replace") {
  CHECK(sequence("\xc3\xa9") == 2);
  CHECK(sequence("\xe2\x82\xac") == 3);
  CHECK(sequence("\xf0\x9f\x98\x80") == 4);
  CHECK(sequence("\x80") == -1);
  CHECK(sequence("\xff") == -1);
  CHECK(sequence("\xc0\x80") == -1);      // C0 is never a lead
  CHECK(sequence("\xe0\x80\x80") == -1);  // E0 80: overlong, the lead alone
  CHECK(sequence("\xe2\x82") == -2);      // cut short: lead and the continuation it got
  CHECK(sequence("\xf0\x9f\x98") == -3);
  CHECK(sequence("\xf0\x9f\x98x") == -3);
  CHECK(sequence("\xed\xa0\x80") == -1);  // surrogate
  CHECK(is_utf8_continuation(0x80));
  CHECK(is_utf8_continuation(0xBF));
  CHECK_FALSE(is_utf8_continuation(0x7F));
  CHECK_FALSE(is_utf8_continuation(0xC0));
}

// Every 1- and 2-byte string, 3-byte strings of every lead byte with
// continuation bytes at and around each boundary of Table 3-7, and 4-byte
// strings of the leads where a fourth byte decides something (the 4-byte
// leads and their neighbours; after any other lead, the first three bytes
// already decide, and the 3-byte loop covers them): 123k strings, not 545k.
TEST_CASE("utf8: the validator, the JSON repair and nlohmann-json agree") {
  const unsigned char edges[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xF4, 0xFF};
  const unsigned char four_byte_leads[] = {0x41, 0xC2, 0xE0, 0xED, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xF8, 0xFF};
  std::vector<std::string> texts;
  for (int a = 0; a < 256; ++a) {
    texts.push_back(std::string(1, static_cast<char>(a)));
    for (int b = 0; b < 256; ++b) texts.push_back({static_cast<char>(a), static_cast<char>(b)});
    for (unsigned char b : edges)
      for (unsigned char c : edges) texts.push_back({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)});
  }
  for (unsigned char a : four_byte_leads)
    for (unsigned char b : edges)
      for (unsigned char c : edges)
        for (unsigned char d : edges)
          texts.push_back({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c), static_cast<char>(d)});
  std::size_t valid = 0, disagreements = 0;
  for (const std::string& t : texts) {
    const bool v = is_valid_utf8(t);
    valid += v ? 1 : 0;
    // Padded to 8 bytes and more, the validator takes its block path too.
    const std::string padded = "12345678" + t + "12345678";
    if (v != nlohmann_accepts(t) || v != repair_keeps(t) || v != is_valid_utf8(padded)) {
      ++disagreements;
      CAPTURE(t);
      CHECK(v == nlohmann_accepts(t));
      CHECK(v == repair_keeps(t));
      CHECK(v == is_valid_utf8(padded));
      if (disagreements > 5) break;
    }
  }
  CHECK(disagreements == 0);
  CHECK(valid > 1000);  // the table is not all invalid: the test can tell
}
