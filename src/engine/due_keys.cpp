#include "engine/due_keys.h"

#include <algorithm>
#include <bit>

namespace swthrottle::engine {

DueKeys::DueKeys(uint32_t window_buckets) {
  const uint64_t r = std::bit_ceil(std::max<uint64_t>(64, 2 * uint64_t{window_buckets}));
  ring_.resize(r);
  mask_ = r - 1;
}

void DueKeys::add(SlotRef slot, int64_t due) {
  std::lock_guard lock(mu_);
  if (taken_ != kNone && due <= taken_) due = taken_ + 1;
  ring_[static_cast<uint64_t>(due) & mask_].push_back(Entry{std::move(slot), due});
  ++entries_;
}

std::size_t DueKeys::size() const {
  std::lock_guard lock(mu_);
  return entries_;
}

int64_t DueKeys::earliest() const {
  int64_t e = INT64_MAX;
  for (const auto& list : ring_)
    for (const Entry& x : list) e = std::min(e, x.due);
  return e;
}

int64_t DueKeys::take_next(int64_t up_to, std::vector<SlotRef>& out) {
  out.clear();
  std::lock_guard lock(mu_);
  while (taken_ == kNone || taken_ < up_to) {
    if (entries_ == 0) {
      taken_ = up_to;
      return kNone;
    }
    // Nothing can be due before the earliest entry: a long walk (or the
    // first one) starts there.
    if (taken_ == kNone || up_to - taken_ > static_cast<int64_t>(ring_.size())) {
      const int64_t e = earliest();
      if (e > up_to) {
        taken_ = up_to;
        return kNone;
      }
      if (taken_ == kNone || e - 1 > taken_) taken_ = e - 1;
    }
    const int64_t b = ++taken_;
    std::vector<Entry>& list = ring_[static_cast<uint64_t>(b) & mask_];
    auto later = std::partition(list.begin(), list.end(), [b](const Entry& x) { return x.due > b; });
    for (auto it = later; it != list.end(); ++it) out.push_back(std::move(it->slot));
    entries_ -= static_cast<std::size_t>(list.end() - later);
    list.erase(later, list.end());
    if (!out.empty()) return b;
  }
  return kNone;
}

}  // namespace swthrottle::engine
