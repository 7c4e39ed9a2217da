// Lenient JSON strings, for JsonFields (json_fields.h): a line that is a JSON
// object but for what is inside its strings is read all the same.
//
// Two halves, both pure:
// - neutralize_strings() makes the copy simdjson parses acceptable, in place
//   and length for length, so that every offset in it is the same offset in
//   the line: a byte JSON does not allow in a string (not UTF-8, an overlong
//   form, an encoded surrogate, a control byte such as ESC) becomes '?', the
//   backslash of an escape JSON does not have (\q, \uZZZZ) becomes '?', and
//   a lone surrogate escape (\ud800, \udc00) becomes \ufffd. Nothing outside
//   a string is touched: a line whose structure is broken stays broken.
// - decode_lenient() gives such a string's text from the line itself: the
//   escapes JSON has decoded (surrogate pairs too), a lone surrogate escape
//   as U+FFFD (it has no UTF-8 form), any other bad escape as written
//   (backslash included), every other byte as it is, so that bytes that are
//   not UTF-8 are matched as UTF-8 and as Latin-1, as a line's are.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace swthrottle::match {

// A string of the line that neutralize_strings() changed: the offsets of its
// opening and closing quotes.
struct RepairedString {
  std::size_t open = 0;
  std::size_t close = 0;
};

// Neutralizes the strings of text[0, n) in place (see above); `repaired`
// gets the strings it changed, in order. False when nothing needed it.
bool neutralize_strings(char* text, std::size_t n, std::vector<RepairedString>& repaired);

// The text of a JSON string whose raw bytes (between the quotes) are `raw`,
// decoded leniently (see above), into `out` (cleared first).
void decode_lenient(std::string_view raw, std::string& out);

}  // namespace swthrottle::match
