// The two window implementations a rule can choose between (DESIGN.md §2 `mode`).
// Its own header so that the rules file's types can name a mode without
// pulling in the Window interface; config::Mode is this enum.
#pragma once

#include <string_view>

namespace swthrottle::window {

// Accurate: AccurateWindow, one mutex, every decision exact.
// Efficient: EfficientWindow, lock-free; a throttle may pass up to T-1 extra lines.
enum class Mode { Accurate, Efficient };

// The name used in rules files, on the command line and in --check output.
constexpr std::string_view to_string(Mode m) { return m == Mode::Accurate ? "accurate" : "efficient"; }

}  // namespace swthrottle::window
