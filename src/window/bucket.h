// Bucket arithmetic shared by both window modes (DESIGN.md §2). Pure and constexpr.
//
// Buckets are absolute and epoch-aligned: an event at t ms goes into bucket
// floor(t / w). A window of B buckets at "now" bucket nb covers buckets
// nb-B+1 .. nb; anything older is stale (never summed, reset before reuse) and
// an event that falls there is *late*. Because buckets are absolute, a replay,
// a saved state and both modes agree on every bucket number.
//
// Precision: the window at now covers (X - w, X] of time, not exactly X: an
// event is dropped from the sum up to one bucket width w before it is X old.
//
// The previous window (`previous(e)` in a rule's `when`): a window spec with
// `previous` set keeps the B buckets before the window too, in the same ring
// of 2B slots. Their counts are read beside the window's, never decided on:
// an event too old for the window is late whatever the ring keeps. A spec
// without it keeps B slots, as before; the bit lives in `events`' word, so
// a spec (and every window) stays as large as it was.
#pragma once

#include <cstdint>

namespace swthrottle::window {

// No bucket seen yet. Every real bucket number is >= 0 (times are clamped to >= 0).
inline constexpr int64_t kNoBucket = -1;

struct WindowSpec {
  int64_t width_ms = 1000;    // w = X / B, >= 1
  uint32_t buckets = 10;      // B, >= 1
  uint32_t events : 31 = 1;   // E, event types counted per bucket, 1..64 (1..32 with previous)
  uint32_t previous : 1 = 0;  // also keeps the B buckets before the window (previous())

  constexpr int64_t length_ms() const { return width_ms * buckets; }
  // Slots of the ring: B, or 2B with the previous window.
  constexpr uint32_t ring() const { return previous ? 2 * buckets : buckets; }
  // Counts a read gives: E, then with the previous window E more.
  constexpr uint32_t counts_width() const { return previous ? 2 * events : events; }
};

// Times before the epoch are treated as 0: the core never sees a negative time.
constexpr int64_t clamp_time(int64_t t_ms) { return t_ms < 0 ? 0 : t_ms; }

constexpr int64_t bucket_of(int64_t t_ms, const WindowSpec& s) { return clamp_time(t_ms) / s.width_ms; }

constexpr int64_t bucket_start_ms(int64_t b, const WindowSpec& s) { return b * s.width_ms; }

// Oldest bucket still inside the window whose newest bucket is now_b.
constexpr int64_t oldest_in_window(int64_t now_b, const WindowSpec& s) { return now_b - s.buckets + 1; }

constexpr bool in_window(int64_t b, int64_t now_b, const WindowSpec& s) {
  return b <= now_b && b >= oldest_in_window(now_b, s);
}

// Too old for the window at now_b. (b > now_b is not late: it moves now.)
constexpr bool is_late(int64_t b, int64_t now_b, const WindowSpec& s) {
  return now_b != kNoBucket && b < oldest_in_window(now_b, s);
}

// Oldest bucket the ring keeps at now_b: the window's, or the previous window's.
constexpr int64_t oldest_kept(int64_t now_b, const WindowSpec& s) { return now_b - s.ring() + 1; }

// In the previous window at now_b (kept by a spec with `previous`, never decided on).
constexpr bool in_previous(int64_t b, int64_t now_b, const WindowSpec& s) {
  return s.previous && b < oldest_in_window(now_b, s) && b >= oldest_kept(now_b, s);
}

// Ring slot of bucket b.
constexpr uint32_t slot_of(int64_t b, const WindowSpec& s) { return static_cast<uint32_t>(b % s.ring()); }

}  // namespace swthrottle::window
