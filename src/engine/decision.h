// Decision: what one rule decided for one line of one of its keys (DESIGN.md
// §3), as a value. The engine acts on it (which lines are written, which
// keys stay active); --explain phrases it (cli/explain.h), so the engine
// holds no prose.
#pragma once

#include <cstdint>

namespace swthrottle::engine {

enum class Verdict : uint8_t {
  // throttle rules
  Passed,      // counted, the line may be written
  Suppressed,  // the window is full: held back and tallied
  // every rule
  Untimed,  // no timestamp seen yet on this input: not windowed (a throttle passes it)
  Copy,     // a backtest candidate decided on the window of the rule it copies
  // alert rules
  Late,           // older than the window: not counted
  Counted,        // counted; the condition is false
  CountedFiring,  // counted; the condition is false but resolve_when does not hold yet
  HeldBack,       // the condition holds; no alert inside the cooldown since the last one
  Alert,          // an alert record
  Resolved,       // a resolved record
  // alert rules with `fleet`
  FleetQueued,    // batched: counted, sent to the fleet with the next flush
  FleetNoAlert,   // no answer, and on_unreachable says not to decide alone: no alert
  FleetLate,      // older than the fleet window: not counted
  FleetClaimed,   // the condition holds and this host claimed the fleet's alert
  FleetHeldBack,  // the condition holds in the fleet window; the fleet's cooldown holds the alert
  FleetCounted,   // counted in the fleet window; the condition is false
};

// What the fleet said to a throttle rule's line.
enum class FleetSaid : uint8_t { None, Room, Full, Unreachable };

struct Decision {
  Verdict verdict = Verdict::Counted;
  FleetSaid fleet = FleetSaid::None;
  bool late = false;          // throttle: too late for the window, decided at "now"
  bool keep_active = false;   // the key must stay among its map's active keys (held back, firing)
  bool counted = false;       // the window counted the line (what a CountObserver is told)
  bool counts_known = false;  // the hit's counts hold the window's counts after the decision
  uint64_t window_count =
      0;                   // with Hit::want_count: the window's count after (throttle: passed lines; alert: all events)
  int64_t window_now = 0;  // alert rules: the window's "now" after the decision
};

}  // namespace swthrottle::engine
