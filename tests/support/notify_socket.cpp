#include "support/notify_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace swthrottle::test {

namespace {

std::runtime_error error(const std::string& what) { return std::runtime_error(what + ": " + std::strerror(errno)); }

}  // namespace

NotifySocket::NotifySocket(Kind kind) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  socklen_t len = 0;
  if (kind == Kind::kPath) {
    path_ = dir_.file("notify");
    if (path_.size() >= sizeof(addr.sun_path)) throw std::runtime_error("socket path too long: " + path_);
    std::memcpy(addr.sun_path, path_.data(), path_.size());
    len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path_.size() + 1);
  } else {
    // Unique in this network namespace: the pid and a counter.
    static std::atomic<int> counter{0};
    const std::string name = "swthrottle-test-notify-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
    path_ = "@" + name;
    // sd_notify turns the '@' into a NUL and sends no trailing NUL: bind the
    // same length.
    std::memcpy(addr.sun_path + 1, name.data(), name.size());
    len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  }
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw error("socket");
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    const std::runtime_error e = error("bind " + path_);
    ::close(fd_);
    throw e;
  }
}

NotifySocket::~NotifySocket() {
  ::close(fd_);
  if (!path_.empty() && path_[0] == '/') ::unlink(path_.c_str());
}

std::optional<std::string> NotifySocket::receive(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return std::nullopt;
    std::vector<char> buf(64 * 1024);
    const ssize_t n = ::recv(fd_, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return std::nullopt;
    return std::string(buf.data(), static_cast<std::size_t>(n));
  }
}

}  // namespace swthrottle::test
