// A real redis-server for the fleet tests (DESIGN.md §8.12): started in its
// own temporary directory on a unix socket (or a free TCP port on
// 127.0.0.1), never the system one, and killed by pid at the end.
//
// A missing or failing redis-server throws std::runtime_error: the test
// fails, it never skips, so the fleet tests can never pass quietly.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace swthrottle::test {

struct RedisServerOptions {
  bool tcp = false;         // a free port on 127.0.0.1 instead of a unix socket
  bool appendonly = false;  // AOF on (kept across restart())
  std::string password;     // --requirepass (and --masterauth, for a replica)
  bool cluster = false;     // cluster-enabled (tcp), its bus on a free port of its own
  std::vector<std::string> extra_args;
};

// One command to the Redis server (or sentinel) at `socket_path` (when not
// empty) or 127.0.0.1:port, over a short-lived connection, after AUTH
// [user] password when a password is given. The reply as RedisServer::cli
// gives it. Throws std::runtime_error when it cannot connect.
std::string redis_command(const std::string& socket_path, int port, const std::vector<std::string>& args,
                          const std::string& password = "", const std::string& user = "");
std::vector<std::string> redis_commands(const std::string& socket_path, int port,
                                        const std::vector<std::vector<std::string>>& commands,
                                        const std::string& password = "", const std::string& user = "");

class RedisServer {
 public:
  // Starts `redis-server --port 0 --unixsocket DIR/r.sock --save '' --appendonly no --dir DIR`
  // (or --port PORT --bind 127.0.0.1) and waits, at most ~5 s, until it
  // answers PING.
  explicit RedisServer(RedisServerOptions options = {});
  ~RedisServer();  // SIGKILL by pid, reaped; the directory removed
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  std::string url() const;                                  // "unix:DIR/r.sock" or "redis://127.0.0.1:PORT"
  std::string socket_path() const { return socket_path_; }  // "" for TCP
  int port() const { return port_; }                        // 0 for a unix socket
  pid_t pid() const { return pid_; }
  const std::string& dir() const { return dir_.path(); }

  void kill9();    // SIGKILL + reap
  void restart();  // kill9 when running, then start again on the same socket/port/dir/options
  void pause();    // SIGSTOP
  void resume();   // SIGCONT

  // One command over its own short-lived connection (authenticated when the
  // server has a password). The reply as text: strings as is, integers as
  // digits, nil as "(nil)", arrays as their elements joined by "\n", errors
  // as "ERR: <message>". Throws std::runtime_error when it cannot connect.
  std::string cli(const std::vector<std::string>& args);
  // Several commands, one after the other on one connection (WAIT counts
  // the writes of its own connection), and their replies.
  std::vector<std::string> cli_all(const std::vector<std::vector<std::string>>& commands);

 private:
  void start();
  // True when the server answers PING; throws when it has exited.
  bool answers();

  RedisServerOptions options_;
  TempDir dir_;
  std::string socket_path_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace swthrottle::test
