// GzipSource: a gzip input, decompressed with zlib, like zcat: every member
// of a concatenation (`cat a.gz b.gz`) is read. A member cut short is
// "truncated gzip input"; bad data is "corrupt gzip data (zlib's reason)";
// bytes after the last member that do not begin another one are "trailing
// garbage after gzip data". Every byte decompressed before such an error
// is returned first.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "input/byte_source.h"

namespace swthrottle::input {

class GzipSource final : public ByteSource {
 public:
  // `prefix`: the input's first bytes, already read from fd. fd is not owned.
  GzipSource(int fd, std::string_view prefix);
  ~GzipSource() override;
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  std::ptrdiff_t read(char* buf, std::size_t n) override;
  const std::string& error() const override { return error_; }

 private:
  bool more_input();  // reads from fd into in_; false at its end or on error
  std::ptrdiff_t fail(std::string what);

  int fd_;
  z_stream zs_{};
  bool init_ = false;
  bool member_open_ = false;  // inside a member: its end is still to come
  bool in_eof_ = false;
  std::unique_ptr<unsigned char[]> in_;
  std::string error_;
};

}  // namespace swthrottle::input
