#include "fleet/primary_node.h"

#include <algorithm>
#include <bit>

namespace swthrottle::fleet {

uint64_t counts_written(const Request& request, const Reply& reply) {
  if (!reply.ok) return 0;
  const uint64_t claim = reply.claimed ? 1 : 0;
  switch (request.op) {
    case Op::Throttle: return reply.passed ? 1 : 0;
    case Op::Alert: return (reply.late ? 0 : static_cast<uint64_t>(std::popcount(request.events))) + claim;
    case Op::Claim: return claim;
    case Op::Resolve: return reply.resolved ? 1 : 0;
    case Op::Read: return 0;
    case Op::Flush: {
      if (reply.duplicate) return 0;
      uint64_t n = 0;
      for (const Delta& d : request.deltas) n += d.n;
      return n - std::min(n, reply.late_count) + claim;
    }
    case Op::Lease: return reply.granted;
  }
  return 0;
}

bool PrimaryNode::connect(int db, std::chrono::milliseconds timeout, const Credentials& credentials) {
  error_.clear();
  lost = false;
  if (!conn_.connect(address_, db, timeout, credentials)) return false;
  // Loaded now, so that the first requests do not pay for a NOSCRIPT round.
  if (!scripts_.load(conn_)) {
    error_ = conn_.connected() ? "redis " + address_.label() + ": " + scripts_.error() : conn_.error();
    conn_.close();
    return false;
  }
  return true;
}

bool PrimaryNode::run(std::span<const Request> requests, std::vector<Reply>& replies) {
  const bool alive = scripts_.run(conn_, requests, replies);
  for (std::size_t i = 0; i < requests.size() && i < replies.size(); ++i)
    unconfirmed_.wrote(counts_written(requests[i], replies[i]));
  if (!alive) lost = true;
  return alive;
}

bool PrimaryNode::look_at_replication() {
  const auto role = conn_.role();
  if (!role) {
    lost = !conn_.connected();
    return conn_.connected();
  }
  if (role->primary) unconfirmed_.looked(role->offset, role->replica_offset);
  return true;
}

}  // namespace swthrottle::fleet
