// Record: one thing swthrottle writes (DESIGN.md §5). The engine makes them; the
// output writers render them; nothing else happens to them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/rules.h"

namespace swthrottle::engine {

enum class RecordType { Alert, Resolved, Summary, Line };

// The record's "type" in JSON and --exec's SWTHROTTLE_TYPE; the text format's tag.
constexpr std::string_view to_string(RecordType t) {
  switch (t) {
    case RecordType::Alert: return "alert";
    case RecordType::Resolved: return "resolved";
    case RecordType::Summary: return "summary";
    case RecordType::Line: break;
  }
  return "line";
}

struct Record {
  RecordType type = RecordType::Line;
  bool has_time = true;  // false: written before any log timestamp was seen ("time": null)
  int64_t time_ms = 0;   // "now" when written, ms since the Unix epoch (UTC)

  // Alert, Resolved, Summary: the rule. Line: the first throttle rule that
  // passed it, or null when no throttle rule matched (passthrough).
  const config::Rule* rule = nullptr;
  std::string key;  // "" for a rule without `key`

  // Alert, Resolved
  uint64_t count = 0;  // total of the rule's event counts in the window
  // Alert, Resolved: per event, in rule->event_names order, in the window.
  // Summary: per event, how many of the suppressed lines matched it.
  std::vector<uint64_t> counts;
  std::string message;  // rendered `message`; empty = the rule has none
  bool has_message = false;

  // Alert, Resolved of a rule whose condition reads previous(e): per event,
  // the counts of the window before this one. Empty for other rules.
  std::vector<uint64_t> previous{};
  // Alert, Resolved of a rule with `distinct`: the distinct values in the
  // window; estimated: a HyperLogLog estimate, not an exact count.
  uint64_t distinct = 0;
  bool has_distinct = false;
  bool distinct_estimated = false;
  // Alert of a rule with `new`: the value not seen within `remember`.
  std::string value{};
  bool has_value = false;

  // Alert, Resolved, Summary
  uint64_t suppressed = 0;

  // Summary: times the first and last suppressed lines were decided at
  int64_t first_ms = 0;
  int64_t last_ms = 0;

  // Alert (triggering line) and Line. Not owned: valid while the line is.
  std::string_view line;
  bool has_line = false;
};

}  // namespace swthrottle::engine
