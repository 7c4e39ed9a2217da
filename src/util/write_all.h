// write_all: the whole buffer to a descriptor, through short writes and EINTR.
#pragma once

#include <cerrno>
#include <cstddef>
#include <string_view>

#include <unistd.h>

namespace swthrottle {

// Returns 0 when every byte was written, else the errno of the failed write
// (EAGAIN included: callers on a non-blocking descriptor wait and call again
// with what is left, which `written` tells).
inline int write_all(int fd, std::string_view data, std::size_t* written = nullptr) {
  std::size_t off = 0;
  int err = 0;
  while (off < data.size()) {
    const ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    err = n < 0 ? errno : EIO;
    break;
  }
  if (written) *written = off;
  return err;
}

}  // namespace swthrottle
