#include "engine/value_memory.h"

#include <algorithm>

namespace swthrottle::engine {

ValueMemory::ValueMemory(int64_t remember_ms, int64_t learn_ms, uint64_t max_values)
    : remember_ms_(remember_ms),
      learn_ms_(learn_ms),
      max_values_(static_cast<std::size_t>(std::max<uint64_t>(max_values, 1))) {}

std::size_t ValueMemory::find(uint64_t hash) const {
  const std::size_t mask = table_.size() - 1;
  for (std::size_t i = home(hash);; i = (i + 1) & mask) {
    const uint32_t at = table_[i];
    if (at == 0 || entries_[at - 1].hash == hash) return i;
  }
}

void ValueMemory::unlink(uint32_t e) {
  Entry& x = entries_[e];
  if (x.newer != kNone) entries_[x.newer].older = x.older;
  else newest_ = x.older;
  if (x.older != kNone) entries_[x.older].newer = x.newer;
  else oldest_ = x.newer;
  x.newer = x.older = kNone;
}

void ValueMemory::link_front(uint32_t e) {
  Entry& x = entries_[e];
  x.newer = kNone;
  x.older = newest_;
  if (newest_ != kNone) entries_[newest_].newer = e;
  newest_ = e;
  if (oldest_ == kNone) oldest_ = e;
}

void ValueMemory::grow_table() {
  bits_ = bits_ == 0 ? 4 : bits_ + 1;
  table_.assign(std::size_t{1} << bits_, 0);
  for (uint32_t e = 0; e < entries_.size(); ++e) table_[find(entries_[e].hash)] = e + 1;
}

void ValueMemory::insert_front(uint64_t hash, int64_t last_ms) {
  if ((size_ + 1) * 8 > table_.size() * 7) grow_table();  // also makes the first table
  // Grown by doubling, but never past max_values: the bound holds for the vector too.
  if (entries_.size() == entries_.capacity())
    entries_.reserve(std::min(std::max<std::size_t>(16, 2 * entries_.capacity()), max_values_));
  const auto e = static_cast<uint32_t>(entries_.size());
  entries_.push_back(Entry{hash, last_ms, kNone, kNone});
  table_[find(hash)] = e + 1;
  link_front(e);
  ++size_;
}

void ValueMemory::erase(uint32_t e) {
  // Out of the table: Knuth's algorithm R (TAOCP 6.4), as KeyMap::erase_at.
  const std::size_t mask = table_.size() - 1;
  std::size_t i = find(entries_[e].hash);
  for (std::size_t j = (i + 1) & mask; table_[j] != 0; j = (j + 1) & mask) {
    const std::size_t from_home = (j - home(entries_[table_[j] - 1].hash)) & mask;
    if (from_home >= ((j - i) & mask)) {
      table_[i] = table_[j];
      i = j;
    }
  }
  table_[i] = 0;
  unlink(e);
  // The last entry moves into the hole, so that entries stay dense.
  const auto last = static_cast<uint32_t>(entries_.size() - 1);
  if (e != last) {
    entries_[e] = entries_[last];
    table_[find(entries_[e].hash)] = e + 1;
    const Entry& x = entries_[e];
    if (x.newer != kNone) entries_[x.newer].older = e;
    else newest_ = e;
    if (x.older != kNone) entries_[x.older].newer = e;
    else oldest_ = e;
  }
  entries_.pop_back();
  --size_;
}

void ValueMemory::start(int64_t t_ms) {
  std::lock_guard lock(mu_);
  if (learn_until_ms_ < 0) learn_until_ms_ = t_ms + learn_ms_;
}

ValueMemory::Outcome ValueMemory::see(uint64_t hash, int64_t t_ms) {
  std::lock_guard lock(mu_);
  if (learn_until_ms_ < 0) learn_until_ms_ = t_ms + learn_ms_;
  const bool learning = t_ms < learn_until_ms_;
  // Values not seen within remember are forgotten, least recently seen first.
  while (oldest_ != kNone && entries_[oldest_].last_ms <= t_ms - remember_ms_) erase(oldest_);
  Outcome o;
  if (size_ != 0) {
    const uint32_t at = table_[find(hash)];
    if (at != 0) {
      const uint32_t e = at - 1;
      const int64_t before = entries_[e].last_ms;
      entries_[e].last_ms = std::max(before, t_ms);
      if (newest_ != e) {
        unlink(e);
        link_front(e);
      }
      // An older line's time can leave a stale value in the middle of the list.
      o.seen = learning ? Seen::Learning : t_ms - before >= remember_ms_ ? Seen::New : Seen::Again;
      return o;
    }
  }
  if (size_ >= max_values_) {
    erase(oldest_);
    o.forgot = true;
  }
  insert_front(hash, t_ms);
  o.seen = learning ? Seen::Learning : Seen::New;
  return o;
}

std::size_t ValueMemory::size() const {
  std::lock_guard lock(mu_);
  return size_;
}

SeenValues ValueMemory::save() const {
  std::lock_guard lock(mu_);
  SeenValues st;
  st.learn_until_ms = learn_until_ms_;
  st.values.reserve(size_);
  for (uint32_t e = oldest_; e != kNone; e = entries_[e].newer)
    st.values.push_back({entries_[e].hash, entries_[e].last_ms});
  return st;
}

void ValueMemory::load(const SeenValues& st) {
  std::lock_guard lock(mu_);
  learn_until_ms_ = st.learn_until_ms;            // the saved run's learning, started or not
  for (const SeenValues::Value& v : st.values) {  // oldest first: the newest ends at the front
    if (size_ != 0) {
      const uint32_t at = table_[find(v.hash)];
      if (at != 0) {
        entries_[at - 1].last_ms = std::max(entries_[at - 1].last_ms, v.last_ms);
        unlink(at - 1);
        link_front(at - 1);
        continue;
      }
    }
    if (size_ >= max_values_) erase(oldest_);
    insert_front(v.hash, v.last_ms);
  }
}

}  // namespace swthrottle::engine
