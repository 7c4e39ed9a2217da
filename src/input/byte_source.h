// ByteSource: the bytes of an input that are not read straight from its
// descriptor: a compressed input, decompressed (gzip_source.h, zstd_source.h).
//
// LineReader reads a plain input with read(2) itself, as it always did (no
// virtual call, no copy); only an input whose first bytes are a compressed
// format's magic number (sniff_compression) goes through a ByteSource: one
// virtual call per buffer-sized block of decompressed text, so that batches,
// -j and the prefilter work on the decompressed text unchanged.
//
// read_fd is the one read(2) loop both share.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace swthrottle::input {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Up to n (> 0) bytes into buf. > 0: that many bytes; 0: the end of the
  // input; -1: an error, for good (error() says what). May return fewer
  // bytes than asked for, as soon as some are there (a pipe may be slow).
  virtual std::ptrdiff_t read(char* buf, std::size_t n) = 0;
  // Empty, or what ended the input: "truncated gzip input", "corrupt zstd data (...)", a read error.
  virtual const std::string& error() const = 0;
};

// read(2) with EINTR retried and an inherited non-blocking descriptor
// waited for in poll(2). Returns the byte count, 0 at the end, -1 on an
// error (its strerror text in `error`).
std::ptrdiff_t read_fd(int fd, char* buf, std::size_t n, std::string& error);

enum class Compression { None, Gzip, Zstd };

// What the first bytes of an input are, by magic number (gzip: 1f 8b; zstd:
// 28 b5 2f fd), not by file name.
Compression sniff_compression(std::string_view first);
// The same for a file that can be read at an offset (pread(2): the file's
// offset does not move); None when it cannot be read.
Compression sniff_file(int fd);
// True when `first` is shorter than a magic number and could still begin
// one: the sniffer must read more before it decides.
bool could_be_magic(std::string_view first);
const char* compression_name(Compression c);  // "gzip", "zstd", ""

// A decoder of `fd`, whose first bytes, already read, are `prefix` (they
// are kept: standard input cannot be rewound). The fd is not owned.
std::unique_ptr<ByteSource> make_decoder(Compression c, int fd, std::string_view prefix);

}  // namespace swthrottle::input
