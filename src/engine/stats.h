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

// RuleStats' counters read at one moment, as plain values (a snapshot's).
struct RuleCounts {
  uint64_t lines = 0, events = 0, passed = 0, suppressed = 0, alerts = 0, resolved = 0, summaries = 0;
  uint64_t late = 0, untimed = 0, keys = 0, evictions = 0, forgotten = 0;
  uint64_t fleet_local = 0, fleet_late = 0, learned = 0;
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

  RuleCounts values() const {
    return {lines.get(),     events.get(),    passed.get(),      suppressed.get(), alerts.get(),
            resolveds.get(), summaries.get(), late.get(),        untimed.get(),    keys.get(),
            evictions.get(), forgotten.get(), fleet_local.get(), fleet_late.get(), learned.get()};
  }
};

// GlobalStats' counters read at one moment, as plain values.
struct GlobalCounts {
  uint64_t lines = 0, matched = 0, written = 0, truncated = 0, untimed = 0, no_timestamp = 0, untrusted = 0;
  uint64_t invalid_json = 0, cut = 0, json_repaired = 0;
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

  GlobalCounts values() const {
    return {lines.get(),        matched.get(),   written.get(),      truncated.get(), untimed.get(),
            no_timestamp.get(), untrusted.get(), invalid_json.get(), cut.get(),       json_repaired.get()};
  }
};

}  // namespace swthrottle::engine
