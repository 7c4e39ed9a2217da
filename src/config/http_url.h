// An http:// or https:// URL as a delivery destination takes it (man page:
// DELIVERY): a scheme, a host, an optional port and path. Credentials in the
// URL (user:password@) are refused: a command line is visible to every user
// in ps, and a rules file is often readable; secrets come from the
// environment or a file instead.
//
// A destination's URL may itself be a secret (a Slack, Discord or Teams
// webhook URL is its own credential; a token may sit in a path or a query):
// nothing here puts more of a URL in a message than its origin.
#pragma once

#include <string>
#include <string_view>

namespace swthrottle::config {

// "" when `url` is fine, else what is wrong with it, for a message. The
// message names at most the URL's origin (url_origin()).
std::string http_url_problem(std::string_view url);

// The part of a URL that is no secret: "scheme://host:port", the port
// always written (80 and 443 by default), without user info, path, query
// or fragment: "https://hooks.slack.com:443". "" when `url` is not an
// http:// or https:// URL with a host.
std::string url_origin(std::string_view url);

}  // namespace swthrottle::config
