// PrimaryNode: one server that holds fleet windows, as the fleet thread
// uses it: its connection, its loaded scripts, and the counts written to it
// that no replica has acknowledged yet (UnconfirmedWrites). A single Redis
// is one; a Sentinel's primary is one at a time; a Cluster has one per
// primary. Not thread-safe: the fleet thread's own.
#pragma once

#include <chrono>
#include <span>
#include <string>
#include <vector>

#include "fleet/credentials.h"
#include "fleet/endpoint.h"
#include "fleet/redis_connection.h"
#include "fleet/request.h"
#include "fleet/scripts.h"
#include "fleet/unconfirmed_writes.h"

namespace swthrottle::fleet {

// The counts a request wrote, by its answer: the passes, events, permits and
// claims a failover could lose (UnconfirmedWrites).
uint64_t counts_written(const Request& request, const Reply& reply);

class PrimaryNode {
 public:
  explicit PrimaryNode(Address address) : address_(std::move(address)) {}

  const Address& address() const { return address_; }
  // Connects and loads the scripts. False: error() says why.
  bool connect(int db, std::chrono::milliseconds timeout, const Credentials& credentials);
  bool connected() const { return conn_.connected(); }
  void close() { conn_.close(); }
  // Scripts::run on this server, counting what the answers wrote.
  bool run(std::span<const Request> requests, std::vector<Reply>& replies);
  // ROLE: a look at how far its replicas are. False: the connection failed.
  bool look_at_replication();
  const std::string& error() const { return error_.empty() ? conn_.error() : error_; }

  RedisConnection& conn() { return conn_; }
  Scripts& scripts() { return scripts_; }
  const Scripts& scripts() const { return scripts_; }
  UnconfirmedWrites& unconfirmed() { return unconfirmed_; }
  // Its connection failed since it last connected: a failover may move its slots.
  bool lost = false;

 private:
  Address address_;
  RedisConnection conn_;
  Scripts scripts_;
  UnconfirmedWrites unconfirmed_;
  std::string error_;  // a refusal after the connection stood (scripts, ROLE)
};

}  // namespace swthrottle::fleet
