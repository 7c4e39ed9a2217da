// HttpClient: one POST at a time over libcurl (Debian libcurl4-openssl-dev),
// for the delivery pool's worker of one destination. Nothing here decides
// what a response means (retry_policy.h does); it reports what happened.
//
// Thread-safety: one HttpClient per thread (a libcurl easy handle, reused
// for keep-alive). curl_global_init is done once for the process, the first
// time an HttpClient is made.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace swthrottle::delivery {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value" each (Content-Type included by the caller)
  std::string body;
  // The whole request: connect, send, response (at least 1 ms: libcurl takes 0 as "none").
  std::chrono::milliseconds timeout{10'000};
  // Basic auth "user:password" ("" : none); never logged.
  std::string basic_auth;
};

struct HttpResponse {
  long status = 0;    // the HTTP status; 0 when there was no response (connection refused, DNS, timeout, reset)
  std::string error;  // when status == 0: what went wrong, one line ("connection refused", "timed out after 10000 ms")
  // Retry-After (RFC 9110 §10.2.3: delay-seconds or an HTTP-date), as ms
  // from `now_wall_ms` of the call (0 for a date in the past); absent when
  // the response had none or it did not parse.
  std::optional<int64_t> retry_after_ms;
  std::string body;  // the first 4 KiB, for messages
};

class HttpClient {
 public:
  HttpClient();
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // POSTs `request`. `now_wall_ms`: the wall clock now, to turn a Retry-After
  // date into a delay. Never throws. Only http:// and https:// URLs; without
  // a Content-Type header libcurl sends application/x-www-form-urlencoded.
  HttpResponse post(const HttpRequest& request, int64_t now_wall_ms);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Retry-After's value (delay-seconds, or an IMF-fixdate / RFC 850 / asctime
// HTTP-date) as ms after now_wall_ms; nullopt when it is neither.
std::optional<int64_t> parse_retry_after(const std::string& value, int64_t now_wall_ms);

}  // namespace swthrottle::delivery
