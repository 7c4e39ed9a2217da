#include "input/zstd_source.h"

#include <algorithm>
#include <cstring>

namespace swthrottle::input {

ZstdSource::ZstdSource(int fd, std::string_view prefix)
    : fd_(fd),
      in_(new char[std::max(ZSTD_DStreamInSize(), prefix.size())]),
      in_cap_(std::max(ZSTD_DStreamInSize(), prefix.size())) {
  std::memcpy(in_.get(), prefix.data(), prefix.size());
  in_buf_ = ZSTD_inBuffer{in_.get(), prefix.size(), 0};
  dctx_ = ZSTD_createDCtx();
  if (dctx_ == nullptr) error_ = "cannot start zstd decompression";
}

ZstdSource::~ZstdSource() { ZSTD_freeDCtx(dctx_); }

std::ptrdiff_t ZstdSource::read(char* buf, std::size_t n) {
  if (!error_.empty()) return -1;  // also an error found after the bytes returned last
  ZSTD_outBuffer out{buf, n, 0};
  const auto produced = [&] { return static_cast<std::ptrdiff_t>(out.pos); };
  for (;;) {
    if (out.pos == out.size) return produced();
    const bool had_input = in_buf_.pos < in_buf_.size;
    if (had_input || !frame_done_) {
      // Also with no input left: a frame's decoder may hold output still.
      const std::size_t before = out.pos;
      const std::size_t r = ZSTD_decompressStream(dctx_, &out, &in_buf_);
      if (ZSTD_isError(r)) {
        error_ = std::string("corrupt zstd data (") + ZSTD_getErrorName(r) + ")";
        return produced() > 0 ? produced() : -1;
      }
      frame_done_ = r == 0;
      if (had_input || out.pos > before) continue;
    }
    // Nothing buffered can make progress: more input is needed.
    if (produced() > 0) return produced();  // hand out what is there before a read that may wait
    if (in_eof_) {
      if (frame_done_) return 0;
      error_ = "truncated zstd input (unexpected end of file)";
      return -1;
    }
    const std::ptrdiff_t got = read_fd(fd_, in_.get(), in_cap_, error_);
    if (got < 0) return -1;
    if (got == 0) in_eof_ = true;
    in_buf_ = ZSTD_inBuffer{in_.get(), static_cast<std::size_t>(got), 0};
  }
}

}  // namespace swthrottle::input
