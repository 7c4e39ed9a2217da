#include "engine/keymap.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <new>

#include "engine/window_group.h"

namespace swthrottle::engine {

// The budget of keymap.h, on 64-bit targets.
static_assert(sizeof(void*) != 8 || sizeof(Slot) == 24, "a slot header is two links and two words");

namespace {

std::size_t aligned(std::size_t bytes) {
  const std::size_t a = window::kWindowAlign;
  return (bytes + a - 1) / a * a;
}

}  // namespace

Slot* Slot::create(std::string_view key, window::Mode mode, std::span<const window::WindowSpec> members,
                   std::size_t riders, bool grouped, const WindowMaker* maker, std::size_t window_bytes,
                   const KeyExtra& extra) {
  const std::size_t offset = window_offset(key.size());
  // ::operator new aligns to at least __STDCPP_DEFAULT_NEW_ALIGNMENT__ (16).
  static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ >= window::kWindowAlign && alignof(Slot) <= window::kWindowAlign);
  char* mem = static_cast<char*>(::operator new(offset + window_bytes + extra.bytes));
  if (extra.bytes != 0) {
    std::memset(mem + offset + window_bytes, 0, extra.bytes);
    if (extra.init != nullptr) extra.init(mem + offset + window_bytes);
  }
  Slot* s = new (mem) Slot(static_cast<uint32_t>(key.size()));
  if (!key.empty()) std::memcpy(mem + sizeof(Slot), key.data(), key.size());
  window::Window* w = grouped ? WindowGroup::make_at(mem + offset, mode, members, riders)
                      : maker ? maker->make_at(mem + offset, mode, members[0])
                              : window::make_window_at(mem + offset, mode, members[0]);
  // window() finds it there: the Window base is at the start of either window.
  if (static_cast<void*>(w) != mem + offset) std::abort();
  return s;
}

void Slot::destroy() {
  window().~Window();
  this->~Slot();
  ::operator delete(static_cast<void*>(this));
}

KeyMap::KeyMap(window::Mode mode, const window::WindowSpec& spec, std::size_t max_keys, const WindowMaker* maker,
               KeyExtra extra)
    : mode_(mode),
      members_{spec},
      maker_(maker),
      max_keys_(max_keys == 0 ? 1 : max_keys),
      // A multiple of kWindowAlign: the extra follows.
      window_bytes_(aligned(maker ? maker->bytes_at(mode, spec) : window::window_bytes_at(mode, spec))),
      extra_(extra) {}

KeyMap::KeyMap(window::Mode mode, std::vector<window::WindowSpec> members, std::size_t riders, std::size_t max_keys)
    : mode_(mode),
      members_(std::move(members)),
      riders_(riders),
      grouped_(true),
      max_keys_(max_keys == 0 ? 1 : max_keys),
      window_bytes_(WindowGroup::bytes_at(mode, members_, riders)) {
  if (members_.empty()) std::abort();
}

KeyMap::~KeyMap() {
  // Slots that deciders still hold outlive the map; they are out of it now.
  for (detail::LruLinks* l = lru_.next; l != &lru_;) {
    Slot* s = static_cast<Slot*>(l);
    l = l->next;
    s->prev = s->next = nullptr;
    s->refs_.fetch_and(~Slot::kActive, std::memory_order_relaxed);
    s->release();
  }
}

uint32_t KeyMap::hash_of(std::string_view key) {
  const uint64_t h = std::hash<std::string_view>{}(key);
  return static_cast<uint32_t>(h ^ (h >> 32));
}

std::size_t KeyMap::find(std::string_view key, uint32_t h) const {
  for (std::size_t i = home(h);; i = (i + 1) & mask_) {
    const Slot* s = table_[i];
    if (s == nullptr || (hashes_[i] == h && s->key() == key)) return i;
  }
}

std::size_t KeyMap::index_of(const Slot* s) const {
  for (std::size_t i = home(hash_of(s->key()));; i = (i + 1) & mask_)
    if (table_[i] == s) return i;
}

// Knuth's algorithm R (TAOCP 6.4): the entries after the hole that may move
// into it (their probe runs from home through the hole) do, until an empty one.
void KeyMap::erase_at(std::size_t i) {
  for (std::size_t j = (i + 1) & mask_; table_[j] != nullptr; j = (j + 1) & mask_) {
    const std::size_t from_home = (j - home(hashes_[j])) & mask_;
    if (from_home >= ((j - i) & mask_)) {
      table_[i] = table_[j];
      hashes_[i] = hashes_[j];
      i = j;
    }
  }
  table_[i] = nullptr;
}

void KeyMap::grow() {
  const int bits = bits_ == 0 ? 4 : bits_ + 1;
  const std::size_t cap = std::size_t{1} << bits;
  auto table = std::make_unique<Slot*[]>(cap);  // all null
  auto hashes = std::make_unique_for_overwrite<uint32_t[]>(cap);
  std::swap(table_, table);
  std::swap(hashes_, hashes);
  const std::size_t old_cap = mask_ + 1;
  const bool had = bits_ != 0;
  bits_ = bits;
  mask_ = cap - 1;
  if (!had) return;
  for (std::size_t k = 0; k < old_cap; ++k) {
    if (table[k] == nullptr) continue;
    std::size_t i = home(hashes[k]);
    while (table_[i] != nullptr) i = (i + 1) & mask_;
    table_[i] = table[k];
    hashes_[i] = hashes[k];
  }
}

void KeyMap::link_front(Slot* s) {
  s->prev = &lru_;
  s->next = lru_.next;
  lru_.next->prev = s;
  lru_.next = s;
}

void KeyMap::unlink(Slot* s) {
  s->prev->next = s->next;
  s->next->prev = s->prev;
  s->prev = s->next = nullptr;
}

KeyMap::Lookup KeyMap::get(std::string_view key) {
  const uint32_t h = hash_of(key);
  Lookup out;
  std::lock_guard lock(mu_);
  if (size_ != 0) {
    Slot* s = table_[find(key, h)];
    if (s != nullptr) {
      if (lru_.next != s) {
        unlink(s);
        link_front(s);
      }
      out.slot = SlotRef::share(s);
      return out;
    }
  }
  if (size_ >= max_keys_) {
    Slot* victim = static_cast<Slot*>(lru_.prev);
    erase_at(index_of(victim));
    unlink(victim);
    --size_;
    if (victim->active()) {
      active_.erase(std::find(active_.begin(), active_.end(), victim));
      victim->refs_.fetch_and(~Slot::kActive, std::memory_order_relaxed);
    }
    out.evicted = SlotRef::adopt(victim);  // the map's reference, handed over
  }
  if ((size_ + 1) * 8 > (mask_ + 1) * 7) grow();  // also makes the first table
  Slot* s = Slot::create(key, mode_, members_, riders_, grouped_, maker_, window_bytes_, extra_);
  const std::size_t i = find(key, h);
  table_[i] = s;
  hashes_[i] = h;
  ++size_;
  link_front(s);
  out.slot = SlotRef::share(s);  // and the map keeps the creator's
  out.created = true;
  return out;
}

bool KeyMap::touch(const SlotRef& ref) {
  Slot* s = ref.get();
  std::lock_guard lock(mu_);
  if (!s->in_map()) return false;
  if (lru_.next != s) {
    unlink(s);
    link_front(s);
  }
  return true;
}

void KeyMap::mark_active(const SlotRef& ref) {
  Slot* s = ref.get();
  std::lock_guard lock(mu_);
  // An evicted slot is no longer in the map: it must not come back as active.
  if (s->active() || !s->in_map()) return;
  s->refs_.fetch_or(Slot::kActive, std::memory_order_relaxed);
  active_.push_back(s);
}

std::vector<SlotRef> KeyMap::active(bool prune) {
  std::lock_guard lock(mu_);
  if (prune) {
    auto quiet = [](Slot* s) {
      if (!s->window().quiet()) return false;
      s->refs_.fetch_and(~Slot::kActive, std::memory_order_relaxed);
      return true;
    };
    active_.erase(std::remove_if(active_.begin(), active_.end(), quiet), active_.end());
  }
  std::vector<SlotRef> v;
  v.reserve(active_.size());
  for (Slot* s : active_) v.push_back(SlotRef::share(s));
  return v;
}

std::vector<SlotRef> KeyMap::all() const {
  std::lock_guard lock(mu_);
  std::vector<SlotRef> v;
  v.reserve(size_);
  for (detail::LruLinks* l = lru_.next; l != &lru_; l = l->next) v.push_back(SlotRef::share(static_cast<Slot*>(l)));
  return v;
}

std::vector<SlotRef> KeyMap::by_age() const {
  std::lock_guard lock(mu_);
  std::vector<SlotRef> v;
  v.reserve(size_);
  for (detail::LruLinks* l = lru_.prev; l != &lru_; l = l->prev) v.push_back(SlotRef::share(static_cast<Slot*>(l)));
  return v;
}

bool KeyMap::holds(const SlotRef& ref) const {
  std::lock_guard lock(mu_);
  return ref->in_map();
}

bool KeyMap::forget(const SlotRef& ref) {
  Slot* s = ref.get();
  std::lock_guard lock(mu_);
  if (!s->in_map()) return false;
  erase_at(index_of(s));
  unlink(s);
  --size_;
  if (s->active()) {
    active_.erase(std::find(active_.begin(), active_.end(), s));
    s->refs_.fetch_and(~Slot::kActive, std::memory_order_relaxed);
  }
  s->release();  // the map's reference; `ref` keeps it until its holder is done
  return true;
}

std::size_t KeyMap::size() const {
  std::lock_guard lock(mu_);
  return size_;
}

}  // namespace swthrottle::engine
