// Who the fleet's Redis (and its sentinels) are told we are: AUTH [USER]
// PASSWORD after every connect. They come from the environment, never from
// the rules file or the command line (man page: ENVIRONMENT):
//
//   SWTHROTTLE_REDIS_USER, SWTHROTTLE_REDIS_PASSWORD        the servers holding windows
//   SWTHROTTLE_SENTINEL_USER, SWTHROTTLE_SENTINEL_PASSWORD  the sentinels
#pragma once

#include <string>
#include <string_view>

namespace swthrottle::fleet {

struct Credentials {
  std::string user;      // "": the default user (AUTH PASSWORD, Redis before 6 included)
  std::string password;  // with neither set, no AUTH is sent
  // The environment variables' common prefix ("SWTHROTTLE_REDIS"), for the
  // messages that say what to set: the values themselves are never printed.
  std::string source = "SWTHROTTLE_REDIS";

  bool given() const { return !user.empty() || !password.empty(); }
};

// <prefix>_USER and <prefix>_PASSWORD from the environment.
Credentials credentials_from_environment(std::string_view prefix);

}  // namespace swthrottle::fleet
