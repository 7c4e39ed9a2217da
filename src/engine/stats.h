// Counters for --stats and SIGUSR1. Relaxed atomics: they are reports, not
// synchronization, and may be read while deciders run.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace swthrottle::engine {

struct Counter {
  std::atomic<uint64_t> v{0};
  void add(uint64_t n = 1) { v.fetch_add(n, std::memory_order_relaxed); }
  uint64_t get() const { return v.load(std::memory_order_relaxed); }
};

struct RuleStats {
  Counter lines;       // lines that matched the rule (after ignore)
  Counter events;      // events counted (alert rules)
  Counter passed;      // lines passed (throttle rules)
  Counter suppressed;  // lines suppressed (throttle) / condition met without an alert (alert)
  Counter alerts;
  Counter resolveds;
  Counter summaries;
  Counter late;         // events too old for the window
  Counter untimed;      // matched before any log timestamp was seen: not windowed
  Counter keys;         // keys created
  Counter evictions;    // keys evicted by max_keys
  Counter forgotten;    // keys of a watched rule forgotten after `forget` without an event
  Counter fleet_local;  // fleet rule: decided without the fleet (no answer in time; on_unreachable)
  Counter fleet_late;   // fleet rule: older than the fleet window (another host is ahead)
  Counter learned;      // `new` rule: values remembered while it learns (no alert)
};

struct GlobalStats {
  Counter lines;         // lines read
  Counter matched;       // lines that matched at least one rule
  Counter written;       // lines written
  Counter truncated;     // lines cut at --max-line
  Counter untimed;       // lines without a timestamp before any was seen (time = log)
  Counter no_timestamp;  // lines without a timestamp that took the previous one
  Counter untrusted;     // lines whose timestamp was not trusted (DESIGN.md §4): too far ahead
  Counter invalid_json;  // lines read as JSON that were not (format = "json", or "auto" and a '{')
  Counter cut;           // multi-line events cut at a cap (input/event_grouper.h)
  // Lines read as JSON but for bad bytes or escapes in their strings, read
  // leniently (match/json_repair.h).
  Counter json_repaired;
};

}  // namespace swthrottle::engine
