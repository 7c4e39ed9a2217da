// The head of an HTTP request as the metrics endpoint reads it
// (metrics/http_request.h): whatever bytes a client sends, head_end() finds
// the first blank line or says the head is not complete, and
// parse_request_head() answers with a status the endpoint knows or a path
// it can route, never anything in between.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "metrics/http_request.h"

namespace swthrottle::fuzz {

inline void http_head_one_input(const uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::size_t end = metrics::head_end(bytes);
  if (end != 0) {
    // Just past a blank line ("\n\n" or "\n\r\n"), and the first one: one
    // byte fewer holds no complete head, and what follows does not matter.
    FUZZ_CHECK(end >= 2 && end <= size && bytes[end - 1] == '\n');
    FUZZ_CHECK(bytes[end - 2] == '\n' || (end >= 3 && bytes[end - 2] == '\r' && bytes[end - 3] == '\n'));
    FUZZ_CHECK(metrics::head_end(bytes.substr(0, end - 1)) == 0);
    FUZZ_CHECK(metrics::head_end(bytes.substr(0, end)) == end);
  }
  // The server parses what head_end() found, or the whole buffer when it
  // is over the limit: both are fed here.
  const std::string_view head = end != 0 ? bytes.substr(0, end) : bytes;
  const metrics::RequestHead r = metrics::parse_request_head(head);
  FUZZ_CHECK(r.error == 0 || r.error == 400 || r.error == 405 || r.error == 431 || r.error == 505);
  if (head.size() > metrics::kMaxHeadBytes) FUZZ_CHECK(r.error == 431);
  if (r.error == 0 || r.error == 405) {
    FUZZ_CHECK(!r.path.empty() && r.path.front() == '/');
    FUZZ_CHECK(r.path.find('?') == std::string::npos && r.path.find(' ') == std::string::npos);
    FUZZ_CHECK(r.path.find('\n') == std::string::npos);
  }
  if (r.head_only) FUZZ_CHECK(r.error == 0);
}

}  // namespace swthrottle::fuzz
