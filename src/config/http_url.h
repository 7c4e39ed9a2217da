// An http:// or https:// URL as a delivery destination takes it (man page:
// DELIVERY): a scheme, a host, an optional port and path. Credentials in the
// URL (user:password@) are refused: a command line is visible to every user
// in ps, and a rules file is often readable; secrets come from the
// environment or a file instead.
#pragma once

#include <string>
#include <string_view>

namespace swthrottle::config {

// "" when `url` is fine, else what is wrong with it, for a message.
std::string http_url_problem(std::string_view url);

}  // namespace swthrottle::config
