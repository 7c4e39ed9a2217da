// The window factories: a window of either mode, on the heap or in memory
// the caller provides (a key's slot, engine/keymap.h).
#include <memory>
#include <new>

#include "window/accurate.h"
#include "window/efficient.h"
#include "window/window.h"

namespace swthrottle::window {

std::unique_ptr<Window> make_window(Mode mode, const WindowSpec& spec, uint32_t stripes) {
  if (mode == Mode::Accurate) return std::make_unique<AccurateWindow>(spec);
  return std::make_unique<EfficientWindow>(spec, stripes);
}

// Both windows end on a multiple of kWindowAlign, so their counters follow
// them directly. The sizes are the idle-key budget of engine/keymap.h (64-bit).
static_assert(sizeof(void*) != 8 || (sizeof(EfficientWindow) == 88 && sizeof(AccurateWindow) == 104));
static_assert(alignof(AccurateWindow) <= kWindowAlign && sizeof(AccurateWindow) % kWindowAlign == 0);
static_assert(alignof(EfficientWindow) <= kWindowAlign && sizeof(EfficientWindow) % kWindowAlign == 0);

std::size_t window_bytes_at(Mode mode, const WindowSpec& spec) {
  if (mode == Mode::Accurate) return sizeof(AccurateWindow) + AccurateWindow::storage_bytes(spec);
  return sizeof(EfficientWindow) + EfficientWindow::cells_bytes(spec);
}

Window* make_window_at(void* where, Mode mode, const WindowSpec& spec, uint32_t stripes) {
  char* p = static_cast<char*>(where);
  if (mode == Mode::Accurate) return new (where) AccurateWindow(spec, p + sizeof(AccurateWindow));
  return new (where) EfficientWindow(spec, stripes, p + sizeof(EfficientWindow));
}

}  // namespace swthrottle::window
