#include "support/redis_cluster.h"

#include <sstream>
#include <stdexcept>

#include "support/process.h"
#include "support/test_daemon.h"

namespace swthrottle::test {

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) out.push_back(line);
  return out;
}

}  // namespace

RedisCluster::RedisCluster(ClusterOptions options) : options_(std::move(options)) {
  const int n = options_.primaries * (1 + options_.replicas);
  for (int i = 0; i < n; ++i) {
    RedisServerOptions o;
    o.tcp = true;
    o.cluster = true;
    o.extra_args = {"--cluster-node-timeout", "1000"};
    o.extra_args.insert(o.extra_args.end(), options_.server_args.begin(), options_.server_args.end());
    nodes_.push_back(std::make_unique<RedisServer>(o));
  }
  const std::string cli = find_program({"redis-cli"});
  if (cli.empty()) throw std::runtime_error("redis-cli is not installed (apt-get install redis-tools)");
  std::vector<std::string> argv = {cli, "--cluster", "create"};
  for (const auto& node : nodes_) argv.push_back("127.0.0.1:" + std::to_string(node->port()));
  argv.insert(argv.end(), {"--cluster-replicas", std::to_string(options_.replicas), "--cluster-yes"});
  const RunResult r = run_process(argv, "", std::chrono::milliseconds(60'000));
  if (r.exit_status != 0) throw std::runtime_error("redis-cli --cluster create failed:\n" + r.out + r.err);
  wait_ok();
  // Replicas in sync: before that, one cannot take over (its data would be
  // older than cluster-replica-validity-factor allows).
  for (auto& server : nodes_) {
    const bool synced = wait_ready(
        [&] {
          const std::string info = server->cli({"INFO", "replication"});
          return info.find("role:master") != std::string::npos ||
                 info.find("master_link_status:up") != std::string::npos;
        },
        std::chrono::milliseconds(30'000), std::chrono::milliseconds(10), std::chrono::milliseconds(100));
    if (!synced) throw std::runtime_error("a cluster replica did not sync with its primary");
  }
}

std::string RedisCluster::url() const {
  return "redis+cluster://127.0.0.1:" + std::to_string(nodes_[0]->port()) +
         ",127.0.0.1:" + std::to_string(nodes_[1]->port());
}

std::string RedisCluster::node_id(std::size_t i) { return node(i).cli({"CLUSTER", "MYID"}); }

int RedisCluster::owner_of(uint16_t slot, std::size_t ask) {
  // CLUSTER NODES: "<id> <ip:port@cport> <flags> <primary> <ping> <pong> <epoch> <link> <slot|first-last>..."
  for (const std::string& line : lines_of(node(ask).cli({"CLUSTER", "NODES"}))) {
    std::stringstream ss(line);
    std::string id, addr, flags, rest;
    ss >> id >> addr >> flags;
    if (flags.find("master") == std::string::npos || flags.find("fail") != std::string::npos) continue;
    for (int skip = 0; skip < 5; ++skip) ss >> rest;
    for (std::string range; ss >> range;) {
      if (range.starts_with("[")) continue;  // a slot migrating or importing
      const auto dash = range.find('-');
      const long first = std::stol(range.substr(0, dash));
      const long last = dash == std::string::npos ? first : std::stol(range.substr(dash + 1));
      if (slot < first || slot > last) continue;
      const std::string port = addr.substr(addr.rfind(':') + 1, addr.find('@') - addr.rfind(':') - 1);
      for (std::size_t k = 0; k < nodes_.size(); ++k)
        if (port == std::to_string(nodes_[k]->port())) return static_cast<int>(k);
    }
  }
  return -1;
}

std::string RedisCluster::get_anywhere(const std::vector<std::string>& command) {
  for (auto& n : nodes_) {
    if (n->pid() < 0) continue;
    const std::string r = n->cli(command);
    if (!r.starts_with("ERR: MOVED") && !r.starts_with("ERR: ASK") && r != "(nil)" && r != "0" && !r.empty()) return r;
  }
  return "(nil)";
}

int RedisCluster::settled(uint16_t slot, int not_by) {
  try {
    int agreed = -2;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i]->pid() < 0) continue;
      if (nodes_[i]->cli({"CLUSTER", "INFO"}).find("cluster_state:ok") == std::string::npos) return -1;
      const int o = owner_of(slot, i);
      if (o < 0 || o == not_by || (agreed != -2 && o != agreed)) return -1;
      agreed = o;
    }
    return agreed < 0 ? -1 : agreed;
  } catch (const std::runtime_error&) {
    return -1;  // a node not answering yet
  }
}

int RedisCluster::wait_ok(uint16_t slot, int not_by, std::chrono::milliseconds timeout) {
  int owner = -1;
  const bool ok = wait_ready([&] { return (owner = settled(slot, not_by)) >= 0; }, timeout,
                             std::chrono::milliseconds(10), std::chrono::milliseconds(100));
  if (!ok) throw std::runtime_error("the cluster did not settle (cluster_state:ok, one owner of the slot)");
  return owner;
}

void RedisCluster::move_slot(uint16_t slot, std::size_t to, const std::function<void()>& between) {
  const int from = owner_of(slot);
  if (from < 0 || static_cast<std::size_t>(from) == to) throw std::runtime_error("move_slot: nothing to move");
  const std::string s = std::to_string(slot);
  const std::string from_id = node_id(static_cast<std::size_t>(from)), to_id = node_id(to);
  RedisServer& src = node(static_cast<std::size_t>(from));
  RedisServer& dst = node(to);
  if (dst.cli({"CLUSTER", "SETSLOT", s, "IMPORTING", from_id}) != "OK" ||
      src.cli({"CLUSTER", "SETSLOT", s, "MIGRATING", to_id}) != "OK")
    throw std::runtime_error("move_slot: SETSLOT IMPORTING/MIGRATING refused");
  if (between) between();
  for (;;) {
    const std::vector<std::string> keys = lines_of(src.cli({"CLUSTER", "GETKEYSINSLOT", s, "1"}));
    if (keys.empty() || keys[0].empty()) break;
    std::vector<std::string> migrate = {"MIGRATE", "127.0.0.1", std::to_string(dst.port()), "", "0", "5000", "KEYS"};
    migrate.insert(migrate.end(), keys.begin(), keys.end());
    const std::string r = src.cli(migrate);
    if (r != "OK") throw std::runtime_error("move_slot: MIGRATE: " + r);
    if (between) between();
  }
  // The destination first, then the source, then the rest, as redis-cli
  // --cluster reshard does: the other order has the two send a client back
  // and forth (MOVED each way) until both know.
  dst.cli({"CLUSTER", "SETSLOT", s, "NODE", to_id});
  src.cli({"CLUSTER", "SETSLOT", s, "NODE", to_id});
  for (auto& n : nodes_)
    if (n->pid() > 0 && n.get() != &src && n.get() != &dst) n->cli({"CLUSTER", "SETSLOT", s, "NODE", to_id});
}

}  // namespace swthrottle::test
