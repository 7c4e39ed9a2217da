// CapturedStderr: the process's standard error (descriptor 2) goes into a
// file while it lives, for tests of what the code says there
// (util/stderr.h writes it with write(2), from any thread).
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace swthrottle::test {

class CapturedStderr {
 public:
  // `path`: the file that takes it (a TempDir's).
  explicit CapturedStderr(std::string path) : path_(std::move(path)) {
    std::fflush(stderr);
    saved_ = ::dup(STDERR_FILENO);
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    REQUIRE(saved_ >= 0);
    REQUIRE(fd >= 0);
    REQUIRE(::dup2(fd, STDERR_FILENO) == STDERR_FILENO);
    ::close(fd);
  }
  ~CapturedStderr() {
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
  }
  CapturedStderr(const CapturedStderr&) = delete;
  CapturedStderr& operator=(const CapturedStderr&) = delete;

  // What was written so far.
  std::string text() const {
    std::ifstream in(path_, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  std::string path_;
  int saved_ = -1;
};

}  // namespace swthrottle::test
