#include "util/json.h"

#include <charconv>
#include <cstring>

#include "util/civil_date.h"
#include "util/utf8.h"

namespace swthrottle {
namespace {

// Which bytes a mode must treat specially; everything else (plain ASCII and
// well-formed UTF-8) is copied in runs.
enum class Mode { Json, Repair, OneLine, Text };

constexpr uint64_t kOnes = 0x0101010101010101ULL;
constexpr uint64_t kHighs = 0x8080808080808080ULL;

// Standard SWAR tests (exact as "does any byte ..." predicates, which is all
// we need: a hit only sends the block to the byte-by-byte loop).
constexpr uint64_t has_zero_byte(uint64_t v) { return (v - kOnes) & ~v & kHighs; }
constexpr uint64_t has_byte(uint64_t v, unsigned char b) { return has_zero_byte(v ^ (kOnes * b)); }
constexpr uint64_t has_byte_below(uint64_t v, unsigned char n) { return (v - kOnes * n) & ~v & kHighs; }

template <Mode M>
constexpr bool plain_ascii(unsigned char c) {
  if (c >= 0x80) return false;
  if constexpr (M == Mode::Json) return c >= 0x20 && c != '"' && c != '\\';
  if constexpr (M == Mode::OneLine) return c != '\n' && c != '\r';
  if constexpr (M == Mode::Text) return c >= 0x20 && c != 0x7F && c != '\\';
  return true;
}

constexpr char kHex[] = "0123456789abcdef";

template <Mode M>
bool block_is_plain(uint64_t w) {
  uint64_t special = w & kHighs;
  if constexpr (M == Mode::Json) {
    special |= has_byte_below(w, 0x20) | has_byte(w, '"') | has_byte(w, '\\');
  } else if constexpr (M == Mode::OneLine) {
    special |= has_byte(w, '\n') | has_byte(w, '\r');
  } else if constexpr (M == Mode::Text) {
    special |= has_byte_below(w, 0x20) | has_byte(w, 0x7F) | has_byte(w, '\\');
  }
  return special == 0;
}

// A well-formed sequence that is a C1 control, U+0080-U+009F (C2 80..C2 9F):
// Text escapes it; every other mode copies it like any character.
template <Mode M>
constexpr bool special_sequence(const unsigned char* p) {
  if constexpr (M == Mode::Text) return p[0] == 0xC2 && p[1] <= 0x9F;
  return false;
}

void append_u00(std::string& out, unsigned char c) {
  const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
  out.append(esc, 6);
}

template <Mode M>
void append_special_ascii(std::string& out, unsigned char c) {
  if constexpr (M == Mode::Json || M == Mode::Text) {
    // Text writes a control byte exactly as JSON does (DEL too, which only
    // Text treats specially); '"' is special in JSON only.
    switch (c) {
      case '"': out.append("\\\"", 2); return;
      case '\\': out.append("\\\\", 2); return;
      case '\n': out.append("\\n", 2); return;
      case '\t': out.append("\\t", 2); return;
      case '\r': out.append("\\r", 2); return;
      case '\b': out.append("\\b", 2); return;
      case '\f': out.append("\\f", 2); return;
      default: append_u00(out, c); return;
    }
  } else if constexpr (M == Mode::OneLine) {
    out.append(c == '\n' ? "\\n" : "\\r", 2);
  } else {
    out.push_back(static_cast<char>(c));  // unreachable: Repair has no special ASCII
  }
}

template <Mode M>
void append_repaired(std::string& out, std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* const end = p + s.size();
  while (p < end) {
    // Extend a run of bytes that are copied as they are.
    const auto* run = p;
    for (;;) {
      while (end - p >= 8) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        if (!block_is_plain<M>(w)) break;
        p += 8;
      }
      if (p == end) break;
      if (plain_ascii<M>(*p)) {
        ++p;
        continue;
      }
      if (*p < 0x80) break;
      const int n = utf8_sequence_length(p, end);
      if (n < 0 || special_sequence<M>(p)) break;
      p += n;
    }
    if (p != run) out.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(p - run));
    if (p == end) break;
    if (*p < 0x80) {
      append_special_ascii<M>(out, *p);
      ++p;
    } else if (const int n = utf8_sequence_length(p, end); n > 0) {
      append_u00(out, p[1]);  // only Text gets here, with a C1 control: C2 80..9F is U+0080..U+009F
      p += n;
    } else {
      out.append("\xEF\xBF\xBD", 3);  // U+FFFD
      p += -n;
    }
  }
}

char* put_digits(char* at, unsigned v, int width) {
  for (int i = width - 1; i >= 0; --i) {
    at[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
  return at + width;
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  append_repaired<Mode::Json>(out, s);
  out.push_back('"');
}

void append_utf8_repaired(std::string& out, std::string_view s) { append_repaired<Mode::Repair>(out, s); }

void append_utf8_one_line(std::string& out, std::string_view s) { append_repaired<Mode::OneLine>(out, s); }

void append_text_escaped(std::string& out, std::string_view s) { append_repaired<Mode::Text>(out, s); }

void append_line_sample(std::string& out, std::string_view line, std::size_t max_bytes) {
  std::size_t cut = line.size();
  if (cut > max_bytes) {
    cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  }
  append_text_escaped(out, line.substr(0, cut));
  if (cut < line.size()) out += "...";
}

void append_rfc3339_ms(std::string& out, int64_t ms) {
  constexpr int64_t kMsPerDay = 86'400'000;
  // Floor division without multiplying back (days * kMsPerDay can overflow
  // for ms near INT64_MIN).
  int64_t days = ms / kMsPerDay;
  int64_t ms_of_day = ms % kMsPerDay;
  if (ms_of_day < 0) {
    ms_of_day += kMsPerDay;
    --days;
  }

  const civil::Date date = civil::civil_from_days(days);
  const int64_t year = date.year;
  const unsigned month = date.month;
  const unsigned day = date.day;

  char buf[48];
  char* at = buf;
  uint64_t abs_year = static_cast<uint64_t>(year);
  if (year < 0) {
    *at++ = '-';
    abs_year = 0 - abs_year;
  }
  if (abs_year < 10000) {
    at = put_digits(at, static_cast<unsigned>(abs_year), 4);
  } else {
    at = std::to_chars(at, buf + 24, abs_year).ptr;
  }
  const auto sod = static_cast<unsigned>(ms_of_day / 1000);
  *at++ = '-';
  at = put_digits(at, month, 2);
  *at++ = '-';
  at = put_digits(at, day, 2);
  *at++ = 'T';
  at = put_digits(at, sod / 3600, 2);
  *at++ = ':';
  at = put_digits(at, sod / 60 % 60, 2);
  *at++ = ':';
  at = put_digits(at, sod % 60, 2);
  *at++ = '.';
  at = put_digits(at, static_cast<unsigned>(ms_of_day % 1000), 3);
  *at++ = 'Z';
  out.append(buf, static_cast<std::size_t>(at - buf));
}

}  // namespace swthrottle
