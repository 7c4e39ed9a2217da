#include "window/stripe.h"

#include <algorithm>
#include <thread>

namespace swthrottle::window {

namespace {
std::atomic<uint32_t> g_next_id{0};
}  // namespace

uint32_t detail::assign_stripe_id() { return g_next_id.fetch_add(1, std::memory_order_relaxed); }

uint32_t default_stripes() {
  static const uint32_t n = [] {
    unsigned hw = std::thread::hardware_concurrency();
    return std::min<uint32_t>(64, next_pow2(std::max(1u, hw)));
  }();
  return n;
}

}  // namespace swthrottle::window
