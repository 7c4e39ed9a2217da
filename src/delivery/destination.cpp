#include "delivery/destination.h"

#include <algorithm>
#include <array>
#include <map>

#include "config/http_url.h"
#include "delivery/delivery.h"
#include "util/digest.h"

namespace swthrottle::delivery {
namespace {

std::string trimmed(std::string_view url) {
  while (!url.empty() && url.back() == '/') url.remove_suffix(1);
  return std::string(url);
}

}  // namespace

uint32_t destination_number(std::string_view identity) {
  return static_cast<uint32_t>(std::stoul(digest(identity).substr(0, 8), nullptr, 16));
}

bool takes(Preset p, engine::RecordType t) {
  if (t == engine::RecordType::Line) return false;
  if (t == engine::RecordType::Summary)
    return p == Preset::Webhook || p == Preset::Slack || p == Preset::Discord || p == Preset::Teams;
  return true;
}

uint32_t Destination::number() const {
  if (!name.empty()) return destination_number("name " + name);
  return destination_number(std::string(preset == Preset::Alertmanager ? "alertmanager " : "webhook ") + url);
}

std::string Destination::endpoint(std::string_view path) const {
  if (!path.empty()) return trimmed(url) + std::string(path);
  if (preset == Preset::Alertmanager) return trimmed(url) + "/api/v2/alerts";
  return url;
}

std::vector<std::string> Destination::secrets() const {
  std::vector<std::string> out;
  out.push_back(url);
  // The rest of the URL after its origin: the path and query (the origin
  // itself is what the messages say).
  const std::size_t authority = url.find("://");
  if (authority != std::string::npos) {
    const std::size_t path = url.find_first_of("/?#", authority + 3);
    if (path != std::string::npos && path + 1 < url.size()) out.push_back(url.substr(path));
    // user info, were it there (a URL with it is refused at load)
    const std::size_t at = url.find('@', authority + 3);
    if (at != std::string::npos && (path == std::string::npos || at < path))
      out.push_back(url.substr(authority + 3, at - authority - 3));
  }
  for (const std::string& h : headers) {
    const std::size_t colon = h.find(':');
    std::string value = colon == std::string::npos ? h : h.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    // "Bearer TOKEN": the token alone may be echoed too.
    for (std::size_t at = 0; at < value.size();) {
      const std::size_t end = std::min(value.find(' ', at), value.size());
      if (end - at >= 8) out.push_back(value.substr(at, end - at));
      at = end + 1;
    }
    out.push_back(std::move(value));
  }
  if (!basic_auth.empty()) {
    out.push_back(basic_auth);
    out.push_back(basic_auth.substr(basic_auth.find(':') + 1));
  }
  if (!key.empty()) out.push_back(key);
  // Short texts would hide ordinary words of a message ("/", "a"): a secret
  // that short is no secret to keep anyway.
  out.erase(std::remove_if(out.begin(), out.end(), [](const std::string& s) { return s.size() < 4; }), out.end());
  return out;
}

void unique_labels(std::vector<Destination>& ds) {
  std::map<std::string, int> seen;
  for (Destination& d : ds) {
    std::string base = d.name;
    if (base.empty()) {
      base = config::url_origin(d.url);
      if (base.empty()) base = std::string(to_string(d.preset));
    }
    const int n = ++seen[base];
    d.label = n == 1 ? base : base + " #" + std::to_string(n);
  }
}

}  // namespace swthrottle::delivery
