#include "support/prometheus_server.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace swthrottle::test {

namespace {

// Prometheus 2.42 is ready in one or two seconds (it replays an empty
// write-ahead log); a CI machine whose two cores run other builds too may
// take several times that.
constexpr auto kStartTimeout = std::chrono::seconds(20);

// Percent-encodes everything but the unreserved characters of RFC 3986.
std::string url_encode(const std::string& s) {
  std::string out;
  for (const unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace

PrometheusServer::PrometheusServer(const std::string& target) {
  // scrape_timeout must not exceed the interval (Prometheus refuses the
  // config): both 1 s, so the test waits seconds, not the default minute.
  dir_.write("prometheus.yml",
             "global:\n"
             "  scrape_interval: 1s\n"
             "  scrape_timeout: 1s\n"
             "scrape_configs:\n"
             "  - job_name: swthrottle\n"
             "    static_configs:\n"
             "      - targets: ['" +
                 target + "']\n");
  const std::string binary = find_program({"prometheus"});
  if (binary.empty())
    throw std::runtime_error(
        "prometheus is not installed (apt-get install prometheus): the scrape test needs a real one");
  // Every path absolute: Prometheus resolves nothing relative to our directory.
  const StartedDaemon d = start_http_daemon(
      "prometheus",
      [&](int port) {
        return std::vector<std::string>{binary, "--config.file=" + dir_.file("prometheus.yml"),
                                        "--storage.tsdb.path=" + dir_.file("data"),
                                        "--web.listen-address=127.0.0.1:" + std::to_string(port)};
      },
      dir_.file("prometheus.log"), kStartTimeout);
  pid_ = d.pid;
  port_ = d.port;
}

PrometheusServer::~PrometheusServer() { kill9(); }

std::string PrometheusServer::log_tail() const { return file_tail(dir_.file("prometheus.log")); }

std::string PrometheusServer::query(const std::string& expr) const {
  const std::string path = "/api/v1/query?query=" + url_encode(expr);
  HttpReply r = http_get(port_, path);
  if (r.status != 200) throw std::runtime_error("GET " + path + ": status " + std::to_string(r.status) + ": " + r.body);
  return r.body;
}

void PrometheusServer::kill9() { kill_and_reap(pid_); }

}  // namespace swthrottle::test
