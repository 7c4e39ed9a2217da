// KeyMap: the windows of one keyed rule, by key, with least-recently-updated
// eviction at max_keys (DESIGN.md §2).
//
// Lock order: KeyMap::mu_, then a window's own lock (accurate mode), never the
// reverse. Deciders hold mu_ only around the lookup, not while deciding.
//
// Memory (issue #5: an idle key is most of what a keyed rule costs): a key's
// slot header, key bytes, window and the window's counters are one
// allocation, and the table holds a pointer and a 32-bit hash per entry. For
// the default window (10 buckets, one counter) and an IPv4 key (<= 16 bytes):
//   slot header (LRU links, references, key length)       24
//   key, padded to 8                                       16
//   EfficientWindow / AccurateWindow                 88 / 104
//   first cell block / counters                       80 / 88
//   = 208 / 232 bytes, a 224 / 240-byte malloc chunk
//   table: 12 bytes per entry, 7/16 to 7/8 full         14-27
// (before: ~496 / ~446 bytes in six allocations).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/window_maker.h"
#include "window/window.h"

namespace swthrottle::engine {

class KeyMap;

// What a rule keeps beside each key's window (engine/watch_rule.h): `bytes`
// more in the key's allocation, after the window's, zeroed and then built by
// `init`. Its type must be trivially destructible (the slot's memory is
// freed without running anything) and at most kWindowAlign-aligned.
struct KeyExtra {
  std::size_t bytes = 0;
  void (*init)(void* where) = nullptr;
};

namespace detail {
// A doubly linked list node: the slots of a KeyMap in recency order, around
// the map's own node. A slot out of the map has null links.
struct LruLinks {
  LruLinks* prev = nullptr;
  LruLinks* next = nullptr;
};
}  // namespace detail

// One key of a keyed rule: its key and its window. Reference counted: the map
// holds one reference while the key is in it and every SlotRef one more, so
// an evicted slot lives on while another input's decider still works on it.
class Slot : private detail::LruLinks {
 public:
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;

  std::string_view key() const { return {reinterpret_cast<const char*>(this + 1), key_len_}; }
  // Windows are thread-safe: a const slot still decides.
  window::Window& window() const {
    return *std::launder(
        reinterpret_cast<window::Window*>(reinterpret_cast<char*>(const_cast<Slot*>(this)) + window_offset(key_len_)));
  }
  // In its map's active list (has pending output or is firing).
  bool active() const { return (refs_.load(std::memory_order_relaxed) & kActive) != 0; }

 private:
  friend class KeyMap;
  friend class SlotRef;

  // refs_ counts holders in steps of kRef; its low bit is the active flag,
  // which only the map changes, under its lock. One word for both keeps the
  // header at 24 bytes.
  static constexpr uint32_t kActive = 1;
  static constexpr uint32_t kRef = 2;

  explicit Slot(uint32_t key_len) : key_len_(key_len) {}
  ~Slot() = default;

  // Header, key bytes, padding to kWindowAlign, window and its counters.
  static std::size_t window_offset(std::size_t key_len) {
    const std::size_t a = window::kWindowAlign;
    return (sizeof(Slot) + key_len + a - 1) / a * a;
  }
  // grouped: a WindowGroup of the members' windows and riders; else a window
  // of members[0], built by `maker` when there is one.
  static Slot* create(std::string_view key, window::Mode mode, std::span<const window::WindowSpec> members,
                      std::size_t riders, bool grouped, const WindowMaker* maker, std::size_t window_bytes,
                      const KeyExtra& extra);
  void retain() { refs_.fetch_add(kRef, std::memory_order_relaxed); }
  void release() {
    if ((refs_.fetch_sub(kRef, std::memory_order_acq_rel) & ~kActive) == kRef) destroy();
  }
  void destroy();
  bool in_map() const { return prev != nullptr; }

  std::atomic<uint32_t> refs_{kRef};  // the creator's reference
  uint32_t key_len_;
};

// A counted reference to a Slot, like a shared_ptr without the control block.
class SlotRef {
 public:
  SlotRef() = default;
  SlotRef(const SlotRef& o) : p_(o.p_) {
    if (p_ != nullptr) p_->retain();
  }
  SlotRef(SlotRef&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  SlotRef& operator=(SlotRef o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~SlotRef() {
    if (p_ != nullptr) p_->release();
  }

  Slot* get() const { return p_; }
  Slot* operator->() const { return p_; }
  Slot& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  friend bool operator==(const SlotRef& a, const SlotRef& b) { return a.p_ == b.p_; }
  friend bool operator==(const SlotRef& a, std::nullptr_t) { return a.p_ == nullptr; }

 private:
  friend class KeyMap;
  // Takes over a reference the caller already counted.
  static SlotRef adopt(Slot* s) {
    SlotRef r;
    r.p_ = s;
    return r;
  }
  static SlotRef share(Slot* s) {
    s->retain();
    return adopt(s);
  }
  Slot* p_ = nullptr;
};

class KeyMap {
 public:
  // `maker`: how the rule's kind builds a key's window (null: a window of the mode);
  // `extra`: what the kind keeps beside each window.
  KeyMap(window::Mode mode, const window::WindowSpec& spec, std::size_t max_keys, const WindowMaker* maker = nullptr,
         KeyExtra extra = {});
  // A map whose slots hold a WindowGroup (engine/window_group.h) of one
  // window per member, in this order, and `riders` AlertRiders: rules that
  // share their keys.
  KeyMap(window::Mode mode, std::vector<window::WindowSpec> members, std::size_t riders, std::size_t max_keys);
  ~KeyMap();
  KeyMap(const KeyMap&) = delete;
  KeyMap& operator=(const KeyMap&) = delete;

  struct Lookup {
    SlotRef slot;
    bool created = false;
    SlotRef evicted;  // the key pushed out to make room, if any
  };

  // Finds or creates the slot of `key` and marks it most recently updated.
  // Allocates only when it creates.
  Lookup get(std::string_view key);

  // The same as get(s->key()) when `s` is still in the map (it becomes the
  // most recently updated) without looking the key up: true. False when it
  // was evicted since: get() it again.
  bool touch(const SlotRef& s);

  // Remember that a slot needs boundary checks.
  void mark_active(const SlotRef& s);
  // The active slots (a copy: checks run without mu_); `prune` drops the quiet ones first.
  std::vector<SlotRef> active(bool prune);
  // Every slot, in no particular order (end of input).
  std::vector<SlotRef> all() const;
  // Every slot, least recently updated first (state files keep LRU order).
  std::vector<SlotRef> by_age() const;
  std::size_t size() const;

  // The KeyExtra of a slot of this map (engine/watch_rule.h).
  void* extra(const Slot& s) const {
    return reinterpret_cast<char*>(const_cast<Slot*>(&s)) + Slot::window_offset(s.key_len_) + window_bytes_;
  }
  // Whether `s` is still in the map (not evicted, not forgotten).
  bool holds(const SlotRef& s) const;
  // Takes `s` out of the map, as an eviction does, but on purpose (a
  // watched rule's `forget`): false when it was out already.
  bool forget(const SlotRef& s);

 private:
  static uint32_t hash_of(std::string_view key);
  // All below expect mu_ held.
  std::size_t home(uint32_t h) const { return static_cast<std::size_t>((uint64_t{h} * kFib) >> (64 - bits_)); }
  // The entry of `key`, or the empty entry where it would go.
  std::size_t find(std::string_view key, uint32_t h) const;
  std::size_t index_of(const Slot* s) const;
  void erase_at(std::size_t i);
  void grow();
  void link_front(Slot* s);
  static void unlink(Slot* s);

  static constexpr uint64_t kFib = 0x9E3779B97F4A7C15u;  // 2^64 / golden ratio: spreads h over the index bits

  window::Mode mode_;
  std::vector<window::WindowSpec> members_;
  std::size_t riders_ = 0;
  bool grouped_ = false;  // slots hold a WindowGroup (else a window of members_[0])
  const WindowMaker* maker_ = nullptr;
  std::size_t max_keys_;
  std::size_t window_bytes_;
  KeyExtra extra_;
  mutable std::mutex mu_;  // guards everything below and every in-map slot's links and active flag
  // Open addressing with linear probing, at most 7/8 full, no tombstones
  // (erase shifts the entries after it back). Parallel arrays: a probe reads
  // 4-byte hashes and follows a pointer only on a hash match.
  std::unique_ptr<Slot*[]> table_;
  std::unique_ptr<uint32_t[]> hashes_;
  std::size_t mask_ = 0;  // capacity - 1; capacity 0 before the first key
  int bits_ = 0;          // log2(capacity)
  std::size_t size_ = 0;
  detail::LruLinks lru_{&lru_, &lru_};  // next: most recently updated; prev: least
  std::vector<Slot*> active_;           // in-map slots with the active flag
};

}  // namespace swthrottle::engine
