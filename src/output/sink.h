// RecordSink: where decided records go. The program's sink is stdout
// (output/fd_sink.h); tests use one that keeps what it was given.
//
// Implementations are called by several threads (one decider per input, the
// timer, the signal thread) and must keep each call's records together and
// in order.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/record.h"

namespace swthrottle::output {

class RecordSink {
 public:
  virtual ~RecordSink() = default;

  // Writes `explain` (an --explain block, as it is), then the records, each
  // whole. Returns false once the output is closed (the reader went away or
  // a write failed): nothing more will be written, and the run should end.
  virtual bool write(std::span<const engine::Record> records, std::string_view explain = {}) = 0;

  virtual bool closed() = 0;
  // Closed by a write error (not by the reader going away): exit status 2.
  virtual bool failed() = 0;
  // Has an alert record been handed over while the output was open?
  virtual bool wrote_alert() = 0;
  // At a stop, when the output has taken nothing for a while (a consumer
  // that stopped reading): when a write is blocked in it, the sink closes,
  // that write ends now, returning false, and `why` is reported first (the
  // process may exit as soon as the write ends). Otherwise nothing changes.
  // Thread-safe. True when a write was blocked.
  virtual bool abandon(const std::string& why) {
    (void)why;
    return false;
  }
};

}  // namespace swthrottle::output
