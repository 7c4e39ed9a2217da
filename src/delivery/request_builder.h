// Request building (man page: DELIVERY): the deliveries a destination's
// worker sends together, as one HTTP request. Pure: the pool posts it.
#pragma once

#include <chrono>
#include <span>

#include "delivery/delivery.h"
#include "delivery/destination.h"
#include "delivery/http_client.h"

namespace swthrottle::delivery {

struct RequestOptions {
  std::chrono::milliseconds timeout{10'000};
  // Webhooks: the records go as a JSON array, however many there are
  // ([delivery] batch above 1: a receiver reads one shape).
  bool webhook_arrays = false;
};

// The request for `batch` (one delivery at least, all to `d`):
// - a webhook gets the body itself, or with webhook_arrays a JSON array of
//   the bodies, with Idempotency-Key (batch_key of the ids) and d's headers;
// - an Alertmanager gets one JSON array of the alerts (a body that is itself
//   an array, as outboxes of earlier versions hold, gives its members), with
//   d's headers (a named one behind an authenticating proxy);
// - the other presets get one body each, with d's headers; PagerDuty's with
//   "routing_key" (d.key) put first, Opsgenie's with "Authorization:
//   GenieKey KEY": keys go in only here, never into the outbox.
// Arrays are built from the parsed bodies: each body is whole JSON (the
// encoder made it so, and the outbox keeps it byte for byte); one that is
// not goes in as a JSON string rather than break the array.
HttpRequest build_request(const Destination& d, std::span<const Delivery> batch, const RequestOptions& o);

}  // namespace swthrottle::delivery
