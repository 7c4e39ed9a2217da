// Snapshot: what a running swthrottle says about itself at one moment (man
// page: METRICS): the counters of --stats, the delivery and fleet state,
// and how far behind each input is. Plain data: the App fills it (the
// timer, the HTTP endpoint, SIGUSR1), the expositions only read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace swthrottle::metrics {

struct RuleCounters {
  std::string rule;
  std::string kind;  // "alert" | "throttle"
  uint64_t lines = 0, events = 0, passed = 0, suppressed = 0, alerts = 0, resolved = 0, summaries = 0;
  uint64_t late = 0, untimed = 0, keys = 0, evictions = 0;
  uint64_t forgotten = 0;  // keys of a watched rule forgotten after `forget`
  uint64_t keys_now = 0;   // keys with a window now (a gauge)
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

struct DestinationCounters {
  std::string destination;  // the destination's label: its name, or scheme://host:port (never the URL)
  uint64_t queued = 0, delivered = 0, attempts = 0, failed_attempts = 0, dead_letters = 0, reposts = 0;
  uint64_t pending = 0;
  bool circuit_open = false;
};

struct Snapshot {
  int64_t wall_ms = 0;     // when it was taken
  int64_t started_ms = 0;  // process start (wall)
  bool ready = false;      // rules loaded, inputs open
  uint64_t lines = 0, matched = 0, written = 0, truncated = 0, untimed = 0, no_timestamp = 0, untrusted = 0,
           invalid_json = 0, cut = 0;
  uint64_t json_repaired = 0;  // lines read as JSON leniently (match/json_repair.h)
  uint64_t reloads = 0, reload_failures = 0;
  std::vector<RuleCounters> rules;
  std::vector<InputState> inputs;
  // exec actions (absent: no exec pool)
  bool exec = false;
  uint64_t exec_started = 0, exec_succeeded = 0, exec_failed_attempts = 0, exec_timed_out = 0, exec_gave_up = 0;
  uint64_t exec_dropped = 0, exec_not_run = 0;  // at a full queue; ended by a stop
  uint64_t exec_queued = 0;                     // now: waiting for a command slot
  std::vector<DestinationCounters> destinations;
  // the outbox (absent without --state and a destination)
  bool outbox = false;
  uint64_t outbox_pending = 0, outbox_dead_letters = 0, outbox_dropped = 0;
  uint64_t outbox_unrecorded = 0;  // done, but still listed in a journal the disk would not let us rewrite
  // fleet (absent without fleet rules)
  bool fleet = false;
  bool fleet_degraded = false;
  uint64_t fleet_asked = 0, fleet_answered = 0, fleet_unanswered = 0, fleet_timeouts = 0, fleet_errors = 0,
           fleet_reconnects = 0;
  uint64_t fleet_evicted = 0;      // keys Redis evicted (fleet windows among them start over)
  uint64_t fleet_failovers = 0;    // primaries replaced by a replica (Sentinel, Cluster)
  uint64_t fleet_unconfirmed = 0;  // counts those primaries had not replicated: what failovers may have lost
};

}  // namespace swthrottle::metrics
