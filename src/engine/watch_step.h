// The state machine of a watched key (config/watch_parser.h; man page:
// SILENCE AND SEQUENCES): `for` makes a key pending before it fires, as
// Prometheus does, and a boundary check may raise an alert, but only for an
// episode not announced yet. The cooldown, announcing and resolving are the
// alert rule's own (window/alert_state.h), stepped here on the key's state
// instead of the window's. Pure: the caller holds the key's lock.
#pragma once

#include <cstdint>

#include "window/alert_state.h"

namespace swthrottle::engine {

struct WatchState {
  window::AlertState alert;
  // `for`: when the condition began to hold, while not yet for long enough;
  // -1: not pending (times are never negative: window/bucket.h).
  int64_t pending_since_ms = -1;

  constexpr bool pending() const { return pending_since_ms >= 0; }
  friend constexpr bool operator==(const WatchState&, const WatchState&) = default;
};

enum class WatchResult : uint8_t {
  Quiet,        // the condition is false, the key is not firing
  StillFiring,  // the condition is false, but resolve_when does not hold yet
  Pending,      // the condition holds, not yet for `for`
  Alert,        // an alert record
  Resolved,     // the episode ends (a resolved record with resolve)
  HeldBack,     // a line met the condition inside the cooldown: tallied
  Firing,       // a check found the condition holding and nothing to announce
};

// One evaluation at now_ms. `holds`: the condition on the key's counts (false
// during the warm-up of a condition that holds on an empty window); `clears`:
// the episode may end (window::clears(), read only when !holds);
// `from_event`: a line of the key was just counted (else a boundary check).
//
// A line that meets the condition alerts as on any alert rule: no alert
// yet, or the cooldown has passed since the last. A boundary check alerts
// only for an episode not yet announced (a silence that goes on is one
// episode), once the cooldown allows. With for_ms > 0 a key that is not
// firing is pending until the condition has held for for_ms at every
// evaluation; any evaluation where it does not hold starts that over.
constexpr WatchResult step_watch(WatchState& s, bool holds, bool clears, bool from_event, int64_t now_ms,
                                 int64_t for_ms, const window::AlertPolicy& policy) {
  if (!holds) {
    s.pending_since_ms = -1;
    const window::AlertStep step = window::next_alert_state(s.alert, false, clears, false, now_ms, policy);
    s.alert = step.next;
    if (step.action == window::AlertAction::Resolved) return WatchResult::Resolved;
    return s.alert.firing ? WatchResult::StillFiring : WatchResult::Quiet;
  }
  if (for_ms > 0 && !s.alert.firing) {
    if (!s.pending()) s.pending_since_ms = now_ms;
    if (now_ms - s.pending_since_ms < for_ms) return WatchResult::Pending;
  }
  if (!from_event && s.alert.announced) return WatchResult::Firing;
  // May raise: next_alert_state's "from an event".
  const window::AlertStep step = window::next_alert_state(s.alert, true, false, true, now_ms, policy);
  s.alert = step.next;
  if (step.action == window::AlertAction::Alert) return WatchResult::Alert;
  return from_event ? WatchResult::HeldBack : WatchResult::Firing;
}

}  // namespace swthrottle::engine
