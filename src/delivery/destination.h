// Destination: one place records are delivered to (man page: DELIVERY): a
// webhook URL that gets the JSON records, or an Alertmanager that gets
// alerts on /api/v2/alerts.
#pragma once

#include <string>
#include <vector>

namespace swthrottle::delivery {

enum class DestinationKind { Webhook, Alertmanager };

struct Destination {
  DestinationKind kind = DestinationKind::Webhook;
  std::string url;          // webhook: POSTed to as given; Alertmanager: its base URL (http://HOST:9093)
  bool every_rule = false;  // --webhook, --alertmanager, [delivery]: every rule's records; else only rules naming it
  // Secrets, from the environment or a file, never the command line:
  std::vector<std::string> headers;  // "Authorization: Bearer ..." (webhooks)
  std::string basic_auth;            // "user:password" ("" : none)

  // Delivery::target of what goes here.
  std::string target() const { return (kind == DestinationKind::Webhook ? "webhook " : "alertmanager ") + url; }

  // Where the POST goes.
  std::string endpoint() const {
    if (kind == DestinationKind::Webhook) return url;
    std::string base = url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base + "/api/v2/alerts";
  }
};

}  // namespace swthrottle::delivery
