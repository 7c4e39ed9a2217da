// wait_ready: block until a descriptor is ready (POLLIN or POLLOUT), through
// EINTR. For descriptors inherited non-blocking (stdin, stdout), where
// EAGAIN means "not now", never "the end" or "an error".
#pragma once

#include <poll.h>

#include <cerrno>

namespace swthrottle {

// Returns 0 once poll(2) reports the descriptor (POLLERR and POLLHUP too:
// the next read or write then says what happened), else the errno of poll.
inline int wait_ready(int fd, short events) {
  pollfd pfd{fd, events, 0};
  while (::poll(&pfd, 1, -1) < 0)
    if (errno != EINTR) return errno;
  return 0;
}

}  // namespace swthrottle
