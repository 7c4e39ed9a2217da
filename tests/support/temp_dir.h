// The tests' one temporary directory: a fresh directory made with mkdtemp
// under $TMPDIR (else /tmp), removed with everything in it when the TempDir
// goes out of scope.
#pragma once

#include <string>
#include <string_view>

namespace swthrottle::test {

class TempDir {
 public:
  // Throws std::runtime_error (a failed test, for doctest) when the directory
  // cannot be made.
  TempDir();
  // Gives the directory back its permissions first: a test may have taken
  // them away.
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path()/name
  std::string file(std::string_view name) const;
  // Writes content to path()/name (created or truncated); returns the full path.
  // Throws std::runtime_error when it cannot be written.
  std::string write(std::string_view name, std::string_view content) const;

 private:
  std::string path_;
};

}  // namespace swthrottle::test
