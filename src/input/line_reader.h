// LineReader: lines from a file descriptor through one fixed buffer (DESIGN.md §4, §7).
//
// In the way of ninja's LineReader: read(2) into a buffer, find "\n" with
// memchr, hand out views into the buffer. No allocation per line; the buffer
// starts at `buffer_size` bytes and grows only while a single line does not
// fit, never beyond capacity_limit() = max(buffer_size, max_line + kSlack).
//
// A line is the bytes before "\n", without a "\r" right before the "\n". A
// lone "\r" anywhere else (also at the very end of input) stays part of the
// line. NUL bytes and invalid UTF-8 are ordinary bytes. A last line without
// "\n" is still a line.
//
// A line longer than max_line bytes is returned cut to its first max_line
// bytes with truncated = true, as soon as that is known (the reader does not
// wait for its end), and the rest of it is skipped.
//
// Content sniffing (sniff(), for the inputs the command line names, not for
// followed files): the first bytes read decide how the input is read. A gzip
// or zstd magic number (byte_source.h) makes the reader decompress the input
// through a ByteSource, the sniffed bytes included (nothing is read twice,
// so standard input works); a decompression error ends the input like a
// read error, after every line decompressed before it. Then the first block
// of text (decompressed, if need be) is looked at: one holding a NUL byte
// "looks binary" and is reported once through the notice callback; its lines
// are read and matched all the same, as grep matches in a binary file.
//
// Not thread-safe; one reader per input. The fd is not owned.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "input/byte_source.h"
#include "input/mapped_file.h"
#include "match/envelope_fields.h"

namespace swthrottle::input {

struct Line {
  std::string_view text;   // excludes "\n" and a "\r" right before it
  bool truncated = false;  // the line was longer than max_line; text holds its first max_line bytes
  // The payload of a container runtime's log (envelope_framer.h): its
  // stream and the runtime's time (ms since the epoch). None: a plain line.
  match::Stream stream = match::Stream::None;
  int64_t origin_ms = 0;
};

class LineReader {
 public:
  // Bytes beyond max_line the buffer must hold to decide whether a line of
  // exactly max_line bytes ends there: its "\r\n".
  static constexpr std::size_t kSlack = 2;

  // hold_partial: for followed files. At end of input (read() returned 0) an
  // unterminated last line is kept buffered instead of being returned: more
  // of it may be appended later. It comes out when its "\n" arrives, or from
  // take_partial() at the very end.
  LineReader(int fd, std::size_t max_line = 1 << 20, std::size_t buffer_size = 1 << 18, bool hold_partial = false);

  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line, or nullopt at end of input. The view stays valid until
  // the next call of next(), take_partial() or reset().
  //
  // Without hold_partial, end of input is final: nullopt from then on.
  // With hold_partial, each call after a nullopt reads again, so a follower
  // calls next() until nullopt whenever the file may have grown.
  // EINTR is retried; a non-blocking fd with nothing to read is waited for
  // in poll(2). Any other read error ends the input for good and is kept in
  // error(); a partial last line read before it is still returned, even with
  // hold_partial (the input cannot grow any more).
  std::optional<Line> next();

  // True when the last next() returned nullopt only because read() returned
  // 0, so that more may come later (a followed file that may grow); false
  // after a line or a read error.
  bool at_eof() const { return at_eof_; }

  // Like next(), but never waits for the descriptor: when no whole line is
  // buffered and nothing can be read right now, returns nullopt with
  // would_wait = true, keeping what is buffered. (next_lines() needs no such
  // call: past its first line it takes only what is buffered.)
  std::optional<Line> next_nowait(bool& would_wait);

  // Many lines at once, for batching callers: the next line as next() gives
  // it (waiting for it if need be), followed by every further whole line
  // already buffered, up to max_lines lines and about max_bytes bytes.
  // Nothing more is read for those. `text` is a view of the buffer from the
  // first line's start to the end of the last line's "\n" (or of the last
  // line, at the end of input), valid like next()'s view; each span is a
  // line's offset in `text` and its length as next() would give it. Returns
  // false, with no lines, where next() returns nullopt.
  struct Block {
    std::string_view text;
    bool mapped = false;  // text is in a mapped file (mapped_file.h): valid as long as the reader
    std::vector<std::pair<std::size_t, std::size_t>> spans;
    std::vector<uint8_t> truncated;
  };
  bool next_lines(Block& out, std::size_t max_lines, std::size_t max_bytes);

  // With hold_partial: the unterminated line buffered at end of input, if
  // any (cut to max_line like any line), and forgets it. nullopt when nothing
  // is buffered, or when the buffered bytes are the skipped tail of a line
  // that was already returned truncated.
  std::optional<Line> take_partial();

  // Continues on another descriptor (a followed file was rotated or
  // truncated): drops everything buffered, clears the end and error state,
  // and keeps the buffer's memory.
  void reset(int fd);

  // Plain input is read through `source` (not owned; kept across reset())
  // instead of read(2): a followed file checks each read it makes
  // (follow.h). nullptr: read(2) again. Not for sniffed input.
  void read_through(ByteSource* source) { through_ = source; }

  // Turns content sniffing on (see above); call before the first read.
  // `notice` gets what to report without a prefix, e.g. "looks binary (a NUL
  // byte in its first 4096 bytes); its lines are read and matched as text".
  // It is called from the reading thread.
  //
  // With `map`, a plain regular file of at least kMapMin bytes is mapped
  // (mapped_file.h) rather than read: lines are views into the mapping, and
  // next_lines() marks its blocks `mapped`. Past the mapped length (the
  // file's size at the first read) it goes on with read(2), so a file that
  // grows meanwhile is read to its new end, as before. A file that shrinks
  // under the mapping ends the input with an error.
  void sniff(std::function<void(const std::string&)> notice, bool map = false);
  static constexpr std::size_t kMapMin = 1 << 20;
  // Mapped bytes kept resident behind the reader (batches in flight under
  // -j read them), and how much more is given back at once: a replay's RSS
  // stays about this much above read(2)'s, whatever the file's size.
  static constexpr std::size_t kKeepMapped = 8 << 20;
  static constexpr std::size_t kReleaseStep = 4 << 20;
  // What sniffing found: Compression::None until then, and for plain text.
  Compression compression() const { return compression_; }

  // Empty, or the strerror text of the read error that ended the input, or
  // what a decompressor found wrong ("truncated gzip input (...)").
  const std::string& error() const { return error_; }

  std::size_t max_line() const { return max_line_; }
  int fd() const { return fd_; }
  // A whole line is buffered: next() would return it without reading.
  bool has_line() const { return end_ > begin_ && std::memchr(base_ + begin_, '\n', end_ - begin_) != nullptr; }
  // The buffer's current size in bytes (for tests of the memory bound).
  std::size_t capacity() const { return capacity_; }
  std::size_t capacity_limit() const { return capacity_limit_; }

 private:
  std::optional<Line> next_impl(bool* would_wait);
  // Reads more into the buffer (compacting, growing if it is full). Returns
  // the byte count; 0 at end of input or on error (error_ set then).
  std::size_t fill();
  // The line [begin_, begin_ + len), its "\r" dropped when `terminated` by "\n", cut to max_line.
  Line cut(std::size_t len, bool terminated) const;
  // The first read of a sniffed input: decides compression, looks for NUL.
  std::ptrdiff_t read_first(std::size_t room);
  // Returns the unterminated rest of the input as a line (or nothing) and forgets it.
  std::optional<Line> rest();
  // The first read of a sniffed regular file: maps it instead, if it may.
  bool try_map();
  // fill() while mapped: the whole mapping at once, then read(2) after it.
  std::size_t fill_mapped();
  // Gives back the mapped pages well behind the lines handed out.
  void release_mapped();
  // The mapped file shrank under us: what is left of the mapping reads as zeros.
  bool shrank() const { return mapping_ && map_->truncated(); }

  int fd_;
  std::size_t max_line_;
  std::size_t known_long_;  // max_line + kSlack: this many bytes without "\n" are surely a long line
  std::size_t capacity_limit_;
  bool hold_partial_;

  std::unique_ptr<char[]> buf_;
  const char* base_;                 // where begin_ and end_ count from: buf_, or the mapping
  std::unique_ptr<MappedFile> map_;  // kept to the end: views of it stay valid
  bool mapping_ = false;             // base_ is the mapping
  bool map_wanted_ = false;          // sniff(..., map = true)
  off_t map_offset_ = 0;             // the file offset of the mapping's first byte
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;    // first byte not yet returned
  std::size_t end_ = 0;      // end of the bytes read
  std::size_t scanned_ = 0;  // bytes after begin_ known to hold no "\n"

  bool skipping_ = false;  // discarding the rest of a line returned truncated
  bool done_ = false;      // input ended for good (no hold_partial, or a read error)
  bool at_eof_ = false;
  std::string error_;

  bool sniff_ = false;  // the first read is still to come and must be sniffed
  std::function<void(const std::string&)> notice_;
  Compression compression_ = Compression::None;
  std::unique_ptr<ByteSource> source_;  // a compressed input's decoder; null for plain input
  ByteSource* through_ = nullptr;       // read_through(): plain input read through it
};

}  // namespace swthrottle::input
