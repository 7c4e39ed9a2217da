// HttpReceiver: a scripted HTTP server on 127.0.0.1 for the delivery tests,
// on cpp-httplib (plain HTTP) in a thread of its own. It records every
// request and answers from a script:
//
//   HttpReceiver receiver;  // listening on a free port
//   receiver.respond({{503}, {503}, {429, "Retry-After: 2"}, {200}});  // then 200 forever
//   post to receiver.url("/hook") ...
//   REQUIRE(receiver.wait_for(4));
//   CHECK(receiver.requests()[0].body == "...");
//   receiver.stop();   // connection refused from now on
//   receiver.start();  // back, on the same port
//
// A reply can also be delayed (to make a client time out): a delay ends
// early when the receiver stops, so a test never waits it out.
//
// stop() (and the destructor) waits for the requests in flight and for open
// keep-alive connections to notice; a client holding an idle keep-alive
// connection can make that take up to kKeepAliveSeconds.
//
// Thread-safe: the test's thread and the server's threads share it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace swthrottle::test {

// One answer of the script: {503}, {429, "Retry-After: 2"}, {404, "", "no such hook"},
// {200, "", "", 5s}.
struct Reply {
  // Not an aggregate, so that {503} is no -Wmissing-field-initializers.
  Reply(int code = 200, std::string header_lines = "", std::string content = "",
        std::chrono::milliseconds wait = std::chrono::milliseconds(0))
      : status(code), headers(std::move(header_lines)), body(std::move(content)), delay(wait) {}

  int status = 200;
  // Response headers, "Name: value" lines separated by "\n" ("" : none).
  std::string headers;
  std::string body;
  std::chrono::milliseconds delay{0};  // before answering
};

struct ReceivedRequest {
  std::string method;                                        // "POST"
  std::string path;                                          // "/hook" (without the query)
  std::string query;                                         // "a=1&b=2" (decoded, sorted by name), "" : none
  std::vector<std::pair<std::string, std::string>> headers;  // names as written, sorted by name (httplib's order)
  std::string body;
  std::chrono::steady_clock::time_point received_at;  // when the whole request was in
  int remote_port = -1;  // the client's port: the same for requests on one keep-alive connection

  // The first header `name` (case-insensitive), or nullopt.
  std::optional<std::string> header(std::string_view name) const;
};

class HttpReceiver {
 public:
  // How long an idle keep-alive connection stays open (cpp-httplib's default
  // is 5 s); it bounds how long stop() can take.
  static constexpr int kKeepAliveSeconds = 1;

  // Listens on a free port of 127.0.0.1 and starts serving. Throws
  // std::runtime_error when it cannot.
  HttpReceiver();
  ~HttpReceiver();
  HttpReceiver(const HttpReceiver&) = delete;
  HttpReceiver& operator=(const HttpReceiver&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:PORT" + path.
  std::string url(std::string_view path = "/") const;

  // The next requests get these replies, in order (replacing what was left
  // of the previous script); once it runs out, every request gets
  // `otherwise` (by default a plain 200).
  void respond(std::vector<Reply> script);
  void otherwise(Reply reply);
  // A receiver that answers by what it got (a vendor's API: 2xx for a body
  // its schema takes, its refusal else): `judge` gives the reply of each
  // request when it returns one, before the script.
  using Judge = std::function<std::optional<Reply>(const ReceivedRequest&)>;
  void judge(Judge j);

  // Every request so far, in the order they arrived.
  std::vector<ReceivedRequest> requests() const;
  std::size_t count() const;
  // Waits until at least `n` requests have arrived, at most `timeout`;
  // false when they did not.
  bool wait_for(std::size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

  // Stops listening and closes every connection: a client now gets
  // "connection refused". Delayed replies end at once. Idempotent.
  void stop();
  // Listens again on the same port. Throws std::runtime_error when it cannot.
  void start();
  bool running() const;

 private:
  void listen(int port);  // port 0: any free one
  void handle(const httplib::Request& request, httplib::Response& response);

  int port_ = 0;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;

  mutable std::mutex mu_;
  mutable std::condition_variable arrived_;  // a request was recorded
  std::condition_variable stopping_cv_;      // wakes delayed replies
  bool stopping_ = false;
  std::deque<Reply> script_;
  Reply otherwise_;
  Judge judge_;
  std::vector<ReceivedRequest> requests_;
};

}  // namespace swthrottle::test
