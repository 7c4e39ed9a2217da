// A TCP fault proxy between a test's client and a server (the fleet tests:
// swthrottle and redis-server), for the network faults of DESIGN.md §8.12 on a
// kernel without netem. It runs tests/support/fault_proxy.py (Python 3,
// stdlib only); the modes and what each does to open and new connections are
// described in that file's header.
//
//   auto proxy = FaultProxy::to_tcp("127.0.0.1", redis_port);
//   run swthrottle against proxy.url() ...
//   proxy.blackhole();   // a partition without RST
//   proxy.pass();        // healed: new connections work (blackholed ones stay dead)
//
// Every wait is bounded (start-up ~5 s, each control command ~5 s) and a
// failure throws std::runtime_error, a failed test for doctest. The
// destructor kills the proxy with SIGKILL and reaps it, so a failed CHECK
// never leaves one behind; the proxy also exits by itself when the test
// process dies (it watches its stdin, a pipe only the test holds).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace swthrottle::test {

class TempDir;

// The counters of the proxy's `stats` command.
struct FaultProxyCounters {
  long long conns = 0;       // connections accepted on the data port since start
  long long bytes_up = 0;    // bytes forwarded to the target
  long long bytes_down = 0;  // bytes forwarded to the clients
};

class FaultProxy {
 public:
  // A proxy to host:port, or to a unix socket. Throws std::runtime_error when
  // python3 cannot be started or the proxy does not report its ports in time.
  static FaultProxy to_tcp(const std::string& host, int port);
  static FaultProxy to_unix(const std::string& path);

  FaultProxy(FaultProxy&& other) noexcept;
  FaultProxy& operator=(FaultProxy&& other) noexcept;
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;
  ~FaultProxy();

  pid_t pid() const { return pid_; }
  int port() const { return port_; }  // the data port, on 127.0.0.1
  int control_port() const { return control_port_; }
  std::string url() const;  // "redis://127.0.0.1:PORT"

  // Mode commands, for every connection, open and new. Each throws when the
  // proxy does not answer "ok" in time.
  void pass();
  void delay(int ms, int jitter_ms);
  void blackhole();
  void reset();
  void drop_reply(int n);
  // The reply line of `stats`, without the newline:
  // "ok conns=N bytes_up=N bytes_down=N".
  std::string stats();
  FaultProxyCounters counters();

  // What the proxy wrote on stderr so far: empty unless something went wrong
  // (a target it could not connect to, a bug of its own).
  std::string errors() const;

  // Sends one control line (without the newline) and returns the reply line
  // (without it), "ok..." or "err ...". Throws only when there is no reply
  // in time.
  std::string command(const std::string& line);

 private:
  FaultProxy();
  static FaultProxy start(const std::vector<std::string>& target_args);
  void expect_ok(const std::string& line);
  void kill_and_reap();

  std::unique_ptr<TempDir> dir_;  // the port file and the proxy's stderr
  pid_t pid_ = -1;
  int stdin_fd_ = -1;  // our end of the proxy's stdin: when it closes, the proxy exits
  int port_ = -1;
  int control_port_ = -1;
};

}  // namespace swthrottle::test
