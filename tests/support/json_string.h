// Reading one JSON string (RFC 8259 §7) for the tests' small JSON readers:
// escapes decoded, \u surrogate pairs joined, raw control characters refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace swthrottle::test {

inline void put_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Four hex digits at s[i], moving i past them.
inline bool read_hex4(std::string_view s, std::size_t& i, uint32_t& cp) {
  if (i + 4 > s.size()) return false;
  cp = 0;
  for (int k = 0; k < 4; ++k) {
    const char h = s[i++];
    cp <<= 4;
    if (h >= '0' && h <= '9') cp |= static_cast<uint32_t>(h - '0');
    else if (h >= 'a' && h <= 'f') cp |= static_cast<uint32_t>(h - 'a' + 10);
    else if (h >= 'A' && h <= 'F') cp |= static_cast<uint32_t>(h - 'A' + 10);
    else return false;
  }
  return true;
}

// The JSON string starting at s[i] (its opening quote), decoded and appended
// to out; i moves past the closing quote. False when it is not a JSON string.
inline bool read_json_string(std::string_view s, std::size_t& i, std::string& out) {
  if (i >= s.size() || s[i] != '"') return false;
  ++i;
  while (i < s.size()) {
    const char c = s[i++];
    if (c == '"') return true;
    if (static_cast<unsigned char>(c) < 0x20) return false;  // raw control characters are not JSON
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i >= s.size()) return false;
    switch (s[i++]) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        uint32_t cp = 0;
        if (!read_hex4(s, i, cp)) return false;
        if (cp >= 0xD800 && cp < 0xDC00) {
          uint32_t lo = 0;
          if (s.substr(i, 2) != "\\u") return false;
          i += 2;
          if (!read_hex4(s, i, lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          return false;
        }
        put_utf8(out, cp);
        break;
      }
      default: return false;
    }
  }
  return false;
}

}  // namespace swthrottle::test
