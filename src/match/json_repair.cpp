#include "match/json_repair.h"

#include "util/utf8.h"

namespace swthrottle::match {

namespace {

constexpr char kStandIn = '?';

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The code unit of the four hex digits at p (p + 4 <= end), or -1.
int hex4(const char* p, const char* end) {
  if (end - p < 4) return -1;
  int v = 0;
  for (int i = 0; i < 4; ++i) {
    const int d = hex_digit(p[i]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

bool is_high(int u) { return u >= 0xD800 && u <= 0xDBFF; }
bool is_low(int u) { return u >= 0xDC00 && u <= 0xDFFF; }

// At p, just past a "\u" escape's digits: the low half of a pair, or -1.
int low_half_at(const char* p, const char* end) {
  if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return -1;
  const int u = hex4(p + 2, end);
  return is_low(u) ? u : -1;
}

void append_utf8(std::string& out, uint32_t cp) {
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

// The character a one-letter escape stands for, or 0 for one JSON does not have.
char simple_escape(char c) {
  switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case '/': return '/';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return 0;
  }
}

// Neutralizes the escape at text[i] ('\\', i + 1 < n); returns the index of
// its last byte, and sets `fixed` when it changed something.
std::size_t neutralize_escape(char* text, std::size_t n, std::size_t i, bool& fixed) {
  const char* end = text + n;
  if (simple_escape(text[i + 1]) != 0) return i + 1;
  if (text[i + 1] == 'u') {
    const int u = hex4(text + i + 2, end);
    if (u >= 0 && !is_high(u) && !is_low(u)) return i + 5;
    if (is_high(u) && low_half_at(text + i + 6, end) >= 0) return i + 11;
    if (u >= 0) {  // a lone half of a pair: the replacement character, in as many bytes
      text[i + 2] = 'f';
      text[i + 3] = 'f';
      text[i + 4] = 'f';
      text[i + 5] = 'd';
      fixed = true;
      return i + 5;
    }
  }
  text[i] = kStandIn;  // the byte after it is read as an ordinary one
  fixed = true;
  return i;
}

}  // namespace

bool neutralize_strings(char* text, std::size_t n, std::vector<RepairedString>& repaired) {
  repaired.clear();
  const auto* bytes = reinterpret_cast<const unsigned char*>(text);
  bool inside = false;
  bool fixed = false;
  std::size_t open = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = bytes[i];
    if (!inside) {
      if (c == '"') {
        inside = true;
        fixed = false;
        open = i;
      }
      continue;
    }
    if (c == '"') {
      inside = false;
      if (fixed) repaired.push_back(RepairedString{open, i});
    } else if (c == '\\') {
      if (i + 1 == n) break;  // the string never ends: the structure is broken
      i = neutralize_escape(text, n, i, fixed);
    } else if (c < 0x20) {
      text[i] = kStandIn;
      fixed = true;
    } else if (c >= 0x80) {
      const int len = utf8_sequence_length(bytes + i, bytes + n);
      if (len > 0) {
        i += static_cast<std::size_t>(len) - 1;
      } else {
        for (int k = 0; k < -len; ++k) text[i + static_cast<std::size_t>(k)] = kStandIn;
        i += static_cast<std::size_t>(-len) - 1;
        fixed = true;
      }
    }
  }
  return !repaired.empty();
}

void decode_lenient(std::string_view raw, std::string& out) {
  out.clear();
  const char* p = raw.data();
  const char* end = raw.data() + raw.size();
  while (p < end) {
    if (*p != '\\' || p + 1 == end) {
      out += *p++;
      continue;
    }
    if (const char e = simple_escape(p[1]); e != 0) {
      out += e;
      p += 2;
      continue;
    }
    const int u = p[1] == 'u' ? hex4(p + 2, end) : -1;
    if (u < 0) {  // an escape JSON does not have: as written
      out += *p++;
      continue;
    }
    if (is_high(u)) {
      if (const int low = low_half_at(p + 6, end); low >= 0) {
        append_utf8(out, 0x10000 + ((static_cast<uint32_t>(u) - 0xD800) << 10) + (static_cast<uint32_t>(low) - 0xDC00));
        p += 12;
        continue;
      }
    }
    append_utf8(out, is_high(u) || is_low(u) ? 0xFFFD : static_cast<uint32_t>(u));
    p += 6;
  }
}

}  // namespace swthrottle::match
