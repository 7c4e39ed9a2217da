// EngineState: everything a continuing run needs (SPEC §6 --state): "now",
// the last log timestamp seen, and per rule its windows with their alert and
// throttle state, keyed windows in least-recently-updated order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "window/window.h"

namespace swthrottle::engine {

struct RuleWindows {
  std::string rule;         // Rule::name
  std::string fingerprint;  // config::fingerprint() (rule_identity.h): a changed rule starts fresh
  struct Keyed {
    std::string key;  // "" for a rule without `key`
    window::WindowState window;
  };
  std::vector<Keyed> windows;  // keyed rules: least recently updated first
};

struct EngineState {
  static constexpr int kVersion = 1;
  int64_t now_ms = -1;       // newest time seen, -1 before any
  int64_t last_log_ms = -1;  // time = log: the last timestamp seen, for lines without one
  std::vector<RuleWindows> rules;
};

}  // namespace swthrottle::engine
