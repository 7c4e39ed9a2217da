// http_request.h: what the metrics endpoint makes of a request head.
#include "metrics/http_request.h"

#include <doctest/doctest.h>

#include <string>

using swthrottle::metrics::head_end;
using swthrottle::metrics::kMaxHeadBytes;
using swthrottle::metrics::parse_request_head;

TEST_CASE("http request: the head ends at its blank line, CRLF or LF") {
  CHECK(head_end("GET / HTTP/1.1\r\n\r\n") == 18);
  CHECK(head_end("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /next") == 27);
  CHECK(head_end("GET / HTTP/1.1\n\n") == 16);
  CHECK(head_end("GET / HTTP/1.1\r\nHost: x\r\n") == 0);
  CHECK(head_end("GET / HTTP/1.1\r\nHost: x\r\n\r") == 0);
  CHECK(head_end("") == 0);
}

TEST_CASE("http request: method, path, keep-alive and a body") {
  struct Row {
    std::string head;
    int error;
    std::string path;
    bool keep_alive;
    bool head_only;
    bool body;
  };
  const Row rows[] = {
      {"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n", 0, "/metrics", true, false, false},
      {"GET /metrics?x=1&y HTTP/1.1\r\n\r\n", 0, "/metrics", true, false, false},
      {"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n", 0, "/healthz", false, false, false},
      {"GET /healthz HTTP/1.1\r\nconnection: Upgrade, CLOSE\r\n\r\n", 0, "/healthz", false, false, false},
      {"GET / HTTP/1.0\r\n\r\n", 0, "/", false, false, false},
      {"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", 0, "/", true, false, false},
      {"HEAD /metrics HTTP/1.1\r\n\r\n", 0, "/metrics", true, true, false},
      {"GET / HTTP/1.1\nAccept: */*\n\n", 0, "/", true, false, false},
      {"GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 0, "/", true, false, false},
      {"GET / HTTP/1.1\r\nContent-Length: 12\r\n\r\n", 0, "/", true, false, true},
      {"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 0, "/", true, false, true},
      {"POST /metrics HTTP/1.1\r\n\r\n", 405, "/metrics", true, false, false},
      {"GET /metrics HTTP/2.0\r\n\r\n", 505, "", false, false, false},
      {"GET /metrics\r\n\r\n", 400, "", false, false, false},
      {"GET  /metrics HTTP/1.1\r\n\r\n", 400, "", false, false, false},
      {"GET metrics HTTP/1.1\r\n\r\n", 400, "", false, false, false},
      {"GET / FTP/1.1\r\n\r\n", 400, "", false, false, false},
      {"GET / HTTP/1.1\r\nno colon here\r\n\r\n", 400, "/", true, false, false},
      {"GET / HTTP/1.1\r\n: empty name\r\n\r\n", 400, "/", true, false, false},
  };
  for (const Row& r : rows) {
    CAPTURE(r.head);
    const auto h = parse_request_head(r.head);
    CHECK(h.error == r.error);
    CHECK(h.path == r.path);
    CHECK(h.keep_alive == r.keep_alive);
    CHECK(h.head_only == r.head_only);
    CHECK(h.has_body == r.body);
  }
}

TEST_CASE("http request: a head over 8 KiB is 431") {
  std::string head = "GET / HTTP/1.1\r\nX-Pad: " + std::string(kMaxHeadBytes, 'a') + "\r\n\r\n";
  CHECK(parse_request_head(head).error == 431);
  std::string fits = "GET / HTTP/1.1\r\nX-Pad: " + std::string(kMaxHeadBytes - 64, 'a') + "\r\n\r\n";
  CHECK(parse_request_head(fits).error == 0);
}
