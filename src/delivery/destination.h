// Destination: one place records are delivered to (man page: DELIVERY), and
// the preset that says what it gets: a webhook the JSON records, an
// Alertmanager alerts on /api/v2/alerts, a chat or paging service the
// message its API takes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/body_template.h"
#include "config/preset.h"
#include "engine/record.h"

namespace swthrottle::delivery {

// The preset names (`preset`, the outbox's "kind") are config's.
using config::Preset;
using config::preset_named;
using config::to_string;

// Does a destination of this preset take records of this type? Webhooks
// and chats take alert, resolved and summary records; Alertmanager,
// PagerDuty and Opsgenie, which page and close, alert and resolved ones.
bool takes(Preset p, engine::RecordType t);

struct Destination {
  Preset preset = Preset::Webhook;
  // [[delivery.destination]]'s name; "" for the unnamed ones: --webhook,
  // --alertmanager, [delivery]'s and a rule's own URLs.
  std::string name;
  // What stderr, --stats, the metrics, the outbox and dead letters call it:
  // the name, or else the URL's origin (scheme://host:port), never the URL.
  // Made unique by the caller (unique_labels()).
  std::string label;
  std::string url;                 // webhook: POSTed to as given; Alertmanager, Opsgenie: the base URL
  bool every_rule = false;         // else only the rules that name it (a rule's URL, or `rules`)
  std::vector<std::string> rules;  // named destinations: the rules whose records go here; empty: every_rule
  // Secrets, from the environment or a file, never the command line:
  std::vector<std::string> headers;                  // "Name: value"
  std::string basic_auth;                            // "user:password" ("" : none)
  std::string key;                                   // PagerDuty: the routing key; Opsgenie: the GenieKey
  std::shared_ptr<const config::BodyTemplate> body;  // a named destination's own body; null: the preset's

  // The identity of what goes here, kept in the outbox (Delivery::destination)
  // so that a restart knows it again: a digest of the name, or of the preset
  // and URL of an unnamed one (the same number as earlier versions gave).
  uint32_t number() const;
  // Where a POST goes: url, or for a delivery with a path of its own (an
  // Opsgenie close) the base URL and that path; an Alertmanager's API.
  std::string endpoint(std::string_view path = {}) const;
  // Every text of this destination that must not be printed: the URL's
  // path and query (and the URL whole), header values and their words of 8
  // characters or more (the token of "Bearer TOKEN"), basic auth, the key.
  std::vector<std::string> secrets() const;
};

// Gives each destination its label: the name, or the URL's origin; a
// second unnamed destination at one origin is "ORIGIN #2", and so on.
void unique_labels(std::vector<Destination>& ds);

}  // namespace swthrottle::delivery
