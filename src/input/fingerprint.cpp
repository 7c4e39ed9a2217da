#include "input/fingerprint.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace swthrottle::input {

namespace {

// The file's first bytes, up to kBytes; -1 on an error.
ssize_t read_head(int fd, char* buf) {
  ssize_t got = 0;
  while (got < static_cast<ssize_t>(Fingerprint::kBytes)) {
    const ssize_t n = ::pread(fd, buf + got, Fingerprint::kBytes - static_cast<std::size_t>(got), got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    got += n;
  }
  return got;
}

}  // namespace

void Fingerprint::take(int fd) {
  const ssize_t got = read_head(fd, bytes_.data());
  size_ = got > 0 ? static_cast<std::size_t>(got) : 0;
}

bool Fingerprint::same(int fd) {
  std::array<char, kBytes> now;
  const ssize_t got = read_head(fd, now.data());
  if (got < 0) return true;
  const auto n = static_cast<std::size_t>(got);
  if (n < size_ || std::memcmp(now.data(), bytes_.data(), size_) != 0) return false;
  // Only the bytes beyond size_ are new: they extend the fingerprint.
  std::memcpy(bytes_.data() + size_, now.data() + size_, n - size_);
  size_ = n;
  return true;
}

}  // namespace swthrottle::input
