// Encoding (man page: DELIVERY, "Presets" and "Templates"): the body (and
// request path) a destination gets for one record, by its preset or by its
// own `body` template. Pure. Alertmanager's alerts are FiringAlerts'
// (alertmanager_alert.h): they depend on what is firing.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "delivery/destination.h"
#include "engine/record.h"

namespace swthrottle::delivery {

struct EncodeContext {
  std::vector<std::pair<std::string, std::string>> labels;  // [delivery] labels
  std::string host;                                         // this machine's name: {host}, PagerDuty's source
};

struct Encoded {
  std::string body;
  std::string path;  // "" : the destination's endpoint (Delivery::path)
};

// nullopt when d takes no such record (takes()), and for an Alertmanager.
// A `body` template replaces the preset's body of an alert, resolved or
// summary record, except a PagerDuty resolve and an Opsgenie close, which
// stay the preset's. Under a template, Slack gets every inserted value
// escaped as the preset's are, Discord gets "allowed_mentions": {"parse":
// []} unless the body says otherwise, PagerDuty gets event_action and
// dedup_key, Opsgenie alias, when the body has none of its own.
std::optional<Encoded> encode(const Destination& d, const engine::Record& r, const std::string& id,
                              const EncodeContext& ctx);

}  // namespace swthrottle::delivery
