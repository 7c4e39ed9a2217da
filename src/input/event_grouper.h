// EventGrouper: lines -> multi-line events (`multiline`, DESIGN.md §1), for one
// input.
//
// An event is a first line and the lines that continue it, joined with "\n"
// (each line as LineReader gives it: without its "\n" and a "\r" before it),
// so a rule sees a stack trace whole and a passed event is written whole.
// Whether a line continues the event before it:
//   { start = 'RE' }     it does unless RE finds it;
//   { continue = 'RE' }  it does when RE finds it;
//   "java"               it is a frame ("\tat ...", "    at ..."), "Caused by:",
//                        "\tSuppressed:", "... N more", "... N common frames
//                        omitted", or a line that begins with a qualified
//                        exception class ("java.io.IOException: ...", the line
//                        a logger writes after its message);
//   "python"             it is "Traceback (most recent call last):", or, inside
//                        a traceback, an indented line, the first unindented
//                        line after them (the "ValueError: ..." line that ends
//                        a traceback), and the empty lines and "During
//                        handling ..." / "The above exception ..." lines
//                        that chain tracebacks.
//
// Caps: an event holds at most max_lines lines and max_bytes bytes (the
// spec's: 500 and 64 KiB unless the rules say otherwise)
// (the first line may be longer, up to --max-line). A line that would pass a
// cap starts a new event instead, and the cut is counted (take_cut(), shown
// by --stats): nothing is dropped, and --passthrough still writes every line.
//
// Two forms, one grouping:
// - fill() for sources read in batches: complete events only, copied into
//   the caller's storage; the last event, which the next lines may still
//   continue, is carried to the next fill, so no event is split between
//   batches (and -j gives the records of -j 1); on a pipe, the carried
//   event is handed over when nothing more has come for kIdleMs;
// - add() / flush() for followed files, line by line: add() returns an event
//   when the line after it starts the next one; a live source calls flush()
//   once no line has come for kIdleMs, and at its end.
//
// Not thread-safe; one grouper per input, on the thread that reads it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/rules.h"
#include "input/line_reader.h"

namespace re2 {
class RE2;
}

namespace swthrottle::input {

class EventGrouper {
 public:
  // A followed input's pending event is decided after this long without a
  // new line: long enough for a logger's write of a trace in pieces, short
  // enough that an alert is not held back.
  static constexpr int64_t kIdleMs = 1000;

  explicit EventGrouper(const config::MultilineSpec& spec);
  ~EventGrouper();
  EventGrouper(const EventGrouper&) = delete;
  EventGrouper& operator=(const EventGrouper&) = delete;

  // New rules (a reload): the pending event is kept, later lines are
  // grouped by `spec`. Off: every line starts an event. `spec` must outlive
  // the grouper's use of it, as a Generation's rules do.
  void configure(const config::MultilineSpec& spec);

  // Batch form: like LineReader::next_lines, but `out` holds whole events,
  // its text in `storage`. Returns false, with no events, at the end of
  // input (after the last event came out).
  // `line_counts`, if given, gets the number of lines of each event.
  bool fill(LineReader& reader, LineReader::Block& out, std::string& storage, std::size_t max_lines,
            std::size_t max_bytes, std::vector<uint32_t>* line_counts = nullptr);

  // Line form: `line` read at steady time now_ms. Returns the event it ends,
  // valid until the next add() or flush().
  std::optional<Line> add(const Line& line, int64_t now_ms);
  // The pending event, if any, and forgets it.
  std::optional<Line> flush();
  bool pending() const { return open_; }
  // The number of lines of the event add() or flush() last returned.
  std::size_t lines() const { return out_lines_; }
  // When a pending event is due (steady ms): kIdleMs after its last line.
  int64_t idle_deadline() const { return last_ms_ + kIdleMs; }

  // Events cut at a cap since the last call.
  uint64_t take_cut() {
    const uint64_t c = cut_;
    cut_ = 0;
    return c;
  }

 private:
  // Whether `line` continues the event before it, by the rule alone (and
  // the Python state it moves on).
  bool continues(std::string_view line);
  // continues(), then the caps; false when there is no open event.
  bool joins(std::string_view line);
  void opened(std::size_t size, bool truncated);

  const config::MultilineSpec* configured_ = nullptr;  // the spec last configured (compared by address)
  config::MultilineSpec::Kind kind_ = config::MultilineSpec::Kind::Off;
  std::size_t max_lines_ = config::MultilineSpec::kDefaultMaxLines;
  std::size_t max_bytes_ = config::MultilineSpec::kDefaultMaxBytes;
  std::unique_ptr<re2::RE2> re_;  // Start, Continue
  enum class Py { None, InTrace, AfterException, Chain } py_ = Py::None;

  bool open_ = false;  // an event has begun and may go on
  bool open_truncated_ = false;
  std::size_t open_lines_ = 0;
  std::size_t open_bytes_ = 0;
  std::string carry_;  // the open event's text (line form: all of it; batch form: across fills)
  std::string out_;    // line form: the event add() or flush() returned
  std::size_t out_lines_ = 0;
  LineReader::Block raw_;
  int64_t last_ms_ = 0;
  uint64_t cut_ = 0;
};

}  // namespace swthrottle::input
