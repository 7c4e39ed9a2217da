// Snapshot: what a running swthrottle says about itself at one moment (man
// page: METRICS): the counters of --stats, the delivery and fleet state,
// and how far behind each input is. Plain data, each module's own figures
// held whole (the engine's counts, ExecStats, DeliveryStats, FleetCounts):
// RunMetrics and the App fill it (the timer, the HTTP endpoint, SIGUSR1,
// the end of a run), and the three renderers only read it: the text of
// --stats (stats_text.h), its JSON and the Prometheus text (exposition.h).
// A new figure is a field of its module's stats struct plus a line in each
// renderer; a module that is not there (no exec pool, no fleet rules) is an
// empty optional, and every renderer leaves it out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "delivery/delivery_stats.h"
#include "engine/stats.h"
#include "fleet/fleet_stats.h"
#include "output/exec_stats.h"

namespace swthrottle::metrics {

struct RuleCounters {
  std::string rule;
  std::string kind;           // "alert" | "throttle"
  engine::RuleCounts counts;  // "keys" counts the keys created
  uint64_t keys_now = 0;      // keys with a window now (a gauge)
  // What the text of --stats shows only on the rules it concerns, so that
  // the lines of the others stay as they were.
  std::optional<uint64_t> values_now;  // a `new` rule: values remembered now (counts.learned beside it)
  bool forgets_keys = false;           // a watched rule with `forget` (counts.forgotten)
  bool fleet = false;                  // a fleet rule (counts.fleet_local, counts.fleet_late)
};

struct InputState {
  std::string input;                     // as given ("-": standard input)
  uint64_t lines = 0;                    // lines read
  std::optional<uint64_t> bytes_behind;  // a followed file: its size minus what was read
  std::optional<int64_t> newest_log_ms;  // time = "log": the newest timestamp read
  int64_t last_progress_ms = 0;          // wall clock when a line of it was last decided (0: never)
  // time = "log": reported for giving no timestamp (pipeline/stamp_watch.h),
  // and none has come since.
  bool no_timestamp = false;
};

// The fleet client's counters, and the [fleet] names the text of --stats
// repeats.
struct FleetState {
  fleet::FleetCounts counts;
  std::string redis, namespace_name, host;
};

struct Snapshot {
  int64_t wall_ms = 0;     // when it was taken
  int64_t started_ms = 0;  // process start (wall)
  bool ready = false;      // rules loaded, inputs open
  uint64_t reloads = 0, reload_failures = 0;
  engine::GlobalCounts counts;  // the lines of every input together
  bool groups_events = false;   // `multiline` is set: the text of --stats shows counts.cut
  std::vector<RuleCounters> rules;
  std::vector<InputState> inputs;
  std::optional<output::ExecStats> exec;  // absent: no exec pool
  delivery::DeliveryStats delivery;       // no destination: none listed, no outbox
  std::optional<FleetState> fleet;        // absent: no fleet rules
};

}  // namespace swthrottle::metrics
