#include "input/byte_source.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "input/gzip_source.h"
#include "input/zstd_source.h"
#include "util/wait_ready.h"

namespace swthrottle::input {

namespace {
constexpr std::string_view kGzipMagic("\x1f\x8b", 2);
constexpr std::string_view kZstdMagic("\x28\xb5\x2f\xfd", 4);
}  // namespace

std::ptrdiff_t read_fd(int fd, char* buf, std::size_t n, std::string& error) {
  for (;;) {
    const ssize_t got = ::read(fd, buf, n);
    if (got >= 0) return got;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      // An inherited non-blocking stdin: wait for data instead of taking
      // "nothing right now" for the end of input.
      const int err = wait_ready(fd, POLLIN);
      if (err == 0) continue;
      errno = err;
    }
    error = std::generic_category().message(errno);
    return -1;
  }
}

Compression sniff_compression(std::string_view first) {
  if (first.starts_with(kZstdMagic)) return Compression::Zstd;
  if (first.starts_with(kGzipMagic)) return Compression::Gzip;
  return Compression::None;
}

Compression sniff_file(int fd) {
  char first[4];
  const ssize_t got = ::pread(fd, first, sizeof first, 0);
  return got > 0 ? sniff_compression(std::string_view(first, static_cast<std::size_t>(got))) : Compression::None;
}

bool could_be_magic(std::string_view first) {
  return (first.size() < kGzipMagic.size() && kGzipMagic.starts_with(first)) ||
         (first.size() < kZstdMagic.size() && kZstdMagic.starts_with(first));
}

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::Gzip: return "gzip";
    case Compression::Zstd: return "zstd";
    case Compression::None: break;
  }
  return "";
}

std::unique_ptr<ByteSource> make_decoder(Compression c, int fd, std::string_view prefix) {
  switch (c) {
    case Compression::Gzip: return std::make_unique<GzipSource>(fd, prefix);
    case Compression::Zstd: return std::make_unique<ZstdSource>(fd, prefix);
    case Compression::None: break;
  }
  return nullptr;
}

}  // namespace swthrottle::input
