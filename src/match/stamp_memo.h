// The memo of the last stamp of one form: lines in a row mostly repeat the
// date and time of their stamps, so LogTime remembers the last head it read
// of each form and what it made of it, and for a line that repeats it reads
// only what follows the head.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "match/stamp_bytes.h"

namespace swthrottle::match::stamp {

// The head of the last stamp of one form (its date and time of day, kLen
// bytes), an extra key, and kWords values derived from them, so that the
// next line with the same head skips its checks and the date arithmetic.
//
// A seqlock keeps parse() safe to call from several threads at once: a
// reader that overlaps a store sees the sequence number move and misses;
// of two threads that store at once, one gives up. (swthrottle gives each
// thread its own LogTime: the memo is shared only by whoever shares one.)
template <std::size_t kLen, std::size_t kWords>
class HeadMemo {
  static_assert(kLen >= 8 && kLen <= 24);
  // Three 8-byte words cover the head, overlapping when it is shorter than 24.
  static constexpr std::size_t kMid = kLen <= 16 ? kLen - 8 : 8;

 public:
  // The values stored with the kLen bytes at head and extra, if those are
  // what was stored last.
  bool find(const char* head, int64_t extra, int64_t (&values)[kWords]) const {
    const uint32_t seq = seq_.load(std::memory_order_acquire);
    // Acquire, so that the second load of seq_ cannot move above these.
    const uint64_t k0 = key_[0].load(std::memory_order_acquire);
    const uint64_t k1 = key_[1].load(std::memory_order_acquire);
    const uint64_t k2 = key_[2].load(std::memory_order_acquire);
    const int64_t e = extra_.load(std::memory_order_acquire);
    for (std::size_t w = 0; w < kWords; ++w) values[w] = values_[w].load(std::memory_order_acquire);
    if (seq == 0 || (seq & 1) != 0 || seq_.load(std::memory_order_relaxed) != seq) return false;
    return ((load8(head) ^ k0) | (load8(head + kMid) ^ k1) | (load8(head + kLen - 8) ^ k2) |
            static_cast<uint64_t>(extra ^ e)) == 0;
  }

  void store(const char* head, int64_t extra, const int64_t (&values)[kWords]) {
    uint32_t seq = seq_.load(std::memory_order_relaxed);
    if ((seq & 1) != 0 || !seq_.compare_exchange_strong(seq, seq + 1, std::memory_order_relaxed)) return;
    // Release, so that a reader that sees any of these sees the odd seq_.
    key_[0].store(load8(head), std::memory_order_release);
    key_[1].store(load8(head + kMid), std::memory_order_release);
    key_[2].store(load8(head + kLen - 8), std::memory_order_release);
    extra_.store(extra, std::memory_order_release);
    for (std::size_t w = 0; w < kWords; ++w) values_[w].store(values[w], std::memory_order_release);
    seq_.store(seq + 2, std::memory_order_release);
  }

 private:
  std::atomic<uint32_t> seq_{0};  // 0: nothing stored yet; odd: a store in progress
  std::atomic<uint64_t> key_[3]{};
  std::atomic<int64_t> extra_{0};
  std::atomic<int64_t> values_[kWords]{};
};

}  // namespace swthrottle::match::stamp
