// The head of one HTTP/1.x request, as the metrics endpoint reads it (man
// page: METRICS): pure, so that what a client may send is decided here and
// tested with byte strings, apart from the sockets (http_server.h).
//
// What is read: the request line (method, target, version) and the headers
// that change the answer: Connection (keep-alive or close), Content-Length
// and Transfer-Encoding (a request with a body is answered, then the
// connection closed: the endpoint never reads a body). Everything else is
// skipped. Lines end in CRLF or LF.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace swthrottle::metrics {

// The most a request head may hold (request line and headers); more is 431.
inline constexpr std::size_t kMaxHeadBytes = 8192;

struct RequestHead {
  int error = 0;            // 0, or the status that answers a head this endpoint does not take (400, 405, 431, 505)
  bool head_only = false;   // HEAD: the headers of a GET, without the body
  std::string path;         // the target without its query ("/metrics?x=1" -> "/metrics")
  bool keep_alive = false;  // what the client asks for: HTTP/1.1 unless "close", HTTP/1.0 only with "keep-alive"
  bool has_body = false;    // Content-Length above 0, or Transfer-Encoding
};

// Where the head in `buffer` ends (just past its blank line), or 0 while it
// is not complete.
std::size_t head_end(std::string_view buffer);

// Reads a complete head (as head_end() found it, blank line included).
RequestHead parse_request_head(std::string_view head);

}  // namespace swthrottle::metrics
