// What a delivery attempt's outcome means, and how long to wait before the
// next one (man page: DELIVERY). Pure: time and randomness come in.
//
// Retried: no response at all (connection refused or reset, DNS, timeout),
// 5xx, 408 and 429. Never retried: any other 4xx (the request itself is
// wrong: retrying cannot help), and 3xx (we do not follow redirects for a
// POST). 2xx is delivered. Anything else (a final 1xx, a status >= 600) is
// not HTTP we understand, and is given up on too.
#pragma once

#include <cstdint>
#include <optional>

#include "delivery/http_client.h"

namespace swthrottle::delivery {

enum class Verdict { Delivered, Retry, GiveUp };

Verdict classify(const HttpResponse& response);

struct RetryPolicy {
  int64_t first_delay_ms = 1'000;             // before the 2nd attempt, at most (full jitter)
  int64_t max_delay_ms = 5 * 60'000;          // the backoff's cap (a Retry-After may ask for more)
  int64_t give_up_after_ms = 2 * 86'400'000;  // a record this old is dead-lettered instead of retried
};

// The wait before attempt `attempt + 1` (attempt >= 1 made so far):
// "full jitter" exponential backoff, a uniform draw in
// [0, min(max_delay, first_delay * 2^(attempt-1))] from `random` (any 64-bit
// value), but never less than a Retry-After the receiver asked for (capped
// at give_up_after_ms). An attempt of 0 counts as 1, and a negative
// Retry-After asks for nothing.
int64_t next_delay_ms(const RetryPolicy& policy, uint32_t attempt, std::optional<int64_t> retry_after_ms,
                      uint64_t random);

}  // namespace swthrottle::delivery
