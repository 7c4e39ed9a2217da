// EnvelopeFramer: the lines of a container runtime's log, its envelope
// taken off (DESIGN.md §1 `format = "cri"` / "docker"), for one input.
//
// Each record (cri_record.h, docker_record.h) gives its payload, its stream
// and the runtime's time. A line the runtime split (CRI's P records closed
// by an F; json-file records whose "log" has no "\n" yet) is joined again,
// per stream (a stderr line may come between the halves of a stdout one),
// up to max_line bytes (the rest is dropped and the line marked truncated,
// as LineReader cuts a long line). A joined line has the time of its first
// record, and comes out when its last record does: lines come out in the
// order they are completed. A stream's line still open at the end of input
// (a container stopped mid-line: containerd writes it as a lone P) comes
// out then. A line that is not a record is passed on whole, as a plain line
// with no stream, and counted (take_notice()).
//
// Format "auto" looks at the input's first line that is not empty: a CRI or
// a json-file record makes the input one of them, anything else plain for
// good (then fill() and add() cost nothing more than the plain path).
//
// Two forms, as EventGrouper has: fill() for sources read in batches (what
// a batch does not complete is carried to the next fill, so -j gives the
// records of -j 1), add()/flush() for followed files, line by line.
//
// Not thread-safe; one framer per input, on the thread that reads it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/rules.h"
#include "input/envelope_record.h"
#include "input/line_reader.h"

namespace swthrottle::input {

class EnvelopeFramer {
 public:
  explicit EnvelopeFramer(std::size_t max_line = 1 << 20) : max_line_(max_line) {}

  // The input's format in the rules in force: cri or docker; auto: the
  // envelope the first line shows (decided once); anything else: plain.
  void configure(config::InputFormat format);
  // Lines pass as they are (no envelope, and none to look for).
  bool plain() const { return kind_ == Kind::None; }

  // Batch form: like LineReader::next_lines, but `out` holds whole payload
  // lines, their text in `storage` (each followed by "\n"), and origin_ms
  // and streams the envelope's time and stream (as uint8_t) of each. A
  // block of an input found plain is handed on as read (copied into
  // `storage` only with `own`, when not mapped), with `streams` empty.
  // Returns false, with no lines, at the end of input.
  bool fill(LineReader& reader, LineReader::Block& out, std::string& storage, std::vector<int64_t>& origin_ms,
            std::vector<uint8_t>& streams, std::size_t max_lines, std::size_t max_bytes, bool own);

  // Line form: `raw` as read; the line it completes, if any (a plain line
  // at once), valid until the next add() or flush().
  std::optional<Line> add(const Line& raw);
  // A line still open at the end of input, one per call; nullopt when none.
  std::optional<Line> flush();

  // Once, after the first line that was not a record: what to say about it.
  std::optional<std::string> take_notice();

 private:
  enum class Kind { Undecided, None, Cri, Docker };
  struct Emitted {
    std::size_t at = 0, len = 0;
    bool truncated = false;
    match::Stream stream = match::Stream::None;
    int64_t origin_ms = 0;
  };
  // A stream's line while its records come in.
  struct Open {
    std::string text;
    int64_t origin_ms = 0;
    bool open = false;
    bool truncated = false;
  };

  // Decides an auto input by `line` (not empty).
  void sniff(std::string_view line);
  // One raw line: appends the line it completes, if any, to `storage` (and
  // a "\n"), and says where it is.
  std::optional<Emitted> frame(std::string_view raw, bool truncated, std::string& storage);
  // A stream's open line appended to `storage`, and closed.
  Emitted close(std::size_t s, std::string& storage);
  void not_a_record(std::string_view raw);

  std::size_t max_line_;
  config::InputFormat format_ = config::InputFormat::Auto;
  Kind kind_ = Kind::Undecided;
  Open open_[2];            // stdout, stderr
  std::string scratch_;     // docker's unescaped text, when sniffing
  std::string line_out_;    // the line form's line
  LineReader::Block raw_;   // the batch form's raw block
  uint64_t raw_lines_ = 0;  // raw lines seen (line numbers for the notice)
  uint64_t not_records_ = 0;
  std::string notice_;  // the first line that was not a record, described
  bool noticed_ = false;
};

}  // namespace swthrottle::input
