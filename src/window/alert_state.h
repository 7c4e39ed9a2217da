// The alert state machine of one (rule, key), shared by both window modes
// (DESIGN.md §3 "Alert rules"): when an alert is raised, when cooldown holds it
// back, when a firing key resolves. A pure function of the state, so that
// AccurateWindow (under its mutex) and EfficientWindow (in a CAS loop on one
// packed word) cannot drift apart. Tallies of held-back lines stay with each
// window: they are counted differently in each mode.
#pragma once

#include <cstdint>
#include <span>

#include "window/window.h"

namespace swthrottle::window {

struct AlertState {
  bool firing = false;     // the condition held at the last evaluation
  bool announced = false;  // an alert was written for the current firing episode
  bool alerted = false;    // an alert was ever written (the cooldown applies)
  int64_t last_alert_ms = 0;

  friend constexpr bool operator==(const AlertState&, const AlertState&) = default;
};

struct AlertStep {
  AlertState next;
  AlertAction action = AlertAction::None;
  // next != the state stepped from. Lets the windows skip storing (and
  // EfficientWindow its CAS) on the common path without comparing states.
  bool changed = false;
};

// One evaluation at now_ms. `holds`: the condition over the window's counts.
// `clears`: the episode may end here (see clears() below; only read when
// !holds). `from_event`: a line's events were just counted, so an alert may
// be raised; false for a boundary check, which can only end a firing episode.
// The caller tallies a held-back line exactly when holds && from_event and the
// action is None (inside the cooldown).
constexpr AlertStep next_alert_state(const AlertState& s, bool holds, bool clears, bool from_event, int64_t now_ms,
                                     const AlertPolicy& policy) {
  AlertStep step{s, AlertAction::None, false};
  if (holds && from_event) {
    if (!s.alerted || now_ms - s.last_alert_ms >= policy.cooldown_ms) {
      step.next = AlertState{true, true, true, now_ms};
      step.action = AlertAction::Alert;
      step.changed = true;
    } else if (!s.firing) {
      // A new episode inside the cooldown: not announced, so it will not be
      // resolved either.
      step.next.firing = true;
      step.next.announced = false;
      step.changed = true;
    }
  } else if (!holds && s.firing && clears) {
    step.next.firing = false;
    step.next.announced = false;
    step.changed = true;
    if (s.announced && policy.resolve) step.action = AlertAction::Resolved;
  }
  return step;
}

// Without a clear condition, an episode ends as soon as the condition is false.
constexpr AlertStep next_alert_state(const AlertState& s, bool holds, bool from_event, int64_t now_ms,
                                     const AlertPolicy& policy) {
  return next_alert_state(s, holds, /*clears=*/true, from_event, now_ms, policy);
}

// Whether a firing episode may end at these counts: the condition is false
// and, with a clear condition (resolve_when), that one holds. Where both the
// condition and the clear condition hold, the condition wins: the key fires.
// Evaluated only for a firing key, so a key that is not firing never pays for
// the second condition.
inline bool clears(const AlertPolicy& policy, bool firing, bool holds, std::span<const uint64_t> counts) {
  if (!firing || holds) return false;
  return policy.clear == nullptr || policy.clear->holds(counts);
}

}  // namespace swthrottle::window
