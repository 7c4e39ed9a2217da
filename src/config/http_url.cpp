#include "config/http_url.h"

#include <algorithm>

#include <fmt/format.h>

namespace swthrottle::config {
namespace {

struct Parts {
  std::string_view scheme;     // "http" | "https"
  std::string_view authority;  // [user@]host[:port]
};

bool split(std::string_view url, Parts& out) {
  std::string_view rest;
  if (url.starts_with("http://")) {
    out.scheme = "http";
    rest = url.substr(7);
  } else if (url.starts_with("https://")) {
    out.scheme = "https";
    rest = url.substr(8);
  } else {
    return false;
  }
  out.authority = rest.substr(0, rest.find_first_of("/?#"));
  return true;
}

// host[:port] of an authority without user info; the host of an IPv6
// address keeps its brackets.
std::string_view host_of(std::string_view host_port) {
  return host_port.substr(0, host_port.starts_with('[') ? host_port.find(']') + 1 : host_port.find(':'));
}

}  // namespace

std::string http_url_problem(std::string_view url) {
  Parts p;
  if (!split(url, p)) return "not an http:// or https:// URL";
  const std::string origin = url_origin(url);
  const std::string the_url = origin.empty() ? std::string("the URL") : "the URL to " + origin;
  if (std::any_of(url.begin(), url.end(), [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; }))
    return the_url + " has a space or a control character";
  if (p.authority.find('@') != std::string_view::npos)
    return the_url +
           " holds credentials (user:password@): anyone can read them in ps or the file; give them in "
           "SWTHROTTLE_WEBHOOK_BASIC_AUTH or [delivery] basic_auth_file instead";
  const std::string_view host = host_of(p.authority);
  if (host.empty() || host == "[") return "the URL has no host";
  return "";
}

std::string url_origin(std::string_view url) {
  Parts p;
  if (!split(url, p)) return "";
  std::string_view host_port =
      p.authority.substr(p.authority.rfind('@') == std::string_view::npos ? 0 : p.authority.rfind('@') + 1);
  const std::string_view host = host_of(host_port);
  if (host.empty() || host == "[") return "";
  // It goes into messages and metric labels: printable ASCII only.
  if (std::any_of(host_port.begin(), host_port.end(), [](char c) { return c <= 0x20 || c >= 0x7f; })) return "";
  std::string_view port = host_port.substr(host.size());
  if (port.starts_with(':')) port.remove_prefix(1);
  if (port.empty()) port = p.scheme == "https" ? "443" : "80";
  return fmt::format("{}://{}:{}", p.scheme, host, port);
}

}  // namespace swthrottle::config
