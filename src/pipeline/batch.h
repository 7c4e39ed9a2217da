// Batch: a run of lines of one input, read together, matched together (the
// literal prefilter scans the whole text at once), then decided line by line
// in input order and reused.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "input/envelope_framer.h"
#include "input/event_grouper.h"
#include "input/line_reader.h"
#include "match/logtime.h"
#include "match/matcher.h"

namespace swthrottle::pipeline {

struct Generation;

// A line's log timestamp when it has none.
constexpr int64_t kNoStamp = INT64_MIN;

struct Batch {
  static constexpr std::size_t kLines = 2048;
  static constexpr std::size_t kBytes = 1 << 20;

  input::LineReader::Block lines;           // text: the lines and their "\n" (the prefilter scans it whole)
  std::string storage;                      // a copy of the text, when the reader moves on (-j)
  std::vector<match::MatchResult> results;  // views into the text
  std::vector<int64_t> stamps;              // log timestamp per line, kNoStamp: none
  // A container runtime's log (input/envelope_framer.h): per line, its
  // stream (match::Stream as uint8_t; 0: a plain line) and the runtime's
  // time. Empty for a plain input.
  std::vector<uint8_t> streams;
  std::vector<int64_t> origin_ms;
  Generation* gen = nullptr;          // the rules it was matched with
  uint64_t seq = 0;                   // position in the input (-j hands batches back in this order)
  bool last = false;                  // end of input after this batch
  uint64_t invalid_json = 0;          // lines match() read as JSON that were not
  uint64_t repaired_json = 0;         // lines match() read as JSON leniently (bad strings)
  bool events = false;                // multi-line events (a grouper filled it): a line may hold "\n"
  uint64_t cut = 0;                   // events the grouper cut at a cap in this fill
  std::vector<uint32_t> event_lines;  // with events: the lines of each (line numbers for --explain)
  enum class State { Free, Filled, Matched } state = State::Free;

  std::size_t size() const { return lines.spans.size(); }
  std::string_view line(std::size_t i) const { return lines.text.substr(lines.spans[i].first, lines.spans[i].second); }
  bool truncated(std::size_t i) const { return lines.truncated[i] != 0; }
  // Line i as the decider re-matches it (a batch matched with replaced rules).
  input::Line input_line(std::size_t i) const {
    if (streams.empty()) return input::Line{line(i), truncated(i)};
    return input::Line{line(i), truncated(i), static_cast<match::Stream>(streams[i]), origin_ms[i]};
  }

  // The whole lines the reader has buffered (at most kLines / about kBytes),
  // reading only when it has none: a live pipe never holds a line back.
  // `last` is set, with no lines, at the end of input. With `own`, the text
  // is copied, so it outlives the reader's next call.
  void fill(input::LineReader& reader, bool own);
  // The same, grouped into events (input/event_grouper.h): each "line" is a
  // whole event; the text is always copied.
  void fill(input::LineReader& reader, input::EventGrouper& grouper);

  // A batch made line by line (a followed file's backlog): clear() empties
  // it, add() copies a line in (with its "\n", so the prefilter scans the
  // text whole), and done() points the text at the copy.
  void clear();
  void add(const input::Line& line);
  void done();

  // Matches every line (none match without a matcher) and reads its
  // timestamp (with a logtime: time = log; an event's is its first line's;
  // a container runtime's line has its envelope's).
  // `wall_ms` serves only the year of stamps without one.
  void match(match::Matcher* matcher, const match::LogTime* logtime, int64_t wall_ms);
};

// Batch::fill for a source: grouped into events when `spec` (the input's
// `multiline` in the rules in force) says so. The grouper is made when
// first needed and then kept, reconfigured by each later spec, so an event
// pending when the rules are reloaded is not lost; without `multiline`
// nothing changes (plain fill, no copy unless `own`).
//
// `framer` takes a container runtime's envelope off first (the input's
// `format`: cri, docker, or auto finding one, unless `multiline` is set);
// its lines are then not grouped into events.
void fill_input(Batch& b, input::LineReader& reader, std::optional<input::EventGrouper>& grouper,
                input::EnvelopeFramer& framer, const config::MultilineSpec& spec, config::InputFormat format, bool own);

}  // namespace swthrottle::pipeline
