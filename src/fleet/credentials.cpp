#include "fleet/credentials.h"

#include <cstdlib>

namespace swthrottle::fleet {

Credentials credentials_from_environment(std::string_view prefix) {
  Credentials c;
  c.source = std::string(prefix);
  if (const char* user = std::getenv((c.source + "_USER").c_str())) c.user = user;
  if (const char* password = std::getenv((c.source + "_PASSWORD").c_str())) c.password = password;
  return c;
}

}  // namespace swthrottle::fleet
