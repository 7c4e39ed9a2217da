#include "metrics/http_request.h"

#include <algorithm>
#include <cctype>

namespace swthrottle::metrics {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Whether a comma-separated header value holds `token` (Connection: keep-alive, Upgrade).
bool has_token(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    if (iequals(trim(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

// The next line of `rest` (without its CRLF or LF), moving `rest` past it.
std::string_view next_line(std::string_view& rest) {
  const std::size_t nl = rest.find('\n');
  std::string_view line = rest.substr(0, nl);
  rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

std::size_t head_end(std::string_view buffer) {
  // The blank line: "\r\n\r\n", or "\n\n" (LF alone, as some clients write).
  for (std::size_t at = buffer.find('\n'); at != std::string_view::npos; at = buffer.find('\n', at + 1)) {
    if (at + 1 < buffer.size() && buffer[at + 1] == '\n') return at + 2;
    if (at + 2 < buffer.size() && buffer[at + 1] == '\r' && buffer[at + 2] == '\n') return at + 3;
  }
  return 0;
}

RequestHead parse_request_head(std::string_view head) {
  RequestHead r;
  if (head.size() > kMaxHeadBytes) {
    r.error = 431;
    return r;
  }
  std::string_view rest = head;
  // "METHOD TARGET HTTP/1.x"
  const std::string_view line = next_line(rest);
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    r.error = 400;
    return r;
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!version.starts_with("HTTP/")) {
    r.error = 400;
    return r;
  }
  const bool http11 = version == "HTTP/1.1";
  if (!http11 && version != "HTTP/1.0") {
    r.error = 505;
    return r;
  }
  if (target.empty() || target.front() != '/') {
    r.error = 400;
    return r;
  }
  r.path = std::string(target.substr(0, target.find('?')));
  r.keep_alive = http11;
  for (std::string_view h = next_line(rest); !h.empty(); h = next_line(rest)) {
    const std::size_t colon = h.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      r.error = 400;
      return r;
    }
    const std::string_view name = h.substr(0, colon);
    const std::string_view value = trim(h.substr(colon + 1));
    if (iequals(name, "Connection")) {
      if (has_token(value, "close")) r.keep_alive = false;
      else if (has_token(value, "keep-alive")) r.keep_alive = true;
    } else if (iequals(name, "Content-Length")) {
      r.has_body = r.has_body || value.find_first_not_of('0') != std::string_view::npos;
    } else if (iequals(name, "Transfer-Encoding")) {
      r.has_body = true;
    }
  }
  if (method == "HEAD") {
    r.head_only = true;
  } else if (method != "GET") {
    r.error = 405;
  }
  return r;
}

}  // namespace swthrottle::metrics
