#include "support/redis_sentinel.h"

#include <fstream>
#include <stdexcept>

#include "support/test_daemon.h"

namespace swthrottle::test {

namespace {

constexpr auto kReadyTimeout = std::chrono::milliseconds(20'000);

// The value of `name:` in INFO text.
std::string info_value(const std::string& info, const std::string& name) {
  const auto at = info.find(name + ":");
  if (at == std::string::npos) return "";
  const auto end = info.find_first_of("\r\n", at);
  return info.substr(at + name.size() + 1, end == std::string::npos ? std::string::npos : end - at - name.size() - 1);
}

bool wait_for(const std::function<bool()>& ready, std::chrono::milliseconds timeout) {
  return wait_ready(
      [&] {
        try {
          return ready();
        } catch (const std::runtime_error&) {
          return false;  // not answering yet
        }
      },
      timeout, std::chrono::milliseconds(5), std::chrono::milliseconds(50));
}

}  // namespace

RedisSentinelGroup::RedisSentinelGroup(SentinelGroupOptions options) : options_(std::move(options)) {
  RedisServerOptions primary;
  primary.tcp = true;
  primary.password = options_.password;
  primary.extra_args = options_.server_args;
  servers_.push_back(std::make_unique<RedisServer>(primary));
  for (int i = 0; i < options_.replicas; ++i) {
    RedisServerOptions replica = primary;
    replica.extra_args.insert(replica.extra_args.end(),
                              {"--replicaof", "127.0.0.1", std::to_string(servers_[0]->port())});
    if (!options_.user.empty()) replica.extra_args.insert(replica.extra_args.end(), {"--masteruser", options_.user});
    servers_.push_back(std::make_unique<RedisServer>(replica));
  }
  wait_replicas_of(0);
  for (int i = 0; i < options_.sentinels; ++i) start_sentinel(static_cast<std::size_t>(i));
  // Every sentinel knows every replica (from the primary's INFO) before a
  // test may ask for a failover.
  for (std::size_t i = 0; i < sentinel_ports_.size(); ++i) {
    if (!wait_for(
            [&] {
              return sentinel_cli({"SENTINEL", "MASTER", kName}, i)
                         .find("num-slaves\n" + std::to_string(options_.replicas)) != std::string::npos;
            },
            kReadyTimeout))
      throw std::runtime_error("redis-sentinel did not find the replicas; its log:\n" +
                               file_tail(dir_.file("sentinel" + std::to_string(i) + ".log")));
  }
}

RedisSentinelGroup::~RedisSentinelGroup() {
  for (pid_t& pid : sentinel_pids_) kill_and_reap(pid);
}

void RedisSentinelGroup::start_sentinel(std::size_t i) {
  const std::string binary = find_program({"redis-sentinel"});
  if (binary.empty())
    throw std::runtime_error(
        "redis-sentinel is not installed (apt-get install redis-sentinel): the fleet tests need it");
  const std::string name = "sentinel" + std::to_string(i);
  for (int attempt = 0;; ++attempt) {
    const int port = free_port();
    // Sentinel rewrites its configuration file: one of its own, in the test's directory.
    const std::string conf = dir_.file(name + ".conf");
    {
      std::ofstream f(conf, std::ios::trunc);
      f << "port " << port << "\nbind 127.0.0.1\ndir " << dir_.path() << "\nlogfile " << dir_.file(name + ".log")
        << "\nsentinel monitor " << kName << " 127.0.0.1 " << servers_[0]->port() << " 1\n"
        << "sentinel down-after-milliseconds " << kName << " 1000\n"
        << "sentinel failover-timeout " << kName << " 10000\n";
      if (!options_.password.empty()) f << "sentinel auth-pass " << kName << " " << options_.password << "\n";
      if (!options_.user.empty()) f << "sentinel auth-user " << kName << " " << options_.user << "\n";
      if (!options_.sentinel_password.empty()) f << "requirepass " << options_.sentinel_password << "\n";
    }
    pid_t pid = spawn_daemon({binary, conf}, "");
    const bool up = wait_for([&] { return redis_command("", port, {"PING"}, options_.sentinel_password) == "PONG"; },
                             kReadyTimeout);
    if (up) {
      if (i < sentinel_ports_.size()) {
        sentinel_ports_[i] = port;
        sentinel_pids_[i] = pid;
      } else {
        sentinel_ports_.push_back(port);
        sentinel_pids_.push_back(pid);
      }
      return;
    }
    const std::string log = file_tail(dir_.file(name + ".log"));
    kill_and_reap(pid);
    if (attempt < 5 && log.find("Address already in use") != std::string::npos) continue;
    throw std::runtime_error("redis-sentinel did not answer PING; its log:\n" + log);
  }
}

std::string RedisSentinelGroup::url(const std::vector<std::string>& extra) const {
  std::string u = "redis+sentinel://";
  for (const std::string& e : extra) u += e + ",";
  for (std::size_t i = 0; i < sentinel_ports_.size(); ++i)
    u += (i > 0 ? "," : "") + std::string("127.0.0.1:") + std::to_string(sentinel_ports_[i]);
  return u + "/" + kName;
}

std::string RedisSentinelGroup::sentinel_cli(const std::vector<std::string>& args, std::size_t i) {
  return redis_command("", sentinel_ports_[i], args, options_.sentinel_password);
}

int RedisSentinelGroup::primary() {
  const std::string addr = sentinel_cli({"SENTINEL", "get-master-addr-by-name", kName});
  for (std::size_t i = 0; i < servers_.size(); ++i)
    if (addr == "127.0.0.1\n" + std::to_string(servers_[i]->port())) return static_cast<int>(i);
  return -1;
}

int RedisSentinelGroup::wait_failover(int old, std::chrono::milliseconds timeout) {
  int now = -1;
  const bool moved = wait_for(
      [&] {
        now = primary();
        return now >= 0 && now != old && server(static_cast<std::size_t>(now)).cli({"ROLE"}).starts_with("master\n");
      },
      timeout);
  if (!moved)
    throw std::runtime_error("no failover within the time given; the sentinel's log:\n" +
                             file_tail(dir_.file("sentinel0.log")));
  return now;
}

void RedisSentinelGroup::wait_replicas_of(int primary, std::chrono::milliseconds timeout) {
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    if (static_cast<int>(i) == primary || server(i).pid() < 0) continue;  // the primary, or killed
    const bool synced = wait_for(
        [&] {
          const std::string info = server(i).cli({"INFO", "replication"});
          return info_value(info, "role") == "slave" &&
                 info_value(info, "master_port") == std::to_string(server(static_cast<std::size_t>(primary)).port()) &&
                 info_value(info, "master_link_status") == "up";
        },
        timeout);
    if (!synced) throw std::runtime_error("replica " + std::to_string(i) + " did not sync");
  }
}

}  // namespace swthrottle::test
