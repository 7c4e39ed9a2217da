#include "fleet/cluster_server.h"

#include <hiredis/hiredis.h>

#include <algorithm>

#include "fleet/key_slot.h"

namespace swthrottle::fleet {

namespace {

// Rounds of redirects a request may take in one run(): a slot that moves
// while it is asked takes two (ASK, then MOVED); more is a map gone wrong.
constexpr int kMaxRounds = 5;

bool to_int(const redisReply* r, long long& out) {
  if (r->type == REDIS_REPLY_INTEGER) {
    out = r->integer;
    return true;
  }
  return false;
}

// A node of CLUSTER SLOTS: [ip, port, id, ...]; an empty ip is `asked`'s host.
bool to_address(const redisReply* r, const Address& asked, Address& out) {
  long long port = 0;
  if (r->type != REDIS_REPLY_ARRAY || r->elements < 2 || r->element[0]->type != REDIS_REPLY_STRING ||
      !to_int(r->element[1], port) || port <= 0 || port > 65535)
    return false;
  out.host.assign(r->element[0]->str, r->element[0]->len);
  if (out.host.empty() || out.host == "?") out.host = asked.host;
  out.port = static_cast<uint16_t>(port);
  return true;
}

}  // namespace

std::unique_ptr<FleetServer> make_cluster_server(const FleetClientOptions& options) {
  return std::make_unique<ClusterServer>(options);
}

ClusterServer::ClusterServer(const FleetClientOptions& options) : options_(options) {}

PrimaryNode& ClusterServer::node_at(const Address& a) {
  for (auto& n : nodes_)
    if (n->address() == a) return *n;
  nodes_.push_back(std::make_unique<PrimaryNode>(a));
  return *nodes_.back();
}

bool ClusterServer::read_slot_map(SlotMap& out) {
  // The primaries known and still standing first, then the URL's nodes.
  std::vector<Address> ask;
  for (const auto& n : nodes_)
    if (!n->lost) ask.push_back(n->address());
  for (const Address& a : options_.endpoint.servers)
    if (std::find(ask.begin(), ask.end(), a) == ask.end()) ask.push_back(a);
  std::string last_why = "no node to ask";
  for (const Address& a : ask) {
    if (!meta_.connect(a, 0, options_.timeout, options_.credentials)) {
      last_why = meta_.error();
      continue;
    }
    const std::string_view argv[] = {"CLUSTER", "SLOTS"};
    ReplyPtr r = meta_.command(argv);
    meta_.close();
    if (!r || r->type != REDIS_REPLY_ARRAY) {
      last_why = !r                             ? meta_.error()
                 : r->type == REDIS_REPLY_ERROR ? "redis " + a.label() + ": " + meta_.explain({r->str, r->len})
                                                : "redis " + a.label() + ": unexpected answer to CLUSTER SLOTS";
      continue;
    }
    SlotMap map;
    bool good = true;
    for (std::size_t i = 0; i < r->elements && good; ++i) {
      // [first, last, primary, replica...]
      const redisReply* range = r->element[i];
      long long first = 0, last = 0;
      Address primary;
      good = range->type == REDIS_REPLY_ARRAY && range->elements >= 3 && to_int(range->element[0], first) &&
             to_int(range->element[1], last) && first >= 0 && last >= first && last < kClusterSlots &&
             to_address(range->element[2], a, primary);
      if (good) map.assign(static_cast<uint16_t>(first), static_cast<uint16_t>(last), primary);
    }
    if (!good) {
      last_why = "redis " + a.label() + ": unexpected answer to CLUSTER SLOTS";
      continue;
    }
    if (const std::size_t missing = map.uncovered(); missing > 0) {
      last_why = "redis " + a.label() + ": " + std::to_string(missing) +
                 " slots have no primary (the cluster is down, or a failover is under way)";
      continue;
    }
    out = std::move(map);
    return true;
  }
  error_ = "cluster: no node gave a whole slot map (" + last_why + ")";
  return false;
}

bool ClusterServer::connect() {
  SlotMap map;
  if (!read_slot_map(map)) return false;
  // A primary whose connection failed and whose slots another serves now:
  // a failover. It is left behind (should it come back, as a replica, its
  // MOVED answers say where to go).
  std::erase_if(nodes_, [&](const std::unique_ptr<PrimaryNode>& n) {
    if (!n->lost || map.serves(n->address())) return false;
    std::string to;
    for (uint32_t slot = 0; slot < kClusterSlots && to.empty(); ++slot) {
      const int was = map_.primary_of(static_cast<uint16_t>(slot));
      if (was >= 0 && map_.primaries()[static_cast<std::size_t>(was)] == n->address())
        to = map.primaries()[static_cast<std::size_t>(map.primary_of(static_cast<uint16_t>(slot)))].label();
    }
    if (!to.empty()) failovers_.push_back({n->address().label(), to, n->unconfirmed().unconfirmed()});
    return true;
  });
  map_ = std::move(map);
  for (const Address& a : map_.primaries()) {
    if (!map_.serves(a)) continue;
    PrimaryNode& n = node_at(a);
    if (n.connected()) continue;
    if (!n.connect(0, options_.timeout, options_.credentials)) {
      n.lost = true;
      error_ = n.error();
      return false;
    }
  }
  return true;
}

void ClusterServer::close() {
  for (auto& n : nodes_) n->close();
}

bool ClusterServer::round(std::span<const Request> requests, std::vector<Route>& routes, std::vector<Reply>& replies,
                          std::vector<Route>& next) {
  // Every pipeline written before any is read: the primaries work at once.
  std::vector<PrimaryNode*> order;
  for (const Route& r : routes) {
    if (std::find(order.begin(), order.end(), r.node) == order.end()) order.push_back(r.node);
  }
  bool alive = true;
  for (PrimaryNode* n : order) {
    if (!n->connected() && !n->connect(0, options_.timeout, options_.credentials)) {
      n->lost = true;
      error_ = n->error();
      alive = false;
    }
  }
  for (const Route& r : routes)
    if (r.node->connected()) r.node->scripts().append(r.node->conn(), requests[r.request], r.asking);
  std::vector<PrimaryNode*> reload;
  for (const Route& r : routes) {
    Reply& out = replies[r.request];
    if (!r.node->connected()) {
      out = Reply{};
      out.error = r.node->error();
      continue;
    }
    switch (r.node->scripts().read(r.node->conn(), requests[r.request], r.asking, out)) {
      case Scripts::Answer::Done: r.node->unconfirmed().wrote(counts_written(requests[r.request], out)); break;
      case Scripts::Answer::NoScript:
        if (std::find(reload.begin(), reload.end(), r.node) == reload.end()) reload.push_back(r.node);
        next.push_back({r.request, r.node, false});
        break;
      case Scripts::Answer::Redirected: {
        const auto to = parse_redirect(out.error, r.node->address());
        if (!to) break;  // an answer that is not ours to follow: stays an error
        ++redirects_;
        if (!to->ask) map_.assign(to->slot, to->slot, to->to);
        next.push_back({r.request, &node_at(to->to), to->ask});
        break;
      }
      case Scripts::Answer::Lost:
        r.node->lost = true;
        error_ = out.error;
        alive = false;
        break;
    }
  }
  for (PrimaryNode* n : reload) {
    n->scripts().count_reload();
    if (!n->scripts().load(n->conn())) {
      error_ = "redis " + n->address().label() + ": " + n->scripts().error();
      alive = false;
    }
  }
  return alive;
}

bool ClusterServer::run(std::span<const Request> requests, std::vector<Reply>& replies) {
  replies.assign(requests.size(), Reply{});
  std::vector<Route> routes;
  routes.reserve(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const int at = map_.primary_of(key_slot(requests[i].hash_key));
    if (at < 0) {
      replies[i].error = "cluster: slot without a primary";
      continue;
    }
    routes.push_back({i, &node_at(map_.primaries()[static_cast<std::size_t>(at)]), false});
  }
  bool alive = true;
  std::vector<Route> next;
  for (int n = 0; n < kMaxRounds && !routes.empty(); ++n) {
    next.clear();
    if (!round(requests, routes, replies, next)) alive = false;
    routes.swap(next);
  }
  for (const Route& r : routes) replies[r.request].error = "cluster: redirected more than 5 times";
  return alive;
}

std::optional<std::vector<NodeInfo>> ClusterServer::info() {
  std::vector<NodeInfo> out;
  for (auto& n : nodes_) {
    if (!map_.serves(n->address())) continue;
    auto i = n->conn().server_info();
    if (!i) {
      n->lost = !n->conn().connected();
      error_ = n->conn().error();
      return std::nullopt;
    }
    out.push_back({n->address().label(), std::move(*i)});
  }
  return out;
}

bool ClusterServer::look_at_replication() {
  for (auto& n : nodes_) {
    if (!map_.serves(n->address()) || !n->connected()) continue;
    if (!n->look_at_replication()) {
      error_ = n->conn().error();
      return false;
    }
  }
  return true;
}

void ClusterServer::take_failovers(std::vector<Failover>& out) {
  out.insert(out.end(), failovers_.begin(), failovers_.end());
  failovers_.clear();
}

uint64_t ClusterServer::reloads() const {
  uint64_t n = 0;
  for (const auto& node : nodes_) n += node->scripts().reloads();
  return n;
}

}  // namespace swthrottle::fleet
