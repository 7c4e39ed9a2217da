#include "input/line_reader.h"

#include "input/newline_scan.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <system_error>

namespace swthrottle::input {

LineReader::LineReader(int fd, std::size_t max_line, std::size_t buffer_size, bool hold_partial)
    : fd_(fd),
      max_line_(max_line),
      known_long_(max_line > std::numeric_limits<std::size_t>::max() - kSlack ? max_line : max_line + kSlack),
      capacity_limit_(std::max(std::max<std::size_t>(buffer_size, 1), known_long_)),
      hold_partial_(hold_partial),
      buf_(new char[std::max<std::size_t>(buffer_size, 1)]),
      base_(buf_.get()),
      capacity_(std::max<std::size_t>(buffer_size, 1)) {}

namespace {

std::string binary_notice(std::size_t first, Compression c) {
  return "looks binary (a NUL byte in its first " + std::to_string(first) +
         (c != Compression::None ? std::string(" bytes of ") + compression_name(c) + "-decompressed text"
                                 : std::string(" bytes")) +
         "); its lines are read and matched as text";
}

}  // namespace

Line LineReader::cut(std::size_t len, bool terminated) const {
  const char* p = base_ + begin_;
  if (terminated && len > 0 && p[len - 1] == '\r') --len;
  if (len > max_line_) return Line{std::string_view(p, max_line_), true};
  return Line{std::string_view(p, len), false};
}

std::optional<Line> LineReader::next() { return next_impl(nullptr); }

std::optional<Line> LineReader::next_nowait(bool& would_wait) {
  would_wait = false;
  return next_impl(&would_wait);
}

bool LineReader::next_lines(Block& out, std::size_t max_lines, std::size_t max_bytes) {
  out.text = {};
  out.spans.clear();
  out.truncated.clear();
  const auto first = next();
  if (!first) return false;
  const char* base = first->text.data();
  out.spans.emplace_back(0, first->text.size());
  out.truncated.push_back(first->truncated ? 1 : 0);
  // The first line's bytes end with its "\n", where the buffered lines after
  // it begin (begin_); a cut line ends where its text does.
  const char* const buf = base_;
  const auto text_end = static_cast<std::size_t>(first->text.data() + first->text.size() - buf);
  std::size_t end = first->truncated ? text_end : std::max(text_end, begin_);
  // More whole lines, straight from the buffer: next()'s fast path in a loop.
  if (!first->truncated && !skipping_) {
    NewlineScan newlines(buf + begin_, buf + end_);
    while (out.spans.size() < max_lines && end - static_cast<std::size_t>(base - buf) < max_bytes) {
      const std::size_t pending = end_ - begin_;
      if (pending == 0) break;
      const char* nl = newlines.find(buf + begin_);
      if (nl == nullptr || shrank()) break;  // an unterminated line, or zeros: next() deals with it
      const auto len = static_cast<std::size_t>(nl - (buf + begin_));
      const Line line = cut(len, true);
      out.spans.emplace_back(static_cast<std::size_t>(line.text.data() - base), line.text.size());
      out.truncated.push_back(line.truncated ? 1 : 0);
      begin_ += len + 1;
      scanned_ = 0;
      end = begin_;
    }
  }
  out.text = std::string_view(base, end - static_cast<std::size_t>(base - buf));
  out.mapped = mapping_;
  if (mapping_) release_mapped();
  return true;
}

std::optional<Line> LineReader::next_impl(bool* would_wait) {
  at_eof_ = false;
  for (;;) {
    if (shrank()) {
      // What was mapped past the file's new end reads as zeros: end here.
      struct stat st {};
      const long long now = ::fstat(fd_, &st) == 0 ? static_cast<long long>(st.st_size) : -1;
      error_ = "the file shrank while it was read" +
               (now >= 0 ? " (to " + std::to_string(now) + " bytes)" : std::string()) +
               "; the lines past its new end are not read";
      mapping_ = false;
      base_ = buf_.get();
      begin_ = end_ = scanned_ = 0;
      skipping_ = false;
      done_ = true;
    }
    if (skipping_) {
      const void* nl = std::memchr(base_ + begin_, '\n', end_ - begin_);
      if (nl == nullptr) {
        begin_ = end_;  // drop it all: fill() then reads into the whole buffer
      } else {
        begin_ = static_cast<std::size_t>(static_cast<const char*>(nl) - base_) + 1;
        skipping_ = false;
        scanned_ = 0;
      }
    }
    if (!skipping_) {
      const std::size_t pending = end_ - begin_;
      // Fast path: a whole line is already buffered.
      if (scanned_ < pending) {
        const char* from = base_ + begin_ + scanned_;
        const void* nl = std::memchr(from, '\n', pending - scanned_);
        if (shrank()) continue;
        if (nl != nullptr) {
          const auto len = static_cast<std::size_t>(static_cast<const char*>(nl) - (base_ + begin_));
          const Line line = cut(len, true);
          begin_ += len + 1;
          scanned_ = 0;
          return line;
        }
        scanned_ = pending;
      }
      // No "\n" in max_line + 2 bytes: whatever follows, the line without its
      // "\r\n" is longer than max_line. Return it now rather than buffer it.
      if (pending >= known_long_) {
        const Line line{std::string_view(base_ + begin_, max_line_), true};
        begin_ = end_;
        scanned_ = 0;
        skipping_ = true;
        return line;
      }
    }

    if (done_) {
      at_eof_ = error_.empty();
      return rest();
    }
    if (would_wait != nullptr) {
      pollfd p{fd_, POLLIN, 0};
      int ready;
      do {
        ready = ::poll(&p, 1, 0);
      } while (ready < 0 && errno == EINTR);
      if (ready == 0) {  // a read now would wait (an error or the end is not waiting: fill() sees them)
        *would_wait = true;
        return std::nullopt;
      }
    }
    if (fill() > 0) continue;
    if (!error_.empty() || !hold_partial_) {
      done_ = true;
      continue;  // hand out the unterminated last line, then nullopt
    }
    at_eof_ = true;  // hold_partial: keep a partial line; more may come
    return std::nullopt;
  }
}

std::optional<Line> LineReader::rest() {
  // While skipping, next() drops every byte it reads, so nothing of the
  // skipped tail of a long line is ever pending here.
  const std::size_t pending = end_ - begin_;
  skipping_ = false;
  scanned_ = 0;
  if (pending == 0) {
    begin_ = end_ = 0;
    return std::nullopt;
  }
  const Line line = cut(pending, false);
  begin_ = end_;  // the bytes stay in place until the next call: the view is valid
  at_eof_ = false;
  return line;
}

std::optional<Line> LineReader::take_partial() {
  at_eof_ = false;
  return rest();
}

void LineReader::sniff(std::function<void(const std::string&)> notice, bool map) {
  sniff_ = true;
  map_wanted_ = map;
  notice_ = std::move(notice);
}

bool LineReader::try_map() {
  struct stat st {};
  if (hold_partial_ || through_ != nullptr || ::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const off_t at = ::lseek(fd_, 0, SEEK_CUR);
  if (at < 0 || st.st_size - at < static_cast<off_t>(kMapMin)) return false;
  char magic[4];
  const ssize_t got = ::pread(fd_, magic, sizeof magic, at);
  if (got < 0 || sniff_compression(std::string_view(magic, static_cast<std::size_t>(got))) != Compression::None)
    return false;  // read(2) then says what is wrong, or decompresses
  std::string why;
  auto m = MappedFile::map(fd_, at, static_cast<std::size_t>(st.st_size - at), why);
  if (!m) return false;  // read(2) does it all the same
  sniff_ = false;
  const std::size_t first = std::min(capacity_, m->size());
  if (notice_ && std::memchr(m->data(), '\0', first) != nullptr) notice_(binary_notice(first, Compression::None));
  map_ = std::move(m);
  map_offset_ = at;
  mapping_ = true;
  base_ = map_->data();
  begin_ = end_ = scanned_ = 0;
  return true;
}

void LineReader::release_mapped() {
  if (begin_ < map_->released() + kKeepMapped + kReleaseStep) return;
  map_->release_before(begin_ - kKeepMapped);
}

std::size_t LineReader::fill_mapped() {
  if (end_ < map_->size()) {
    const std::size_t n = map_->size() - end_;
    end_ = map_->size();
    return n;
  }
  // All of the mapping is buffered: go on with read(2) after it, with the
  // unterminated line at its end (shorter than known_long_) in the buffer.
  const std::size_t pending = end_ - begin_;
  if (pending > capacity_) {
    buf_.reset(new char[pending]);
    capacity_ = pending;
  }
  if (pending > 0) std::memcpy(buf_.get(), base_ + begin_, pending);
  mapping_ = false;
  base_ = buf_.get();
  begin_ = 0;
  end_ = pending;
  if (::lseek(fd_, map_offset_ + static_cast<off_t>(map_->size()), SEEK_SET) < 0) {
    error_ = std::strerror(errno);
    return 0;
  }
  return fill();
}

std::ptrdiff_t LineReader::read_first(std::size_t room) {
  sniff_ = false;
  // The first read happens into an empty buffer (end_ == 0).
  char* const at = buf_.get() + end_;
  std::size_t got = 0;
  for (;;) {
    const std::ptrdiff_t n = read_fd(fd_, at + got, room - got, error_);
    if (n < 0) {
      if (got > 0) break;  // the error comes again at the next read
      return -1;
    }
    got += static_cast<std::size_t>(n);
    // A pipe may give a magic number in pieces: read on only while what came could still begin one.
    if (n == 0 || got == room || !could_be_magic(std::string_view(at, got))) break;
  }
  compression_ = sniff_compression(std::string_view(at, got));
  std::ptrdiff_t n = static_cast<std::ptrdiff_t>(got);
  if (compression_ != Compression::None) {
    source_ = make_decoder(compression_, fd_, std::string_view(at, got));
    n = source_->read(at, room);
    if (n < 0) return n;
  }
  if (n > 0 && notice_) {
    const auto first = static_cast<std::size_t>(n);
    if (std::memchr(at, '\0', first) != nullptr) notice_(binary_notice(first, compression_));
  }
  return n;
}

void LineReader::reset(int fd) {
  fd_ = fd;
  map_.reset();
  mapping_ = false;
  base_ = buf_.get();
  source_.reset();
  compression_ = Compression::None;
  begin_ = end_ = scanned_ = 0;
  skipping_ = done_ = at_eof_ = false;
  error_.clear();
}

std::size_t LineReader::fill() {
  if (mapping_) return fill_mapped();
  if (sniff_ && map_wanted_ && try_map()) return fill_mapped();
  // Compact: only an unterminated line (shorter than known_long_) is left.
  if (begin_ > 0) {
    const std::size_t pending = end_ - begin_;
    if (pending > 0) std::memmove(buf_.get(), buf_.get() + begin_, pending);
    begin_ = 0;
    end_ = pending;
  }
  // A full buffer holds less than known_long_ <= capacity_limit_ bytes (next()
  // returns a line that long before reading more), so it can still grow.
  if (end_ == capacity_) {
    const std::size_t grown = std::min(capacity_limit_, std::max(capacity_ * 2, capacity_ + 1));
    std::unique_ptr<char[]> bigger(new char[grown]);
    std::memcpy(bigger.get(), buf_.get(), end_);
    buf_ = std::move(bigger);
    base_ = buf_.get();
    capacity_ = grown;
  }
  const std::size_t room = capacity_ - end_;
  std::ptrdiff_t n;
  if (sniff_) n = read_first(room);
  else if (source_) n = source_->read(buf_.get() + end_, room);
  else if (through_) n = through_->read(buf_.get() + end_, room);
  else n = read_fd(fd_, buf_.get() + end_, room, error_);
  if (n > 0) {
    end_ += static_cast<std::size_t>(n);
    return static_cast<std::size_t>(n);
  }
  if (n < 0 && source_ && error_.empty()) error_ = source_->error();
  if (n < 0 && through_ && !source_ && error_.empty()) error_ = through_->error();
  if (n < 0 && error_.empty()) error_ = "read error";
  return 0;
}

}  // namespace swthrottle::input
