// What the tests' real daemons share (support/redis_server.h,
// support/prometheus_server.h, support/alertmanager_server.h): finding the
// program, a free port on 127.0.0.1, starting it with its output in a log,
// waiting until it is ready, killing it by pid, and plain HTTP/1.0 to it.
// Everything throws std::runtime_error on failure: a test that needs a
// daemon fails without one, it never skips.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace swthrottle::test {

// The first of `names` found on PATH, then in /usr/bin, /usr/sbin,
// /usr/local/bin (run_process does not search PATH); "" when none is.
std::string find_program(std::initializer_list<std::string_view> names);

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then
// released). Another process may take it first: starters retry on a clash.
int free_port();

// The last `max_bytes` of a file ("" when it cannot be read): a log's tail
// for a failure message.
std::string file_tail(const std::string& path, std::size_t max_bytes = 3000);

// Spawns argv (argv[0] a path) with stdin /dev/null, stdout and stderr into
// `log` (created or truncated; "" : /dev/null), an empty signal mask and
// every signal at its default action.
pid_t spawn_daemon(const std::vector<std::string>& argv, const std::string& log);

// SIGKILL and reap; pid becomes -1 (nothing when it is not positive).
void kill_and_reap(pid_t& pid);

// Calls ready() until it is true, with waits growing from `first` to
// `most`, at most `timeout` in all. False on timeout.
bool wait_ready(const std::function<bool()>& ready, std::chrono::milliseconds timeout, std::chrono::milliseconds first,
                std::chrono::milliseconds most);

struct HttpReply {
  int status = 0;       // the HTTP status code
  std::string headers;  // the header lines as received, "\r\n" between them
  std::string body;     // the response body, as received
};

// One HTTP/1.0 request to 127.0.0.1:PORT over its own connection (so the
// reply is never chunked and ends with the connection), each step bounded
// by 5 s. With a body, it is sent as application/json. Throws when it
// cannot connect or the reply does not come.
HttpReply http_request(int port, const std::string& method, const std::string& path,
                       const std::string* json_body = nullptr);
inline HttpReply http_get(int port, const std::string& path) { return http_request(port, "GET", path); }

// A daemon that serves HTTP on a free port (Prometheus, Alertmanager):
// `argv_for(port)` spawned with its output in `log`, until GET /-/ready
// answers 200, at most `timeout`. A port another process took between the
// probe and the daemon's bind ("address already in use" in the log) is
// retried with another, up to 5 times. Throws with the log's tail when the
// daemon exits or is not ready in time (it is killed then).
struct StartedDaemon {
  pid_t pid = -1;
  int port = 0;
};
StartedDaemon start_http_daemon(const std::string& what, const std::function<std::vector<std::string>(int)>& argv_for,
                                const std::string& log, std::chrono::milliseconds timeout);

}  // namespace swthrottle::test
