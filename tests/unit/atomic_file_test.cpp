#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"
#include "util/atomic_file.h"

using swthrottle::remove_stale_temporaries;
using swthrottle::replace_file_atomically;
using swthrottle::test::read_file;
using swthrottle::test::TempDir;

namespace {

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

}  // namespace

TEST_CASE("atomic file: replaces the content whole, with the mode asked for, leaving no temporary") {
  TempDir dir;
  const std::string path = dir.file("f");
  REQUIRE(replace_file_atomically(path, "one\n", 0600) == 0);
  CHECK(read_file(path) == "one\n");
  CHECK(mode_of(path) == 0600);
  REQUIRE(replace_file_atomically(path, std::string(1 << 20, 'x'), 0640) == 0);
  CHECK(read_file(path) == std::string(1 << 20, 'x'));
  CHECK(mode_of(path) == 0640);
  CHECK(names_in(dir.path()) == std::vector<std::string>{"f"});
}

TEST_CASE("atomic file: a leftover temporary of our pid is replaced, a symlink there never written through") {
  TempDir dir;
  const std::string path = dir.file("f");
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const std::string victim = dir.file("victim");
  REQUIRE(replace_file_atomically(victim, "keep", 0600) == 0);
  REQUIRE(::symlink(victim.c_str(), tmp.c_str()) == 0);
  REQUIRE(replace_file_atomically(path, "new", 0600) == 0);
  CHECK(read_file(path) == "new");
  CHECK(read_file(victim) == "keep");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"f", "victim"});
}

TEST_CASE("atomic file: a failure leaves the old file and returns the errno") {
  TempDir dir;
  CHECK(replace_file_atomically(dir.file("no/such/dir/f"), "x", 0600) == ENOENT);
  const std::string path = dir.file("f");
  REQUIRE(replace_file_atomically(path, "old", 0600) == 0);
  REQUIRE(::mkdir(dir.file("d").c_str(), 0700) == 0);
  CHECK(replace_file_atomically(dir.file("d"), "x", 0600) == EISDIR);  // rename over a directory
  CHECK(read_file(path) == "old");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"d", "f"});
}

TEST_CASE("atomic file: stale temporaries are removed, other names stay") {
  TempDir dir;
  const std::string path = dir.file("state.json");
  for (const char* name :
       {"state.json.tmp.123", "state.json.tmp.9", "state.json.tmp.x1", "state.json.tmp.", "other.tmp.5", "state.json"})
    REQUIRE(replace_file_atomically(dir.file(name), "x", 0600) == 0);
  REQUIRE(::mkdir(dir.file("state.json.tmp.77").c_str(), 0700) == 0);
  remove_stale_temporaries(path);
  CHECK(names_in(dir.path()) == std::vector<std::string>{"other.tmp.5", "state.json", "state.json.tmp.",
                                                         "state.json.tmp.77", "state.json.tmp.x1"});
}
