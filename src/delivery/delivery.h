// Delivery: one record on its way to one destination (a webhook or an
// Alertmanager), from the moment it is decided until it is delivered or
// given up on (man page: DELIVERY). Plain data: the outbox stores it, the
// delivery pool sends it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "delivery/destination.h"

namespace swthrottle::delivery {

struct Delivery {
  // Stable for the record's whole life, across restarts (the outbox keeps
  // it): sent as the Idempotency-Key header and as "id" in the body, so that
  // a receiver can drop a duplicate after an at-least-once redelivery.
  std::string id;
  // The destination's number (Destination::number()), the same in every
  // run, so that the outbox knows a delivery again after a restart.
  uint32_t destination = 0;
  // What the destination is, as the outbox keeps it: its preset and label,
  // never its URL (delivery goes to the destination of that number that
  // the run has).
  Preset kind = Preset::Webhook;
  std::string label;
  // A request path of its own, after the destination's base URL ("" : the
  // destination's endpoint): an Opsgenie close.
  std::string path;
  std::string body;        // the JSON body to POST, as it will be sent
  int64_t created_ms = 0;  // wall clock when the record was decided
  uint32_t attempts = 0;   // attempts made so far (kept by the outbox)
  // The pool's own: the outbox took it, so that one the outbox dropped
  // (outbox_full = "drop-oldest") is not sent after all. Not stored.
  bool in_outbox = false;
};

// A digest of `identity` (Destination::number()).
uint32_t destination_number(std::string_view identity);

}  // namespace swthrottle::delivery
