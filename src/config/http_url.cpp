#include "config/http_url.h"

#include <algorithm>

#include <fmt/format.h>

namespace swthrottle::config {

std::string http_url_problem(std::string_view url) {
  std::string_view rest;
  if (url.starts_with("http://")) {
    rest = url.substr(7);
  } else if (url.starts_with("https://")) {
    rest = url.substr(8);
  } else {
    return fmt::format("\"{}\" is not an http:// or https:// URL", url);
  }
  if (std::any_of(url.begin(), url.end(), [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; }))
    return fmt::format("\"{}\" has a space or a control character", url);
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (authority.find('@') != std::string_view::npos)
    return fmt::format(
        "\"{}\" holds credentials (user:password@): anyone can read them in ps or the file; give them "
        "in SWTHROTTLE_WEBHOOK_BASIC_AUTH or [delivery] basic_auth_file instead",
        url);
  const std::string_view host =
      authority.substr(0, authority.starts_with('[') ? authority.find(']') + 1 : authority.find(':'));
  if (host.empty() || host == "[") return fmt::format("\"{}\" has no host", url);
  return "";
}

}  // namespace swthrottle::config
