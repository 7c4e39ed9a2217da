// The Prometheus text exposition (format 0.0.4) of a Snapshot (man page:
// METRICS): swthrottle_ names, _total counters, base units (seconds,
// bytes), one family per line of HELP and TYPE, label values escaped
// (backslash, double quote, newline). `promtool check metrics` accepts it.
//
// The families, in the order they are written. A family without a sample
// is left out entirely (no HELP or TYPE line): a Prometheus query for it
// finds nothing, rather than a 0 that would claim a figure we do not have.
//
//   family                                            type     labels              when
//   swthrottle_ready                                  gauge                        always (1 ready, 0 not)
//   swthrottle_start_time_seconds                     gauge                        always (Unix time)
//   swthrottle_reloads_total                          counter                      always
//   swthrottle_reload_failures_total                  counter                      always
//   swthrottle_lines_read_total                       counter                      always
//   swthrottle_lines_matched_total                    counter                      always
//   swthrottle_lines_written_total                    counter                      always
//   swthrottle_lines_truncated_total                  counter                      always (cut at the line length cap)
//   swthrottle_lines_untimed_total                    counter                      always
//   swthrottle_lines_no_timestamp_total               counter                      always
//   swthrottle_lines_untrusted_total                  counter                      always
//   swthrottle_lines_invalid_json_total               counter                      always
//   swthrottle_lines_json_repaired_total              counter                      always
//   swthrottle_events_cut_total                       counter                      always (multi-line events cut at a
//   cap) swthrottle_rule_lines_total                       counter  rule, kind          one sample per rule
//   swthrottle_rule_events_total                      counter  rule, kind
//   swthrottle_rule_passed_total                      counter  rule, kind
//   swthrottle_rule_suppressed_total                  counter  rule, kind
//   swthrottle_rule_alerts_total                      counter  rule, kind
//   swthrottle_rule_resolved_total                    counter  rule, kind
//   swthrottle_rule_summaries_total                   counter  rule, kind
//   swthrottle_rule_late_total                        counter  rule, kind
//   swthrottle_rule_untimed_total                     counter  rule, kind
//   swthrottle_rule_keys                              gauge    rule, kind          keys with a window now
//   swthrottle_rule_keys_created_total                counter  rule, kind
//   swthrottle_rule_evictions_total                   counter  rule, kind
//   swthrottle_rule_forgotten_total                   counter  rule, kind          watched rules' `forget`
//   swthrottle_input_lines_total                      counter  input               one sample per input
//   swthrottle_input_behind_bytes                     gauge    input               a followed file
//   swthrottle_input_log_time_lag_seconds             gauge    input               time = "log", once a stamp was read:
//                                                                                  (wall - newest stamp), may be < 0
//   swthrottle_input_last_progress_timestamp_seconds  gauge    input               once a line of it was decided
//   swthrottle_input_no_timestamp                     gauge    input               1: no timestamp reported under
//                                                                                  time = "log" (stamp_watch.h)
//   swthrottle_exec_started_total                     counter                      with an exec pool
//   swthrottle_exec_succeeded_total                   counter
//   swthrottle_exec_failed_attempts_total             counter
//   swthrottle_exec_timed_out_total                   counter
//   swthrottle_exec_gave_up_total                     counter
//   swthrottle_exec_dropped_total                     counter
//   swthrottle_exec_not_run_total                     counter
//   swthrottle_exec_queued                            gauge
//   swthrottle_delivery_queued_total                  counter  destination         one sample per destination
//   swthrottle_delivery_delivered_total               counter  destination
//   swthrottle_delivery_attempts_total                counter  destination
//   swthrottle_delivery_failed_attempts_total         counter  destination
//   swthrottle_delivery_dead_letters_total            counter  destination
//   swthrottle_delivery_reposts_total                 counter  destination
//   swthrottle_delivery_pending                       gauge    destination
//   swthrottle_delivery_circuit_open                  gauge    destination         1 open, 0 closed
//   swthrottle_outbox_pending                         gauge                        with an outbox
//   swthrottle_outbox_dead_letters_total              counter
//   swthrottle_outbox_dropped_total                   counter
//   swthrottle_fleet_degraded                         gauge                        with fleet rules (1: deciding alone)
//   swthrottle_fleet_asked_total                      counter
//   swthrottle_fleet_answered_total                   counter
//   swthrottle_fleet_unanswered_total                 counter
//   swthrottle_fleet_timeouts_total                   counter
//   swthrottle_fleet_errors_total                     counter
//   swthrottle_fleet_reconnects_total                 counter
//   swthrottle_fleet_evicted_keys_total               counter
//   swthrottle_fleet_failovers_total                  counter
//   swthrottle_fleet_unconfirmed_total                counter                      what failovers may have lost
//
// `kind` is the rule's kind ("alert" | "throttle") on every rule sample, so
// that sum by (kind) needs no join. Seconds are exact decimals of the
// snapshot's milliseconds ("1.5", "1764130505.123"), counters integers.
// Label values that are not valid UTF-8 are repaired (U+FFFD) first.
#pragma once

#include <string>

#include "metrics/snapshot.h"

namespace swthrottle::metrics {

// The Content-Type of prometheus_text() over HTTP.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string prometheus_text(const Snapshot& s);

// The same figures as one JSON object (for --stats with --format json), no
// newline. Keys in this order; times RFC 3339 UTC with milliseconds:
//
//   {"time": "2026-11-26T05:00:00.000Z", "started": "...", "ready": true,
//    "reloads": 0, "reload_failures": 0,
//    "lines": {"read", "matched", "written", "truncated", "untimed",
//              "no_timestamp", "untrusted", "invalid_json", "json_repaired"}, "events_cut": 0,
//    "rules": [{"rule", "kind", "lines", "events", "passed", "suppressed",
//               "alerts", "resolved", "summaries", "late", "untimed", "keys",
//               "evictions", "forgotten", "keys_now"}],
//    "inputs": [{"input", "lines", "bytes_behind"?, "log_time_lag_seconds"?,
//                "last_progress": "..." | null}],
//    "exec"?: {"started", "succeeded", "failed_attempts", "timed_out", "gave_up",
//              "dropped", "not_run", "queued"},
//    "destinations": [{"destination", "queued", "delivered", "attempts",
//                      "failed_attempts", "dead_letters", "reposts", "pending",
//                      "circuit_open"}],
//    "outbox"?: {"pending", "dead_letters", "dropped"},
//    "fleet"?: {"degraded", "asked", "answered", "unanswered", "timeouts",
//               "errors", "reconnects"}}
//
// The names are the Snapshot's: "keys" counts the keys created, "keys_now"
// is the gauge. "?" marks a key left out when the snapshot has no such figure (as in the
// Prometheus text). Strings that are not valid UTF-8 are repaired (U+FFFD).
std::string stats_json(const Snapshot& s);

}  // namespace swthrottle::metrics
