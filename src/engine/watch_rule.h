// What a watched rule or a sequence (config/watch_parser.h) keeps beside its
// windows: per key, a small state in the key's own allocation (KeyExtra,
// engine/keymap.h), and per rule the wheel of keys due at boundary checks
// (engine/due_keys.h) and the state of a rule without key.
//
// Memory per key, on top of the key's slot and window (keymap.h):
// sizeof(WatchKey) (a watched rule), or sizeof(SequenceKey) + 8 bytes per
// event (a sequence); and, for a watched rule, 16 bytes per wheel entry: one
// per bucket the key counted events in that is still in its window, and one
// for its deadline. The man page's LIMITS gives the totals.
//
// Internal to src/engine/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

#include "engine/decision.h"
#include "engine/due_keys.h"
#include "engine/watch_step.h"
#include "window/tiny_mutex.h"

namespace swthrottle::engine {

// A key of a watched rule. Its lock makes "count, evaluate, change state"
// one step, in either window mode (the window counts; the decision is here).
struct WatchKey {
  window::TinyMutex mu;  // guards everything below
  bool seen = false;     // watched: a key since its first counted event, a rule's one window since the run began
  bool holds = false;    // the condition at the last evaluation
  WatchState state;
  int64_t since_ms = 0;       // watched since: the warm-up ends one window after it
  int64_t last_event_ms = 0;  // `forget` counts from it
  uint64_t held_back = 0;     // lines that met the condition without an alert since the last alert
  int64_t expiry_b = -1;      // the newest bucket whose leaving the window is in the wheel
  int64_t older_b = -1;       // the last older one (a line behind the others) in the wheel too
  int64_t deadline_b = 0;     // the bucket of the key's deadline entry in the wheel (<= now: none)
  int64_t checked_b = -1;     // the last bucket a check visited it at
};

// A key of a sequence: armed when `when` holds, its `then` counts follow it.
struct SequenceKey {
  window::TinyMutex mu;  // guards everything below and the counts
  bool armed = false;
  window::AlertState alert;  // only `alerted` and `last_alert_ms` (the cooldown) mean something
  int64_t armed_at_ms = 0;
  uint64_t held_back = 0;
  // The events counted since it was armed, one count per event of the rule.
  uint64_t* then_counts() { return reinterpret_cast<uint64_t*>(this + 1); }
};

static_assert(std::is_trivially_destructible_v<WatchKey> && alignof(WatchKey) <= 8);
static_assert(std::is_trivially_destructible_v<SequenceKey> && alignof(SequenceKey) <= 8 &&
              sizeof(SequenceKey) % 8 == 0);

// The per-rule part, shared (like the rule's windows) by the engine of a reload.
struct WatchRule {
  WatchRule(uint32_t window_buckets, std::size_t key_bytes, void (*init)(void*))
      : due(window_buckets), single_storage((key_bytes + 7) / 8, 0) {
    init(single_storage.data());
  }
  DueKeys due;  // a watched rule's keys due at boundary checks
  bool holds_when_empty = false;
  // The state of the rule's one window, for a rule without key.
  std::vector<uint64_t> single_storage;
  void* single() { return single_storage.data(); }
};

struct Hit;
struct RuleState;

// A hit counted into its key's window (under the key's lock, held by the
// caller): the window's counts into `counts`, and the decision so far:
// Late (nothing changed, DESIGN.md §3), or counted with the window's count.
Decision count_watched_hit(RuleState& rs, Hit& hit, std::span<uint64_t> counts);

}  // namespace swthrottle::engine
