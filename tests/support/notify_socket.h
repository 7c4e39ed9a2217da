// NotifySocket: the service manager's end of sd_notify(3), for tests. An
// AF_UNIX datagram socket bound to a fresh path in a TempDir, or to a name in
// the abstract namespace; point NOTIFY_SOCKET at path() and read what the
// code under test sends, one datagram at a time.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "support/temp_dir.h"

namespace swthrottle::test {

class NotifySocket {
 public:
  enum class Kind { kPath, kAbstract };
  // Throws std::runtime_error (a failed test, for doctest) when the socket
  // cannot be made or bound.
  explicit NotifySocket(Kind kind = Kind::kPath);
  // Closes the socket; the TempDir takes the socket file with it.
  ~NotifySocket();
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  // What NOTIFY_SOCKET takes: an absolute path, or "@name" (abstract).
  const std::string& path() const { return path_; }
  // The next datagram's text, or nullopt when none came within `timeout`
  // (also on a receive error). Never waits longer than `timeout`.
  std::optional<std::string> receive(std::chrono::milliseconds timeout);

 private:
  TempDir dir_;
  std::string path_;
  int fd_ = -1;
};

}  // namespace swthrottle::test
