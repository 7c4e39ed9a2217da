// Where the fleet's Redis is: `[fleet] redis` / `--fleet-redis` parsed.
//
//   redis://HOST[:PORT][/DB]                      one server, TCP (port 6379, database 0)
//   unix:PATH[?db=N]                              one server, a unix socket
//   redis+sentinel://HOST[:PORT],.../NAME[/DB]    the primary Sentinel names NAME
//                                                 (sentinels on port 26379 by default)
//   redis+cluster://HOST[:PORT],...               a Redis Cluster: nodes to ask for its slot map
//
// Passwords never come from the URL (they would show in argv and in `ps`):
// they come from the environment (fleet/credentials.h; man page: ENVIRONMENT).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace swthrottle::fleet {

// One server: a TCP host and port, or a unix socket.
struct Address {
  std::string host;       // TCP: host name or address; empty for a unix socket
  uint16_t port = 6379;   // TCP only
  std::string unix_path;  // unix socket path; empty for TCP
  // "127.0.0.1:6379", "[::1]:6379" or "unix:/run/redis.sock", for messages.
  std::string label() const;
  bool operator==(const Address&) const = default;
};

enum class Topology {
  Single,    // one server (or whatever stands behind its address)
  Sentinel,  // ask the sentinels which server is the primary
  Cluster,   // route each window to its slot's primary
};

struct Endpoint {
  Topology topology = Topology::Single;
  // Single: the server. Sentinel: the sentinels, asked in turn. Cluster:
  // nodes to read the slot map from (the others are found in it).
  std::vector<Address> servers;
  std::string master;  // Sentinel: the name of the primary
  int db = 0;          // SELECT db after connecting (0: no SELECT; always 0 on a cluster)
  std::string text;    // as given, for messages
};

// Errors name what is wrong ("redis: port 99999 out of range"), without a
// position: the caller adds the file:line:col of the setting.
Result<Endpoint> parse_endpoint(std::string_view url);

}  // namespace swthrottle::fleet
