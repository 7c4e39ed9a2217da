// ZstdSource: a zstd input, decompressed with libzstd, like zstdcat: every
// frame of a concatenation is read (skippable frames are skipped). A frame
// cut short is "truncated zstd input"; bad data (also bytes after the last
// frame that are not a frame) is "corrupt zstd data (libzstd's reason)".
// Every byte decompressed before such an error is returned first.
#pragma once

#include <zstd.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "input/byte_source.h"

namespace swthrottle::input {

class ZstdSource final : public ByteSource {
 public:
  // `prefix`: the input's first bytes, already read from fd. fd is not owned.
  ZstdSource(int fd, std::string_view prefix);
  ~ZstdSource() override;
  ZstdSource(const ZstdSource&) = delete;
  ZstdSource& operator=(const ZstdSource&) = delete;

  std::ptrdiff_t read(char* buf, std::size_t n) override;
  const std::string& error() const override { return error_; }

 private:
  int fd_;
  ZSTD_DCtx* dctx_ = nullptr;
  std::unique_ptr<char[]> in_;
  std::size_t in_cap_;
  ZSTD_inBuffer in_buf_{nullptr, 0, 0};
  bool frame_done_ = true;  // no frame begun or a frame ended: the input may end here
  bool in_eof_ = false;
  std::string error_;
};

}  // namespace swthrottle::input
