// A real Prometheus for the scrape test (Debian's prometheus): started in
// its own temporary directory on a free TCP port on 127.0.0.1, with one
// scrape job on a target the test names, every second; killed by pid at
// the end.
//
// A missing binary or a failed start throws std::runtime_error: the test
// fails, it never skips, so the scrape test can never pass quietly.
#pragma once

#include <sys/types.h>

#include <string>

#include "support/temp_dir.h"
#include "support/test_daemon.h"  // http_get, HttpReply

namespace swthrottle::test {

class PrometheusServer {
 public:
  // Writes DIR/prometheus.yml with one job "swthrottle" scraping `target`
  // ("127.0.0.1:PORT") every second and starts
  //   prometheus --config.file=DIR/prometheus.yml --storage.tsdb.path=DIR/data
  //     --web.listen-address=127.0.0.1:PORT
  // then waits, at most 20 s, until GET /-/ready answers 200. A port taken
  // by another process between our probe and Prometheus's bind is retried
  // with another one.
  explicit PrometheusServer(const std::string& target);
  ~PrometheusServer();  // SIGKILL by pid, reaped; the directory removed
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // The end of Prometheus's own log, for a failure message.
  std::string log_tail() const;

  // GET /api/v1/query?query=EXPR (EXPR URL-encoded here): the JSON reply as
  // text. Throws unless the status is 200.
  std::string query(const std::string& expr) const;

 private:
  void kill9();

  TempDir dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace swthrottle::test
