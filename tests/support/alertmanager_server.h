// A real Alertmanager for the delivery tests (Debian's
// prometheus-alertmanager): started in its own temporary directory on a free
// TCP port on 127.0.0.1, clustering off, every alert routed to a receiver
// that sends nothing; killed by pid at the end.
//
// A missing binary or a failed start throws std::runtime_error: the test
// fails, it never skips, so the Alertmanager tests can never pass quietly.
#pragma once

#include <sys/types.h>

#include <string>

#include "support/temp_dir.h"
#include "support/test_daemon.h"  // HttpReply

namespace swthrottle::test {

class AlertmanagerServer {
 public:
  // Writes DIR/am.yml and starts
  //   prometheus-alertmanager --config.file=DIR/am.yml --storage.path=DIR/data
  //     --web.listen-address=127.0.0.1:PORT --cluster.listen-address=
  // then waits, at most 15 s, until GET /-/ready answers 200. A port taken
  // by another process between our probe and Alertmanager's bind is retried
  // with another one.
  AlertmanagerServer();
  ~AlertmanagerServer();  // SIGKILL by pid, reaped; the directory removed
  AlertmanagerServer(const AlertmanagerServer&) = delete;
  AlertmanagerServer& operator=(const AlertmanagerServer&) = delete;

  std::string url() const;  // "http://127.0.0.1:PORT"
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& dir() const { return dir_.path(); }
  // The end of Alertmanager's own log (its stdout and stderr), for a failure message.
  std::string log_tail() const;

  // One HTTP/1.0 request over its own connection (so the reply is never
  // chunked and ends with the connection), 5 s at most. Throws
  // std::runtime_error when it cannot connect or the reply does not come.
  HttpReply get(const std::string& path) const;
  HttpReply post_json(const std::string& path, const std::string& body) const;
  // GET /api/v2/alerts (with `query`, e.g. "?active=true"): the JSON array
  // as text. Throws unless the status is 200.
  std::string alerts(const std::string& query = "") const;

  void kill9();  // SIGKILL + reap; the destructor's, for a test of a vanished server

 private:
  TempDir dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace swthrottle::test
