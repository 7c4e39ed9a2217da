// HttpClient against a real receiver on 127.0.0.1 (support/http_receiver.h).
// Timing is asserted only as a generous upper bound: a timeout must not hang.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "delivery/http_client.h"
#include "support/http_receiver.h"

using swthrottle::delivery::HttpClient;
using swthrottle::delivery::HttpRequest;
using swthrottle::delivery::HttpResponse;
using swthrottle::test::HttpReceiver;
using swthrottle::test::Reply;
using namespace std::chrono_literals;

namespace {

// Wed, 21 Oct 2015 07:28:00 GMT, in ms since the epoch: the wall clock "now"
// of every post, so that a Retry-After date gives an exact delay.
constexpr int64_t kOct21 = 1'445'412'480'000;

HttpRequest json_post(const std::string& url, std::string body) {
  HttpRequest r;
  r.url = url;
  r.headers = {"Content-Type: application/json"};
  r.body = std::move(body);
  r.timeout = 10s;
  return r;
}

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

TEST_CASE("delivery http: a POST arrives with its method, path, body bytes and headers") {
  HttpReceiver receiver;
  HttpClient client;
  // Over 1 MiB (libcurl would otherwise send "Expect: 100-continue"), with a
  // NUL, UTF-8 and line breaks: the bytes must arrive as they are.
  std::string body = "{\"id\":\"abc\",\"text\":\"caf\xC3\xA9\\n\"}\r\n";
  body += std::string(1, '\0');
  body += std::string(1'100'000, 'x');
  HttpRequest request = json_post(receiver.url("/hooks/ops?team=a"), body);
  request.headers.push_back("Idempotency-Key: abc");
  request.headers.push_back("X-Swthrottle-Rule: sshd-failures");

  const HttpResponse response = client.post(request, kOct21);
  CHECK(response.status == 200);
  CHECK(response.error.empty());
  CHECK_FALSE(response.retry_after_ms.has_value());

  REQUIRE(receiver.wait_for(1));
  const auto got = receiver.requests();
  REQUIRE(got.size() == 1);
  CHECK(got[0].method == "POST");
  CHECK(got[0].path == "/hooks/ops");
  CHECK(got[0].body.size() == body.size());
  CHECK(got[0].body == body);
  CHECK(got[0].header("Content-Type") == "application/json");
  CHECK(got[0].header("Idempotency-Key") == "abc");
  CHECK(got[0].header("X-Swthrottle-Rule") == "sshd-failures");
  CHECK(got[0].header("Content-Length") == std::to_string(body.size()));
  CHECK_FALSE(got[0].header("Authorization").has_value());
  CHECK_FALSE(got[0].header("Expect").has_value());
  CHECK(got[0].header("User-Agent").value_or("").starts_with("swthrottle/"));
}

TEST_CASE("delivery http: basic auth is sent when set, and only then") {
  HttpReceiver receiver;
  HttpClient client;
  HttpRequest request = json_post(receiver.url("/am"), "[]");
  request.basic_auth = "alice:s3cr:et";  // a colon in the password is the password's
  CHECK(client.post(request, kOct21).status == 200);
  // The same handle next, without auth: none may carry over.
  request.basic_auth.clear();
  CHECK(client.post(request, kOct21).status == 200);

  REQUIRE(receiver.wait_for(2));
  const auto got = receiver.requests();
  CHECK(got[0].header("Authorization") == "Basic YWxpY2U6czNjcjpldA==");
  CHECK_FALSE(got[1].header("Authorization").has_value());
}

TEST_CASE("delivery http: statuses, Retry-After and the body come back as the receiver answered") {
  HttpReceiver receiver;
  receiver.respond({
      {201},
      {204},
      {404, "", "no such hook"},
      {500, "", std::string(10'000, 'e')},
      {503, "Retry-After: 2"},
      {429, "Retry-After: Wed, 21 Oct 2015 07:29:30 GMT"},
      {503, "Retry-After: later"},
  });
  HttpClient client;
  const HttpRequest request = json_post(receiver.url("/hook"), "{}");

  HttpResponse r = client.post(request, kOct21);
  CHECK(r.status == 201);
  r = client.post(request, kOct21);
  CHECK(r.status == 204);
  CHECK(r.body.empty());
  r = client.post(request, kOct21);
  CHECK(r.status == 404);
  CHECK(r.body == "no such hook");
  CHECK(r.error.empty());
  r = client.post(request, kOct21);
  CHECK(r.status == 500);
  CHECK(r.body == std::string(4096, 'e'));  // the first 4 KiB only
  r = client.post(request, kOct21);
  CHECK(r.status == 503);
  CHECK(r.retry_after_ms == 2'000);
  r = client.post(request, kOct21);
  CHECK(r.status == 429);
  CHECK(r.retry_after_ms == 90'000);
  r = client.post(request, kOct21);
  CHECK(r.status == 503);
  CHECK_FALSE(r.retry_after_ms.has_value());  // did not parse
  r = client.post(request, kOct21);           // the script ran out: 200 from here on
  CHECK(r.status == 200);
  CHECK(receiver.count() == 8);
}

TEST_CASE("delivery http: a redirect is not followed") {
  HttpReceiver receiver;
  receiver.respond({{302, "Location: /elsewhere"}, {307, "Location: /elsewhere"}});
  HttpClient client;
  const HttpRequest request = json_post(receiver.url("/hook"), "{}");
  CHECK(client.post(request, kOct21).status == 302);
  CHECK(client.post(request, kOct21).status == 307);
  const auto got = receiver.requests();
  REQUIRE(got.size() == 2);
  CHECK(got[0].path == "/hook");
  CHECK(got[1].path == "/hook");
}

TEST_CASE("delivery http: a receiver that is down is status 0 and a connection error") {
  HttpReceiver receiver;
  HttpClient client;
  const HttpRequest request = json_post(receiver.url("/hook"), "{}");
  REQUIRE(client.post(request, kOct21).status == 200);  // a keep-alive connection is now open

  receiver.stop();
  const HttpResponse down = client.post(request, kOct21);
  CHECK(down.status == 0);
  CAPTURE(down.error);
  CHECK(lowercase(down.error).find("connect") != std::string::npos);
  CHECK(lowercase(down.error).find("connection refused") != std::string::npos);
  CHECK(down.error.find('\n') == std::string::npos);
  CHECK_FALSE(down.retry_after_ms.has_value());

  // Back on the same port: the same client reaches it again, on a new
  // connection (the old one died with the receiver).
  receiver.start();
  const HttpResponse up = client.post(request, kOct21);
  CHECK(up.status == 200);
  CHECK(up.error.empty());
  CHECK(receiver.count() == 2);
}

TEST_CASE("delivery http: a receiver slower than the timeout is status 0 and a timeout error, in time") {
  HttpReceiver receiver;
  receiver.respond({{200, "", "", 20s}});  // cut short when the receiver stops
  HttpClient client;
  HttpRequest request = json_post(receiver.url("/slow"), "{}");
  request.timeout = 300ms;

  const auto start = std::chrono::steady_clock::now();
  const HttpResponse r = client.post(request, kOct21);
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(r.status == 0);
  CAPTURE(r.error);
  CHECK(lowercase(r.error).find("timed out") != std::string::npos);
  CHECK(r.error.find('\n') == std::string::npos);
  // The request did arrive: it is the answer that was too slow.
  CHECK(receiver.count() == 1);
  // Upper bound only, and generous: what matters is that it does not wait
  // for the 20 s reply.
  CHECK(took < request.timeout + 2s);
}

TEST_CASE("delivery http: keep-alive, two posts on one client both arrive on one connection") {
  HttpReceiver receiver;
  HttpClient client;
  CHECK(client.post(json_post(receiver.url("/a"), "1"), kOct21).status == 200);
  CHECK(client.post(json_post(receiver.url("/b"), "2"), kOct21).status == 200);
  REQUIRE(receiver.wait_for(2));
  const auto got = receiver.requests();
  CHECK(got[0].path == "/a");
  CHECK(got[0].body == "1");
  CHECK(got[1].path == "/b");
  CHECK(got[1].body == "2");
  CHECK(got[0].remote_port == got[1].remote_port);
}

TEST_CASE("delivery http: nothing listening at all, and a URL libcurl cannot use, are errors, not throws") {
  HttpClient client;
  int port = 0;
  {
    HttpReceiver gone;
    port = gone.port();
  }
  HttpResponse r = client.post(json_post("http://127.0.0.1:" + std::to_string(port) + "/", "{}"), kOct21);
  CHECK(r.status == 0);
  CHECK_FALSE(r.error.empty());
  // Only http and https: a file:// URL is refused, not read.
  r = client.post(json_post("file:///etc/hostname", "{}"), kOct21);
  CHECK(r.status == 0);
  CAPTURE(r.error);
  CHECK_FALSE(r.error.empty());
}
