// What the exec pool says about itself (man page: METRICS, Actions): its
// counters as plain values, which --stats and the metrics read.
#pragma once

#include <cstdint>

namespace swthrottle::output {

// Counters since the pool was made. An attempt is one spawned process (or
// one failed spawn); a job is one submit().
struct ExecStats {
  uint64_t submitted = 0;        // jobs accepted by submit() (not dropped, not refused after a stop)
  uint64_t started = 0;          // processes spawned (attempts that got as far as a child)
  uint64_t succeeded = 0;        // jobs whose command exited 0 (on some attempt)
  uint64_t failed_attempts = 0;  // attempts that failed: exit != 0, signal, timeout, spawn error, stop
  uint64_t retried = 0;          // attempts made after a failed one
  uint64_t timed_out = 0;        // attempts killed for running past timeout_ms
  uint64_t gave_up = 0;          // jobs reported as failed for good
  uint64_t dropped = 0;          // jobs dropped at a full queue (Full::Drop)
  uint64_t not_run = 0;  // jobs ended by stop(): waiting, between retries, killed while running, or submitted after it
  uint64_t queued = 0;   // now: jobs waiting for a slot
  uint64_t queued_bytes = 0;  // now: their data
};

}  // namespace swthrottle::output
