#include "support/alertmanager_server.h"

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace swthrottle::test {

namespace {

// Alertmanager 0.25 is ready in well under a second; a loaded CI machine
// with two cores shared by several builds may take many times that.
constexpr auto kStartTimeout = std::chrono::seconds(15);

// Every alert goes to a receiver without any notifier: the tests read the
// alerts back through the API, and nothing leaves the machine.
constexpr const char* kConfig =
    "route:\n"
    "  receiver: 'null'\n"
    "  group_wait: 1s\n"
    "receivers:\n"
    "  - name: 'null'\n";

}  // namespace

AlertmanagerServer::AlertmanagerServer() {
  dir_.write("am.yml", kConfig);
  // prometheus-alertmanager is Debian's name, alertmanager upstream's.
  const std::string binary = find_program({"prometheus-alertmanager", "alertmanager"});
  if (binary.empty())
    throw std::runtime_error(
        "prometheus-alertmanager is not installed (apt-get install prometheus-alertmanager): the Alertmanager "
        "tests need a real one");
  const StartedDaemon d = start_http_daemon(
      "prometheus-alertmanager",
      [&](int port) {
        return std::vector<std::string>{binary, "--config.file=" + dir_.file("am.yml"),
                                        "--storage.path=" + dir_.file("data"),
                                        "--web.listen-address=127.0.0.1:" + std::to_string(port),
                                        // Empty: no cluster, so no gossip port to find and no settling to wait for.
                                        "--cluster.listen-address="};
      },
      dir_.file("am.log"), kStartTimeout);
  pid_ = d.pid;
  port_ = d.port;
}

AlertmanagerServer::~AlertmanagerServer() { kill9(); }

std::string AlertmanagerServer::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

std::string AlertmanagerServer::log_tail() const { return file_tail(dir_.file("am.log")); }

HttpReply AlertmanagerServer::get(const std::string& path) const { return http_get(port_, path); }

HttpReply AlertmanagerServer::post_json(const std::string& path, const std::string& body) const {
  return http_request(port_, "POST", path, &body);
}

std::string AlertmanagerServer::alerts(const std::string& query) const {
  HttpReply r = get("/api/v2/alerts" + query);
  if (r.status != 200)
    throw std::runtime_error("GET /api/v2/alerts" + query + ": status " + std::to_string(r.status) + ": " + r.body);
  return r.body;
}

void AlertmanagerServer::kill9() { kill_and_reap(pid_); }

}  // namespace swthrottle::test
