// KeyMap: the windows of one keyed rule, by key, with least-recently-updated
// eviction at max_keys (SPEC §2).
//
// Lock order: KeyMap::mu_, then a window's own lock (accurate mode), never the
// reverse. Deciders hold mu_ only around the lookup, not while deciding.
// Slots are shared_ptr so an evicted slot stays alive while another input's
// decider still works on it.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "window/window.h"

namespace swthrottle::engine {

struct Slot {
  std::string key;
  std::unique_ptr<window::Window> window;
  std::list<Slot*>::iterator lru;  // position in KeyMap::lru_ (front = most recent)
  bool active = false;             // in KeyMap::active_: has pending output or is firing
};

class KeyMap {
 public:
  KeyMap(window::Mode mode, const window::WindowSpec& spec, std::size_t max_keys)
      : mode_(mode), spec_(spec), max_keys_(max_keys == 0 ? 1 : max_keys) {}

  struct Lookup {
    std::shared_ptr<Slot> slot;
    bool created = false;
    std::shared_ptr<Slot> evicted;  // the key pushed out to make room, if any
  };

  // Finds or creates the slot of `key` and marks it most recently updated.
  Lookup get(std::string_view key);

  // Remember that a slot needs boundary checks.
  void mark_active(const std::shared_ptr<Slot>& s);
  // The active slots (a copy: checks run without mu_); `prune` drops the quiet ones first.
  std::vector<std::shared_ptr<Slot>> active(bool prune);
  // Every slot, in no particular order (end of input).
  std::vector<std::shared_ptr<Slot>> all() const;
  // Every slot, least recently updated first (state files keep LRU order).
  std::vector<std::shared_ptr<Slot>> by_age() const;
  std::size_t size() const;

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Eq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a == b; }
  };

  window::Mode mode_;
  window::WindowSpec spec_;
  std::size_t max_keys_;
  mutable std::mutex mu_;  // guards everything below
  std::unordered_map<std::string, std::shared_ptr<Slot>, Hash, Eq> map_;
  std::list<Slot*> lru_;
  std::vector<std::shared_ptr<Slot>> active_;
};

}  // namespace swthrottle::engine
