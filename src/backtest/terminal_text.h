// Text for a fixed-width terminal, as the backtest's text report writes it:
// how many columns a piece of text takes, cutting it to a number of columns,
// and the numbers and times it shows (grouped digits, UTC times, spans).
//
// Widths are measured conservatively, without a locale: a code point of an
// East Asian wide range (CJK, Hangul, fullwidth forms, the emoji planes)
// counts 2 columns and every other code point 1 (combining marks too, which a
// terminal draws in 0), so text cut to N columns never takes more than N.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace swthrottle::backtest {

// The columns `text` takes on a terminal (well-formed UTF-8, as
// terminal_safe() makes it). ANSI escape sequences are not counted.
int display_columns(std::string_view text);

// `text` made safe to print: invalid UTF-8 repaired, control characters
// (ESC included) escaped as util/json.h's append_text_escaped does, so a key
// can never move the cursor or change the colour.
std::string terminal_safe(std::string_view text);

// terminal_safe(text) in at most `columns` columns: cut on a code point
// boundary, with "…" as the last column when it was cut. columns >= 1.
std::string fit_columns(std::string_view text, int columns);

// Text that is already safe (terminal_safe, perhaps painted with ANSI
// sequences) in at most `columns` columns: cut as fit_columns cuts. The
// sequences are kept and take no column; when a painted text is cut,
// "\x1b[0m" ends it, so that no colour runs on past the cut.
std::string cut_columns(std::string_view safe, int columns);

// `text` (already safe) followed, or preceded, by spaces up to `columns`.
std::string pad_right(std::string_view text, int columns);
std::string pad_left(std::string_view text, int columns);

// 1203 -> "1,203".
std::string grouped(uint64_t n);

// Milliseconds since the epoch as "2026-11-02 04:13:00" (UTC).
std::string utc_time(int64_t ms);

// A length of time in its two largest units: "4h 8m", "2d 3h", "1m 30s",
// "45s", "250ms".
std::string span_text(int64_t ms);

// Words of `text` wrapped into lines of at most `columns` columns, the first
// prefixed by `first_indent` and the others by `indent` (both counted). A
// word longer than a line is cut (fit_columns).
std::vector<std::string> wrap_words(std::string_view text, int columns, std::string_view first_indent,
                                    std::string_view indent);

}  // namespace swthrottle::backtest
