#include "support/http_receiver.h"

// cpp-httplib 0.11 (Debian 12) is not clean under our warnings.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wextra"
#pragma GCC diagnostic ignored "-Wall"
#include <httplib.h>
#pragma GCC diagnostic pop

#include <stdexcept>

namespace swthrottle::test {

namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::string> ReceivedRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (iequals(key, name)) return value;
  }
  return std::nullopt;
}

HttpReceiver::HttpReceiver() { listen(0); }

HttpReceiver::~HttpReceiver() { stop(); }

std::string HttpReceiver::url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
}

void HttpReceiver::respond(std::vector<Reply> script) {
  std::lock_guard lock(mu_);
  script_.assign(std::make_move_iterator(script.begin()), std::make_move_iterator(script.end()));
}

void HttpReceiver::judge(Judge j) {
  std::lock_guard lock(mu_);
  judge_ = std::move(j);
}

void HttpReceiver::otherwise(Reply reply) {
  std::lock_guard lock(mu_);
  otherwise_ = std::move(reply);
}

std::vector<ReceivedRequest> HttpReceiver::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

std::size_t HttpReceiver::count() const {
  std::lock_guard lock(mu_);
  return requests_.size();
}

bool HttpReceiver::wait_for(std::size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return arrived_.wait_for(lock, timeout, [&] { return requests_.size() >= n; });
}

bool HttpReceiver::running() const { return server_ != nullptr; }

void HttpReceiver::listen(int port) {
  auto server = std::make_unique<httplib::Server>();
  // Short keep-alive: stop() waits for idle connections to time out.
  server->set_keep_alive_timeout(kKeepAliveSeconds);
  server->set_keep_alive_max_count(1000);
  const auto handler = [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); };
  // Every method a client may send: the tests check the method too.
  server->Get(".*", handler);
  server->Post(".*", handler);
  server->Put(".*", handler);
  server->Patch(".*", handler);
  server->Delete(".*", handler);
  server->Options(".*", handler);
  if (port == 0) {
    port_ = server->bind_to_any_port("127.0.0.1");
    if (port_ < 0) throw std::runtime_error("http receiver: cannot listen on 127.0.0.1");
  } else if (!server->bind_to_port("127.0.0.1", port)) {
    throw std::runtime_error("http receiver: cannot listen again on 127.0.0.1:" + std::to_string(port));
  }
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  // The socket listens from here on (a client's connection waits in the
  // backlog until the loop accepts it), so the test can go at once.
  httplib::Server* raw = server.get();
  server_ = std::move(server);
  thread_ = std::thread([raw] { raw->listen_after_bind(); });
  // httplib's stop() does nothing until the loop has marked itself running:
  // wait for that, so that a stop() right after start() cannot be lost.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!raw->is_running()) {
    if (std::chrono::steady_clock::now() > deadline) {
      // ~HttpReceiver will not run: let the thread and its server go, as a
      // joinable std::thread would terminate the test program.
      thread_.detach();
      (void)server_.release();
      throw std::runtime_error("http receiver: the server thread did not start");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void HttpReceiver::start() {
  if (server_ != nullptr) return;
  listen(port_);
}

void HttpReceiver::stop() {
  if (server_ == nullptr) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stopping_cv_.notify_all();
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

void HttpReceiver::handle(const httplib::Request& req, httplib::Response& res) {
  Reply reply;
  {
    std::lock_guard lock(mu_);
    ReceivedRequest r;
    r.method = req.method;
    r.path = req.path;
    for (const auto& [name, value] : req.params) r.query += (r.query.empty() ? "" : "&") + name + "=" + value;
    for (const auto& [name, value] : req.headers) r.headers.emplace_back(name, value);
    r.body = req.body;
    r.received_at = std::chrono::steady_clock::now();
    r.remote_port = req.remote_port;
    std::optional<Reply> judged;
    if (judge_) judged = judge_(r);
    requests_.push_back(std::move(r));
    if (judged) {
      reply = std::move(*judged);
    } else if (script_.empty()) {
      reply = otherwise_;
    } else {
      reply = std::move(script_.front());
      script_.pop_front();
    }
  }
  arrived_.notify_all();
  if (reply.delay.count() > 0) {
    std::unique_lock lock(mu_);
    stopping_cv_.wait_for(lock, reply.delay, [&] { return stopping_; });
  }
  res.status = reply.status;
  std::string_view rest = reply.headers;
  while (!rest.empty()) {
    const std::size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    res.set_header(std::string(trim(line.substr(0, colon))), std::string(trim(line.substr(colon + 1))));
  }
  res.set_content(reply.body, reply.body.starts_with("{") ? "application/json" : "text/plain");
}

}  // namespace swthrottle::test
