#include "engine/window_group.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>
#include <type_traits>

namespace swthrottle::engine {

namespace {
std::size_t align_up(std::size_t n) {
  return (n + window::kWindowAlign - 1) / window::kWindowAlign * window::kWindowAlign;
}

std::size_t stride_of(window::Mode mode, std::span<const window::WindowSpec> members) {
  std::size_t stride = 0;
  for (const window::WindowSpec& s : members) stride = std::max(stride, window::window_bytes_at(mode, s));
  return align_up(stride);
}
}  // namespace

std::size_t WindowGroup::header_bytes() { return align_up(sizeof(WindowGroup)); }

static_assert(alignof(AlertRider) <= window::kWindowAlign);
static_assert(std::is_trivially_destructible_v<std::atomic<uint32_t>> && sizeof(std::atomic<uint32_t>) == 4);

std::size_t WindowGroup::bytes_at(window::Mode mode, std::span<const window::WindowSpec> members, std::size_t riders) {
  return header_bytes() + members.size() * stride_of(mode, members) + riders * sizeof(AlertRider) +
         members.size() * sizeof(std::atomic<uint32_t>);
}

WindowGroup* WindowGroup::make_at(void* where, window::Mode mode, std::span<const window::WindowSpec> members,
                                  std::size_t riders) {
  if (members.empty()) std::abort();
  const std::size_t stride = stride_of(mode, members);
  auto* g = new (where) WindowGroup(members[0], static_cast<uint32_t>(members.size()), static_cast<uint32_t>(stride),
                                    static_cast<uint32_t>(riders));
  char* base = static_cast<char*>(where) + header_bytes();
  for (std::size_t i = 0; i < members.size(); ++i) {
    window::Window* w = window::make_window_at(base + i * stride, mode, members[i]);
    // member() finds it there: the Window base is at the start of either window.
    if (static_cast<void*>(w) != base + i * stride) std::abort();
  }
  for (std::size_t i = 0; i < riders; ++i) new (&g->rider(i)) AlertRider();
  for (std::size_t i = 0; i < members.size(); ++i) new (&g->observer_memo(i)) std::atomic<uint32_t>(0);
  return g;
}

WindowGroup::~WindowGroup() {
  for (std::size_t i = 0; i < count_; ++i) member(i).~Window();
  // AlertRider is trivially destructible.
  static_assert(std::is_trivially_destructible_v<AlertRider>);
}

AlertRider& WindowGroup::rider(std::size_t i) const {
  char* base = reinterpret_cast<char*>(const_cast<WindowGroup*>(this)) + header_bytes() + count_ * stride_;
  return *std::launder(reinterpret_cast<AlertRider*>(base + i * sizeof(AlertRider)));
}

window::Window& WindowGroup::member(std::size_t i) const {
  char* base = reinterpret_cast<char*>(const_cast<WindowGroup*>(this)) + header_bytes();
  return *std::launder(reinterpret_cast<window::Window*>(base + i * stride_));
}

std::atomic<uint32_t>& WindowGroup::observer_memo(std::size_t i) const {
  char* base = reinterpret_cast<char*>(const_cast<WindowGroup*>(this)) + header_bytes() + count_ * stride_ +
               riders_ * sizeof(AlertRider);
  return *std::launder(reinterpret_cast<std::atomic<uint32_t>*>(base + i * sizeof(std::atomic<uint32_t>)));
}

bool WindowGroup::quiet() const {
  for (std::size_t i = 0; i < count_; ++i)
    if (!member(i).quiet()) return false;
  std::lock_guard lock(riders_mu_);
  for (std::size_t i = 0; i < riders_; ++i)
    if (rider(i).state.firing) return false;
  return true;
}

}  // namespace swthrottle::engine
