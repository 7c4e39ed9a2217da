// FleetServer: the servers that hold fleet windows, as one thing the fleet
// thread talks to (DESIGN.md §8.2, §8.9): one Redis (redis://, unix:), the
// primary that Sentinel names (redis+sentinel://), or a Redis Cluster's
// primaries, each window sent to its slot's (redis+cluster://). Whichever it
// is, the fleet thread connects, runs pipelines of requests, looks at the
// servers every so often, and connects again when a connection fails.
//
// Not thread-safe: the fleet thread's own (watch()'s callback excepted).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fleet/fleet_options.h"
#include "fleet/redis_connection.h"
#include "fleet/request.h"
#include "util/clock.h"

namespace swthrottle::fleet {

// A primary lost to a failover, and what it may have taken along: the
// counts this host wrote to it that no replica had acknowledged
// (UnconfirmedWrites), an upper bound of what the failover lost.
struct Failover {
  std::string from;  // the old primary
  std::string to;    // what serves its windows now
  uint64_t unconfirmed = 0;
};

// What one server holding windows says about itself.
struct NodeInfo {
  std::string label;  // "127.0.0.1:6379"
  ServerInfo info;
};

class FleetServer {
 public:
  virtual ~FleetServer() = default;

  // Connects (again) to every server that holds windows and loads the
  // scripts; a Sentinel's primary and a Cluster's slot map are asked anew.
  // False: error() says why.
  virtual bool connect() = 0;
  virtual void close() = 0;
  // Scripts::run's contract over however many servers: false when a
  // connection failed (connect() again); the replies it could not get are
  // !ok, and none of those was applied twice.
  virtual bool run(std::span<const Request> requests, std::vector<Reply>& replies) = 0;
  // INFO and TIME of every server holding windows; empty when a connection
  // failed (error()).
  virtual std::optional<std::vector<NodeInfo>> info() = 0;
  // Whether its primaries have replicas to look at (ROLE, about once a
  // second) for what a failover could lose.
  virtual bool has_replicas() const { return false; }
  // That look. False: a connection failed.
  virtual bool look_at_replication() { return true; }
  // Whether the servers connected to are still the ones that hold the
  // windows (Sentinel: a sentinel is asked). False: connect() again.
  virtual bool still_current() { return true; }
  // Failovers found since the last call (by connect()).
  virtual void take_failovers(std::vector<Failover>& out) { (void)out; }
  // `moved` is called, from another thread, when the servers that hold
  // the windows changed (Sentinel's +switch-master): the fleet thread then
  // connect()s again without waiting for a failure or its backoff.
  virtual void watch(std::function<void()> moved) { (void)moved; }

  virtual uint64_t reloads() const = 0;  // NOSCRIPT reloads so far
  virtual const std::string& error() const = 0;
  // The longest pause between two connect() attempts while it fails.
  virtual int64_t max_backoff_ms() const { return 5'000; }
};

// The server of options.endpoint's topology (it keeps a copy of `options`). `clock` outlives it.
std::unique_ptr<FleetServer> make_fleet_server(const FleetClientOptions& options, const Clock& clock);
// Each topology's (single_server.cpp, sentinel_server.cpp, cluster_server.cpp).
std::unique_ptr<FleetServer> make_single_server(const FleetClientOptions& options);
std::unique_ptr<FleetServer> make_sentinel_server(const FleetClientOptions& options, const Clock& clock);
std::unique_ptr<FleetServer> make_cluster_server(const FleetClientOptions& options);

}  // namespace swthrottle::fleet
