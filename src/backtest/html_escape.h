// HTML escaping for the backtest's HTML report: the one place user text
// (rule names, keys, inputs, conditions) enters the page, in HTML and in SVG
// alike.
#pragma once

#include <string>
#include <string_view>

namespace swthrottle::backtest {

// Appends `s` as HTML text, safe in element content and in a quoted
// attribute value (HTML or SVG): & < > " ' become entities. The page is
// UTF-8, so invalid UTF-8 is repaired first (U+FFFD, as append_utf8_repaired
// does), and the control characters HTML forbids in a document (C0 but tab,
// line feed and carriage return; DEL; C1) become U+FFFD too.
void append_html_escaped(std::string& out, std::string_view s);

// The same, as a new string.
std::string html_escaped(std::string_view s);

}  // namespace swthrottle::backtest
