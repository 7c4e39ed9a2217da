#include "delivery/retry_policy.h"

#include <algorithm>

namespace swthrottle::delivery {

Verdict classify(const HttpResponse& response) {
  const long s = response.status;
  if (s >= 200 && s <= 299) return Verdict::Delivered;
  // 0: no response at all; 408 and 429 say "not now"; 5xx is the receiver's
  // own trouble. All of them may go away by themselves.
  if (s == 0 || s == 408 || s == 429 || (s >= 500 && s <= 599)) return Verdict::Retry;
  // Other 4xx: the request itself is wrong. 3xx: we do not follow a POST's
  // redirect. Anything else (a final 1xx, >= 600) is not HTTP we understand,
  // and sending the same bytes again will not make it so.
  return Verdict::GiveUp;
}

int64_t next_delay_ms(const RetryPolicy& policy, uint32_t attempt, std::optional<int64_t> retry_after_ms,
                      uint64_t random) {
  const int64_t cap = std::max<int64_t>(policy.max_delay_ms, 0);
  const int64_t first = std::max<int64_t>(policy.first_delay_ms, 0);
  const uint32_t doublings = attempt > 1 ? attempt - 1 : 0;
  // first * 2^doublings without overflow: once it would pass the cap, the cap
  // is the bound (the test against cap >> doublings is exact for shifts < 63).
  int64_t bound = cap;
  if (doublings < 63 && first <= (cap >> doublings)) bound = first << doublings;
  // Full jitter: uniform in [0, bound]. The modulo's bias is below
  // bound / 2^64, far under a millisecond's worth for any real bound.
  int64_t delay = static_cast<int64_t>(random % (static_cast<uint64_t>(bound) + 1));
  if (retry_after_ms) {
    // The receiver knows when it will be back; waiting longer than a record
    // may live would only turn it into a dead letter later.
    const int64_t asked = std::clamp<int64_t>(*retry_after_ms, 0, std::max<int64_t>(policy.give_up_after_ms, 0));
    delay = std::max(delay, asked);
  }
  return delay;
}

}  // namespace swthrottle::delivery
