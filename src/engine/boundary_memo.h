// BoundaryMemo: one caller's memo of the first bucket boundary after a "now"
// it saw. Most lines cross no boundary; a line whose time is before that
// boundary needs no per-rule division to know it (Engine::offer), and a line
// that also matched nothing needs no call into the engine at all (the
// decider only raises a pending "now", pipeline/decider.h).
//
// One memo per calling thread (a decider, the timer), never shared: "now"
// only grows, so the boundary after a now this caller saw is never later
// than the one after the engine's current now, whereas a value computed by
// another thread from a later now could skip a boundary here.
#pragma once

#include <cstdint>

namespace swthrottle::engine {

class Engine;

struct BoundaryMemo {
  const Engine* engine = nullptr;  // the engine it was computed for
  int64_t base = -1;               // a "now" this caller saw
  int64_t next = INT64_MIN;        // the first bucket boundary of any rule after base

  // Does moving now from old_now (≥ base) to new_now cross no boundary?
  bool crosses_none(const Engine* e, int64_t old_now, int64_t new_now) const {
    return engine == e && base <= old_now && new_now < next;
  }
  // Times before this cross no boundary of `e` (INT64_MIN: none known yet).
  int64_t quiet_until(const Engine* e) const { return engine == e ? next : INT64_MIN; }
};

}  // namespace swthrottle::engine
