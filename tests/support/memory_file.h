// memory_file: a descriptor holding some text, read from its start (memfd:
// a real file descriptor with nothing on disk), for code that reads inputs.
#pragma once

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

namespace swthrottle::test {

inline int memory_file(const std::string& text) {
  const int fd = ::memfd_create("swthrottle_test", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  REQUIRE(::lseek(fd, 0, SEEK_SET) == 0);
  return fd;
}

}  // namespace swthrottle::test
