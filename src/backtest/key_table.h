// KeyTable: a value per key text, for the backtest's profile of up to a few
// hundred thousand keys, found once per counted line. Open addressing over
// packed (hash, index) words, and the entries in a vector: one probe and one
// entry read per lookup, where std::unordered_map took three dependent reads
// and a division (it was a sixth of a keyed sweep's time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace swthrottle::backtest {

template <class T>
class KeyTable {
 public:
  struct Entry {
    std::string key;
    T value{};
  };

  // The index of `key`'s entry, made (with a value-initialised T) when new.
  // Indices stay valid until keep_only().
  uint32_t find_or_add(std::string_view key) {
    const uint64_t h = std::hash<std::string_view>{}(key);
    const auto tag = static_cast<uint32_t>(h >> 32);
    if ((entries_.size() + 1) * 2 > table_.size()) grow();
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const uint64_t w = table_[i];
      if (w == 0) {
        const auto index = static_cast<uint32_t>(entries_.size());
        entries_.push_back(Entry{std::string(key), T{}});
        table_[i] = pack(tag, index);
        return index;
      }
      if (static_cast<uint32_t>(w >> 32) == tag && entries_[index_of(w)].key == key) return index_of(w);
    }
  }

  Entry& at(uint32_t index) { return entries_[index]; }
  const std::vector<Entry>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }

  // Keeps the entries `keep` is true of, in their order; indices change.
  template <class Keep>
  void keep_only(Keep keep) {
    std::vector<Entry> kept;
    for (Entry& e : entries_)
      if (keep(std::as_const(e))) kept.push_back(std::move(e));
    entries_ = std::move(kept);
    rebuild(table_.size());
  }

 private:
  static uint64_t pack(uint32_t tag, uint32_t index) { return (uint64_t{tag} << 32) | (uint64_t{index} + 1); }
  static uint32_t index_of(uint64_t w) { return static_cast<uint32_t>(w & 0xffffffffu) - 1; }

  void grow() { rebuild(table_.empty() ? 64 : table_.size() * 2); }
  void rebuild(std::size_t capacity) {
    table_.assign(capacity, 0);
    mask_ = capacity - 1;
    for (std::size_t e = 0; e < entries_.size(); ++e) {
      const uint64_t h = std::hash<std::string_view>{}(entries_[e].key);
      std::size_t i = h & mask_;
      while (table_[i] != 0) i = (i + 1) & mask_;
      table_[i] = pack(static_cast<uint32_t>(h >> 32), static_cast<uint32_t>(e));
    }
  }

  std::vector<Entry> entries_;
  std::vector<uint64_t> table_;  // 0: empty; else the hash's high half and index + 1; at most half full
  std::size_t mask_ = 0;
};

}  // namespace swthrottle::backtest
