// TypedWindow: a window whose event types are an `enum class`.
//
//   enum class Http { Request, Error, count };       // `count` last: the number of events
//   TypedWindow<Http, AccurateWindow> w(5 * 60'000, 10);
//   w.add(t, Http::Request);
//   auto c = w.counts();                              // std::array<uint64_t, 2>
//   c[Http::Error] ...                                // indexable by the enum
//
// A thin, allocation-free convenience over the runtime event count of Window:
// the guarantees are those of the chosen implementation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "window/accurate.h"
#include "window/efficient.h"

namespace swthrottle::window {

template <typename Enum, std::size_t N>
struct EnumCounts {
  std::array<uint64_t, N> values{};
  uint64_t operator[](Enum e) const { return values[static_cast<std::size_t>(e)]; }
  uint64_t total() const {
    uint64_t sum = 0;
    for (uint64_t v : values) sum += v;
    return sum;
  }
};

template <typename Enum, typename Impl = EfficientWindow, std::size_t N = static_cast<std::size_t>(Enum::count)>
class TypedWindow {
  static_assert(N >= 1 && N <= 64, "1 to 64 event types");

 public:
  // window_ms must divide into `buckets` (window_ms % buckets == 0).
  TypedWindow(int64_t window_ms, uint32_t buckets)
      : impl_(WindowSpec{window_ms / buckets, buckets, static_cast<uint32_t>(N)}) {}

  AddResult add(int64_t t_ms, Enum e, uint64_t n = 1) { return impl_.add(t_ms, index(e), n); }
  void advance(int64_t now_ms) { impl_.advance(now_ms); }

  EnumCounts<Enum, N> counts() const {
    EnumCounts<Enum, N> c;
    impl_.read(c.values);
    return c;
  }
  uint64_t count(Enum e) const { return counts()[e]; }

  // Pass at most `limit` per window, counting passes as `as`.
  ThrottleOutcome offer_throttle(int64_t t_ms, uint64_t limit, Enum as) {
    return impl_.offer_throttle(t_ms, t_ms, limit, index(as));
  }

  Impl& impl() { return impl_; }
  const Impl& impl() const { return impl_; }

  static constexpr uint64_t mask(Enum e) { return uint64_t{1} << index(e); }

 private:
  static constexpr uint32_t index(Enum e) { return static_cast<uint32_t>(e); }
  Impl impl_;
};

}  // namespace swthrottle::window
