// atomic_max: raise an atomic to at least v, never lower it. The one home of
// the compare-exchange loop that "now" and the newest-time counters share.
#pragma once

#include <atomic>

namespace swthrottle {

// Returns the value the atomic held before: when it is < v this call raised
// it, which callers use to run the work that a move of "now" triggers once.
template <typename T>
T atomic_max(std::atomic<T>& a, T v) {
  T cur = a.load();
  while (cur < v && !a.compare_exchange_weak(cur, v)) {
  }
  return cur;
}

}  // namespace swthrottle
