// Rendering Records as text or JSON Lines (DESIGN.md §5), and writing them to a
// file descriptor one write(2) per record.
//
// Text format, one line per record:
//   a passed line:  the line's bytes, unchanged, then "\n"
//   alert:     swthrottle: alert RULE key=KEY count=N threshold=Y window=W suppressed=S time=T: MESSAGE
//   resolved:  swthrottle: resolved RULE key=KEY count=N threshold=Y window=W time=T
//   summary:   swthrottle: summary RULE key=KEY suppressed=S first=T1 last=T2 window=W time=T
// " key=KEY" is left out when the key is ""; a `when` rule shows when="EXPR"
// instead of threshold=Y; a rule with more than one event also shows
// " counts=EVENT:N,EVENT:N" right after count=N; T is RFC 3339 UTC with ms,
// or "-" before any log timestamp was seen. ": MESSAGE" is the rendered
// message, or the triggering line when the rule has none. Text inside
// swthrottle: records (every field from the rules or the log: rule, key,
// events, when, window, message, triggering line) goes through
// append_text_escaped (util/json.h): invalid UTF-8 becomes U+FFFD; the C0
// controls are written as JSON writes them (`\n`, `\r`, `\t`, `\b`, `\f`,
// else `\u00XX`: ESC is `\u001b`), DEL as `\u007f`, the C1 controls
// U+0080-U+009F as `\u0080`..`\u009f`, and a backslash as `\\`. So each
// record is exactly one line, no byte of the log can drive the reader's
// terminal, and a `\` always starts an escape. A passed line is not escaped.
//
// JSON: one object per line, fields in the order of DESIGN.md §5.
#pragma once

#include <atomic>
#include <string>
#include <string_view>

#include "engine/record.h"

namespace swthrottle::output {

enum class Format { Text, Json };
// The name --format takes.
constexpr std::string_view to_string(Format f) { return f == Format::Text ? "text" : "json"; }

// Appends one record as one line (ending "\n") to `out`. Allocates only to
// grow `out`.
void render(std::string& out, const engine::Record& r, Format f);
// The record as JSON, as render() writes it, with "id" (output/record_id.h)
// as its first member: what webhooks and exec actions get.
void render_with_id(std::string& out, const engine::Record& r, std::string_view id);

// Writes rendered records to a file descriptor it does not own: one write(2)
// per record (looping on partial writes and EINTR, and waiting in poll(2)
// when the descriptor is non-blocking and full), so every record is flushed
// at once and records of one writer never interleave mid-line.
//
// The first failure closes the writer for good: write() returns false from
// then on without writing. EPIPE (the reader went away; the program must
// ignore SIGPIPE) is the quiet way to end, and leaves error() empty; any
// other error also leaves error() holding its strerror text (e.g. "No space
// left on device").
//
// abandon() (thread-safe) makes a write that waits for room give up at its
// next EINTR or poll slice, and closes the writer quietly (error() empty):
// FdSink interrupts the blocked thread with a signal to get there.
//
// Not thread-safe otherwise: one writer per output, used by one thread at a time.
class FdWriter {
 public:
  explicit FdWriter(int fd, Format f);

  // Returns true when the whole record was written.
  bool write(const engine::Record& r);

  bool closed() const { return closed_; }
  const std::string& error() const { return error_; }
  Format format() const { return format_; }
  void abandon() { abandoned_.store(true, std::memory_order_release); }

 private:
  int fd_;
  Format format_;
  bool closed_ = false;
  std::atomic<bool> abandoned_{false};
  std::string error_;
  std::string buf_;  // reused for every record: no allocation in steady state
};

}  // namespace swthrottle::output
