// JSON string escaping, U+FFFD repair of invalid UTF-8, and RFC 3339 times:
// the byte-level pieces every output record is made of (DESIGN.md §5, §7).
//
// Everything here appends to a caller-owned std::string and allocates nothing
// beyond growing it, so a reused buffer makes rendering allocation-free.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace swthrottle {

// Appends `s` as a quoted JSON string. Escapes `"`, `\` and the control bytes
// 0x00-0x1F (\b \f \n \r \t by name, the others as \u00XX; NUL is \u0000).
// DEL and all non-ASCII text are written as raw UTF-8, not escaped. Invalid
// UTF-8 becomes U+FFFD, one per maximal subpart (Unicode §3.9, "substitution
// of maximal subparts", the WHATWG decoder's rule): a bad lead byte is one
// U+FFFD; a valid lead byte followed by too few valid continuation bytes is
// one U+FFFD for the lead and the continuations it did get. Overlongs,
// surrogates (U+D800-U+DFFF) and code points above U+10FFFF are invalid.
void append_json_string(std::string& out, std::string_view s);

// The same U+FFFD repair as append_json_string, without quotes or escaping:
// every byte of valid UTF-8 (control bytes included) is copied unchanged.
void append_utf8_repaired(std::string& out, std::string_view s);

// The same repair, for text that must stay on one output line: additionally
// writes a "\n" byte as the two characters `\n` and a "\r" byte as `\r` (and
// nothing else), so a record of the text format is always exactly one line.
void append_utf8_one_line(std::string& out, std::string_view s);

// The same repair, for text written into a text-format record (DESIGN.md §5, §7):
// no control character reaches the reader's terminal, and the escapes are
// unambiguous. Escapes exactly:
//   - the C0 controls 0x00-0x1F, as JSON strings write them: \b \t \n \f \r
//     by name, the others as \u00XX (lowercase hex: ESC is \u001b, NUL is
//     \u0000);
//   - DEL 0x7F as \u007f;
//   - the C1 controls U+0080-U+009F (well-formed, C2 80..C2 9F) as \u0080 to
//     \u009f;
//   - a backslash as \\, so that a `\` in the output always starts an escape.
// Everything else, '"' included, is copied as it is: printable ASCII and
// well-formed UTF-8 ("é", "日本"). Invalid UTF-8 becomes U+FFFD, so no lone
// byte 0x80-0x9F is ever written either.
void append_text_escaped(std::string& out, std::string_view s);

// A log line as a message on stderr shows it: its first max_bytes bytes, cut
// on a character boundary (a cut inside one would show as U+FFFD), escaped as
// above, and "..." after a cut.
void append_line_sample(std::string& out, std::string_view line, std::size_t max_bytes);

// Appends `ms` (milliseconds since the Unix epoch) as RFC 3339 UTC with
// milliseconds: "2026-11-21T10:00:05.000Z". Uses proleptic Gregorian
// civil_from_days() (util/civil_date.h), exact for every int64_t: years past
// 9999 get more digits, times before the epoch work too (years before 0
// print with a leading '-', which RFC 3339 does not define).
void append_rfc3339_ms(std::string& out, int64_t ms);

}  // namespace swthrottle
