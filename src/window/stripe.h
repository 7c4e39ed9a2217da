// Striping helpers for the efficient window: padding and per-thread stripe ids.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace swthrottle::window {

// Two cache lines: x86 prefetches adjacent lines in pairs, so 64-byte padding
// still lets neighbours interfere (folly and the JDK's @Contended use 128 too).
// Our own constant: std::hardware_destructive_interference_size is 64 on x86
// and GCC warns that it is not ABI-stable.
inline constexpr std::size_t kFalseSharingRange = 128;

namespace detail {
inline thread_local uint32_t t_stripe_id = UINT32_MAX;
uint32_t assign_stripe_id();  // the next dense id, for a thread's first use
}  // namespace detail

// This thread's stripe id: dense ids handed out on first use (0, 1, 2, ...).
// Threads that swthrottle owns call set_stripe_id() with their worker index,
// so that with S >= workers every worker has a stripe of its own. Inline: it
// is on every add.
inline uint32_t stripe_id() {
  uint32_t id = detail::t_stripe_id;
  if (id == UINT32_MAX) [[unlikely]]
    id = detail::t_stripe_id = detail::assign_stripe_id();
  return id;
}
inline void set_stripe_id(uint32_t id) { detail::t_stripe_id = id; }

// Stripes per efficient window: the number of hardware threads rounded up to a
// power of two, at most 64.
uint32_t default_stripes();

constexpr uint32_t next_pow2(uint32_t v) {
  uint32_t p = 1;
  while (p < v && p < (1u << 31)) p <<= 1;
  return p;
}

}  // namespace swthrottle::window
