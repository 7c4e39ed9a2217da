#include "input/docker_record.h"

#include <cstdint>

#include "match/stamp_forms.h"

namespace swthrottle::input {
namespace {

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Four hex digits at s[i], or -1.
int32_t hex4(std::string_view s, std::size_t i) {
  if (i + 4 > s.size()) return -1;
  int32_t v = 0;
  for (std::size_t k = i; k < i + 4; ++k) {
    const int h = hex(s[k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

void put_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// The JSON string whose opening quote is at s[i], unescaped onto `out`
// (nullptr: only skipped). Returns the index after its closing quote, or
// npos when it does not close or holds a bad escape.
std::size_t string_at(std::string_view s, std::size_t i, std::string* out) {
  if (i >= s.size() || s[i] != '"') return std::string_view::npos;
  ++i;
  while (i < s.size()) {
    // The run of plain bytes up to the next quote or backslash, at once.
    std::size_t j = i;
    while (j < s.size() && s[j] != '"' && s[j] != '\\') ++j;
    if (out) out->append(s.data() + i, j - i);
    if (j >= s.size()) return std::string_view::npos;
    if (s[j] == '"') return j + 1;
    if (j + 1 >= s.size()) return std::string_view::npos;
    const char e = s[j + 1];
    i = j + 2;
    char plain = 0;
    switch (e) {
      case '"': plain = '"'; break;
      case '\\': plain = '\\'; break;
      case '/': plain = '/'; break;
      case 'b': plain = '\b'; break;
      case 'f': plain = '\f'; break;
      case 'n': plain = '\n'; break;
      case 'r': plain = '\r'; break;
      case 't': plain = '\t'; break;
      case 'u': {
        int32_t cp = hex4(s, i);
        if (cp < 0) return std::string_view::npos;
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          // A high surrogate takes the low one after it; alone it is U+FFFD.
          const int32_t low = i + 1 < s.size() && s[i] == '\\' && s[i + 1] == 'u' ? hex4(s, i + 2) : -1;
          if (low >= 0xDC00 && low <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            i += 6;
          } else {
            cp = 0xFFFD;
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        if (out) put_utf8(*out, static_cast<uint32_t>(cp));
        continue;
      }
      default: return std::string_view::npos;
    }
    if (out) out->push_back(plain);
  }
  return std::string_view::npos;
}

// The JSON object whose '{' is at s[i], skipped: the index after its '}'.
std::size_t object_at(std::string_view s, std::size_t i) {
  if (i >= s.size() || s[i] != '{') return std::string_view::npos;
  int depth = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '"') {
      i = string_at(s, i, nullptr);
      if (i == std::string_view::npos) return i;
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if ((c == '}' || c == ']') && --depth == 0) return i + 1;
    ++i;
  }
  return std::string_view::npos;
}

// `"key":` at s[i] (no blanks: dockerd writes none). The index after it.
std::size_t key_at(std::string_view s, std::size_t i, std::string_view key) {
  if (s.size() - i < key.size() + 3 || s[i] != '"' || s.compare(i + 1, key.size(), key) != 0 ||
      s[i + 1 + key.size()] != '"' || s[i + 2 + key.size()] != ':')
    return std::string_view::npos;
  return i + key.size() + 3;
}

}  // namespace

bool read_docker(std::string_view line, EnvelopeRecord& rec, std::string& text) {
  constexpr std::size_t npos = std::string_view::npos;
  const std::size_t kept = text.size();
  auto fail = [&] {
    text.resize(kept);
    return false;
  };
  if (line.empty() || line[0] != '{') return false;
  std::size_t i = 1;
  bool newline = false;
  if (std::size_t at = key_at(line, i, "log"); at != npos) {
    i = string_at(line, at, &text);
    if (i == npos) return fail();
    newline = text.size() > kept && text.back() == '\n';
    if (newline) {
      text.pop_back();
      if (text.size() > kept && text.back() == '\r') text.pop_back();
    }
    if (i < line.size() && line[i] == ',') ++i;
  }
  rec.stream = match::Stream::None;
  if (std::size_t at = key_at(line, i, "stream"); at != npos) {
    const std::string_view rest = line.substr(at);
    if (rest.starts_with("\"stdout\"")) rec.stream = match::Stream::Stdout;
    else if (rest.starts_with("\"stderr\"")) rec.stream = match::Stream::Stderr;
    else return fail();
    i = at + 8;
    if (i < line.size() && line[i] == ',') ++i;
  }
  if (std::size_t at = key_at(line, i, "attrs"); at != npos) {
    i = object_at(line, at);
    if (i == npos) return fail();
    if (i < line.size() && line[i] == ',') ++i;
  }
  const std::size_t at = key_at(line, i, "time");
  if (at == npos || at >= line.size() || line[at] != '"') return fail();
  const std::size_t close = line.find('"', at + 1);
  if (close == npos || close + 2 != line.size() || line[close + 1] != '}') return fail();
  rec.t_ms = match::stamp::rfc3339_utc_ms(line.substr(at + 1, close - at - 1));
  // A record needs its time and a stream (dockerd writes both; an unknown
  // stream is stdout's neighbour, not a plain line).
  if (rec.t_ms == match::stamp::kNoTime || rec.stream == match::Stream::None) return fail();
  rec.partial = !newline;
  return true;
}

}  // namespace swthrottle::input
