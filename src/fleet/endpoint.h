// Where the fleet's Redis is: `[fleet] redis` / `--fleet-redis` parsed.
//
//   redis://HOST[:PORT][/DB]     TCP (port 6379, database 0 by default)
//   unix:PATH[?db=N]             a unix socket
//
// The password never comes from the URL (it would show in argv and in `ps`):
// it comes from the environment, SWTHROTTLE_REDIS_PASSWORD (docs: man page).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.h"

namespace swthrottle::fleet {

struct Endpoint {
  std::string host;       // TCP: host name or address; empty for a unix socket
  uint16_t port = 6379;   // TCP only
  std::string unix_path;  // unix socket path; empty for TCP
  int db = 0;             // SELECT db after connecting (0: no SELECT)
  std::string text;       // as given, for messages ("127.0.0.1:6379", "unix:/run/redis.sock")
};

// Errors name what is wrong ("redis: port 99999 out of range"), without a
// position: the caller adds the file:line:col of the setting.
Result<Endpoint> parse_endpoint(std::string_view url);

}  // namespace swthrottle::fleet
