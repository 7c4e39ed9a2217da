#include "engine/keymap.h"

#include <algorithm>

namespace swthrottle::engine {

KeyMap::Lookup KeyMap::get(std::string_view key) {
  Lookup out;
  std::lock_guard lock(mu_);
  auto it = map_.find(key);
  if (it != map_.end()) {
    Slot* s = it->second.get();
    if (s->lru != lru_.begin()) lru_.splice(lru_.begin(), lru_, s->lru);
    out.slot = it->second;
    return out;
  }
  if (map_.size() >= max_keys_) {
    Slot* victim = lru_.back();
    auto vit = map_.find(victim->key);
    out.evicted = vit->second;
    lru_.pop_back();
    map_.erase(vit);
    if (out.evicted->active) {
      active_.erase(std::remove(active_.begin(), active_.end(), out.evicted), active_.end());
      out.evicted->active = false;
    }
  }
  auto slot = std::make_shared<Slot>();
  slot->key.assign(key);
  slot->window = window::make_window(mode_, spec_);
  lru_.push_front(slot.get());
  slot->lru = lru_.begin();
  map_.emplace(slot->key, slot);
  out.slot = std::move(slot);
  out.created = true;
  return out;
}

void KeyMap::mark_active(const std::shared_ptr<Slot>& s) {
  std::lock_guard lock(mu_);
  if (s->active) return;
  // An evicted slot is no longer in the map: it must not come back as active.
  auto it = map_.find(s->key);
  if (it == map_.end() || it->second != s) return;
  s->active = true;
  active_.push_back(s);
}

std::vector<std::shared_ptr<Slot>> KeyMap::active(bool prune) {
  std::lock_guard lock(mu_);
  if (prune) {
    auto quiet = [](const std::shared_ptr<Slot>& s) {
      if (!s->window->quiet()) return false;
      s->active = false;
      return true;
    };
    active_.erase(std::remove_if(active_.begin(), active_.end(), quiet), active_.end());
  }
  return active_;
}

std::vector<std::shared_ptr<Slot>> KeyMap::all() const {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<Slot>> v;
  v.reserve(map_.size());
  for (const auto& [k, s] : map_) v.push_back(s);
  return v;
}

std::vector<std::shared_ptr<Slot>> KeyMap::by_age() const {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<Slot>> v;
  v.reserve(map_.size());
  for (auto it = lru_.rbegin(); it != lru_.rend(); ++it) v.push_back(map_.find((*it)->key)->second);
  return v;
}

std::size_t KeyMap::size() const {
  std::lock_guard lock(mu_);
  return map_.size();
}

}  // namespace swthrottle::engine
