// EngineState: everything a continuing run needs (DESIGN.md §6 --state): "now",
// the last log timestamp seen, and per rule its windows with their alert and
// throttle state, keyed windows in least-recently-updated order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "window/window.h"

namespace swthrottle::engine {

// What a rule with `new` remembers (engine/value_memory.h): the values, as
// hashes (util/value_hash.h), least recently seen first.
struct SeenValues {
  int64_t learn_until_ms = -1;  // -1: no line yet; before it, values are learned (no alert)
  struct Value {
    uint64_t hash = 0;
    int64_t last_ms = 0;  // when it was last seen
  };
  std::vector<Value> values;
};

// What a watched rule or a sequence keeps of a key beside its window
// (engine/watch_rule.h): the alert state is its own, not the window's.
struct WatchedKey {
  int64_t since_ms = -1;              // watched since (its warm-up); -1: not yet
  int64_t last_event_ms = -1;         // its last counted event (`forget`)
  int64_t pending_since_ms = -1;      // `for`: the condition holds since; -1: not pending
  int64_t armed_at_ms = -1;           // a sequence: `when` held at; -1: not armed
  std::vector<uint64_t> then_counts;  // a sequence: events counted since (one per event)
  bool firing = false;
  bool announced = false;
  bool alerted = false;
  int64_t last_alert_ms = 0;
  uint64_t held_back = 0;  // lines that met the condition without an alert since the last
};

struct RuleWindows {
  std::string rule;         // Rule::name
  std::string fingerprint;  // config::fingerprint() (rule_identity.h): a changed rule starts fresh
  struct Keyed {
    std::string key;  // "" for a rule without `key`
    window::WindowState window;
    std::optional<WatchedKey> watch = std::nullopt;  // a watched rule's or a sequence's
  };
  std::vector<Keyed> windows;        // keyed rules: least recently updated first
  std::optional<SeenValues> seen{};  // a rule with `new` ("seen"; absent for other rules)
};

// Counts of a batched fleet rule not yet in the fleet's window when the run
// ended (Redis unreachable): the next run sends them, exactly once.
struct FleetUnsent {
  std::string rule;      // Rule::name
  std::string hash_key;  // the fleet window (its defhash: a changed rule's counts are dropped)
  std::string key;       // the rule key as rendered
  std::string host;      // seq > 0: the flush was sent and not answered; resent as it was
  uint64_t seq = 0;      // 0: never sent (the next run gives it a sequence of its own)
  int64_t now_bucket = 0;
  int64_t newest_t_ms = 0;
  struct Count {
    int64_t bucket = 0;
    uint32_t event = 0;
    uint64_t n = 0;
  };
  std::vector<Count> counts;
};

struct EngineState {
  static constexpr int kVersion = 1;
  int64_t now_ms = -1;       // newest time seen, -1 before any
  int64_t last_log_ms = -1;  // time = log: the last timestamp seen, for lines without one
  std::vector<RuleWindows> rules;
  std::vector<FleetUnsent> fleet_unsent;  // "fleet_unsent": absent when empty
};

}  // namespace swthrottle::engine
