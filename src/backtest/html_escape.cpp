#include "backtest/html_escape.h"

#include "util/json.h"

namespace swthrottle::backtest {

void append_html_escaped(std::string& out, std::string_view s) {
  // Repair first, so that the byte loop below only ever sees well-formed
  // UTF-8: a C1 control is then exactly C2 80..C2 9F.
  std::string repaired;
  append_utf8_repaired(repaired, s);
  constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
  for (std::size_t i = 0; i < repaired.size(); ++i) {
    const auto c = static_cast<unsigned char>(repaired[i]);
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\t':
      case '\n':
      case '\r': out += static_cast<char>(c); break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += kReplacement;
        } else if (c == 0xC2 && i + 1 < repaired.size() && static_cast<unsigned char>(repaired[i + 1]) <= 0x9F) {
          out += kReplacement;  // C1 control U+0080..U+009F
          ++i;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
}

std::string html_escaped(std::string_view s) {
  std::string out;
  append_html_escaped(out, s);
  return out;
}

}  // namespace swthrottle::backtest
