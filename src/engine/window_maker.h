// WindowMaker: how a kind of rule builds the window of each of its keys
// (RuleLogic::window_maker(), rule_logic.h), in memory a KeyMap allocates
// for the key's slot (keymap.h), or on its own for a rule without `key`.
// Most kinds take a window of the rule's mode (no maker); a rule with
// `distinct` takes a DistinctWindow (distinct_window.h).
#pragma once

#include <cstddef>
#include <memory>

#include "window/window.h"

namespace swthrottle::engine {

struct WindowMaker {
  // The bytes from a kWindowAlign-aligned address, counters included.
  std::size_t (*bytes_at)(window::Mode mode, const window::WindowSpec& spec);
  // Builds the window at `where`; it is ended with ~Window().
  window::Window* (*make_at)(void* where, window::Mode mode, const window::WindowSpec& spec);
};

// A window of its own (a rule without `key`): of the mode, or built by `maker`.
inline std::shared_ptr<window::Window> make_rule_window(window::Mode mode, const window::WindowSpec& spec,
                                                        const WindowMaker* maker) {
  if (maker == nullptr) return window::make_window(mode, spec);
  void* mem = ::operator new(maker->bytes_at(mode, spec));
  window::Window* w = maker->make_at(mem, mode, spec);
  return std::shared_ptr<window::Window>(w, [mem](window::Window* p) {
    p->~Window();
    ::operator delete(mem);
  });
}

}  // namespace swthrottle::engine
