#include "input/gzip_source.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace swthrottle::input {

namespace {
constexpr std::size_t kInSize = 1 << 16;
}

GzipSource::GzipSource(int fd, std::string_view prefix)
    : fd_(fd), in_(new unsigned char[std::max(kInSize, prefix.size())]) {
  std::memcpy(in_.get(), prefix.data(), prefix.size());
  zs_.next_in = in_.get();
  zs_.avail_in = static_cast<uInt>(prefix.size());
  // 16 + MAX_WBITS: gzip only (the magic said so).
  if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) {
    error_ = "cannot start gzip decompression";
    return;
  }
  init_ = true;
}

GzipSource::~GzipSource() {
  if (init_) inflateEnd(&zs_);
}

std::ptrdiff_t GzipSource::fail(std::string what) {
  error_ = std::move(what);
  return -1;
}

bool GzipSource::more_input() {
  if (in_eof_) return false;
  const std::ptrdiff_t got = read_fd(fd_, reinterpret_cast<char*>(in_.get()), kInSize, error_);
  if (got <= 0) {
    in_eof_ = true;
    return false;
  }
  zs_.next_in = in_.get();
  zs_.avail_in = static_cast<uInt>(got);
  return true;
}

std::ptrdiff_t GzipSource::read(char* buf, std::size_t n) {
  if (!error_.empty()) return -1;  // also an error found after the bytes returned last
  n = std::min<std::size_t>(n, std::numeric_limits<uInt>::max());
  zs_.next_out = reinterpret_cast<unsigned char*>(buf);
  zs_.avail_out = static_cast<uInt>(n);
  const auto produced = [&] { return static_cast<std::ptrdiff_t>(n - zs_.avail_out); };
  for (;;) {
    if (zs_.avail_out == 0) return produced();
    if (!member_open_) {
      // Between members: the end, another member, or garbage.
      if (zs_.avail_in < 2 && !in_eof_) {
        if (produced() > 0) return produced();
        // Keep a lone first byte while reading on.
        unsigned char keep = zs_.avail_in == 1 ? zs_.next_in[0] : 0;
        const bool had = zs_.avail_in == 1;
        if (had) in_[0] = keep;
        const std::ptrdiff_t got =
            read_fd(fd_, reinterpret_cast<char*>(in_.get()) + (had ? 1 : 0), kInSize - 1, error_);
        if (got < 0) return -1;
        if (got == 0) in_eof_ = true;
        zs_.next_in = in_.get();
        zs_.avail_in = static_cast<uInt>(got + (had ? 1 : 0));
        continue;
      }
      if (zs_.avail_in == 0) return produced();  // the end of the last member, and of the input
      if (zs_.avail_in < 2 || zs_.next_in[0] != 0x1f || zs_.next_in[1] != 0x8b) {
        if (produced() > 0) return produced();
        return fail("trailing garbage after gzip data");
      }
      if (inflateReset(&zs_) != Z_OK) return fail("cannot restart gzip decompression");
      member_open_ = true;
    }
    if (zs_.avail_in == 0) {
      if (produced() > 0) return produced();  // hand out what is there before a read that may wait
      if (!more_input()) {
        if (!error_.empty()) return -1;
        return fail("truncated gzip input (unexpected end of file)");
      }
    }
    const int r = inflate(&zs_, Z_NO_FLUSH);
    if (r == Z_STREAM_END) {
      member_open_ = false;
      continue;
    }
    if (r == Z_OK || (r == Z_BUF_ERROR && zs_.avail_in == 0)) continue;
    if (produced() > 0) {
      // Hand out what came before the error; the error comes at the next call.
      error_ =
          r == Z_MEM_ERROR ? "out of memory" : std::string("corrupt gzip data (") + (zs_.msg ? zs_.msg : "error") + ")";
      return produced();
    }
    return fail(r == Z_MEM_ERROR ? "out of memory"
                                 : std::string("corrupt gzip data (") + (zs_.msg ? zs_.msg : "error") + ")");
  }
}

}  // namespace swthrottle::input
