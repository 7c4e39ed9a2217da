// NameWatcher (input/name_watcher.h) and its RenameTrail: a file created at
// the followed name and renamed away before the watcher's thread could open
// it is opened where the directory's events say it went (issue 32, item 9).
// The watcher's thread is held back deterministically: it takes its mutex
// before it opens anything, and the test holds that mutex while it rotates.
#include "input/name_watcher.h"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "input/rename_trail.h"
#include "support/temp_dir.h"

using swthrottle::input::NameWatcher;
using swthrottle::input::RenameTrail;
using swthrottle::test::TempDir;

namespace {

constexpr auto kWait = std::chrono::seconds(10);  // a bound for what is surely coming

// Where the trail's waiting generations are: "id@name", oldest first.
std::vector<std::string> where(const RenameTrail& t) {
  std::vector<std::string> out;
  for (const auto& g : t.waiting()) out.push_back(std::to_string(g.id) + "@" + g.at);
  return out;
}

// A new file at `path` with `text`; its inode.
ino_t create(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  struct stat st;
  REQUIRE(::fstat(fd, &st) == 0);
  ::close(fd);
  return st.st_ino;
}

// The inodes the watcher queued, once there are `n` (or what there is at the bound).
std::vector<ino_t> queued(NameWatcher& w, std::size_t n) {
  std::vector<ino_t> got;
  std::array<NameWatcher::Opened, NameWatcher::kMax> out;
  const auto until = std::chrono::steady_clock::now() + kWait;
  while (got.size() < n && std::chrono::steady_clock::now() < until) {
    {
      std::lock_guard lock(w.mutex());
      const std::size_t k = w.take(out);
      for (std::size_t i = 0; i < k; ++i) {
        got.push_back(out[i].ino);
        ::close(out[i].fd);
      }
    }
    std::this_thread::yield();
  }
  return got;
}

}  // namespace

TEST_CASE("rename trail: a generation is followed through renames until deleted or overwritten") {
  RenameTrail t("app.log");
  t.created("app.log");
  CHECK(where(t) == std::vector<std::string>{"1@app.log"});
  t.moved_from("app.log", 7);
  CHECK(where(t) == std::vector<std::string>{"1@"});  // half moved
  t.moved_to("app.log.1", 7);
  t.created("app.log");
  CHECK(where(t) == std::vector<std::string>{"1@app.log.1", "2@app.log"});
  // logrotate's order: .1 -> .2 first, then app.log -> .1.
  t.moved_from("app.log.1", 8);
  t.moved_to("app.log.2", 8);
  t.moved_from("app.log", 9);
  t.moved_to("app.log.1", 9);
  CHECK(where(t) == std::vector<std::string>{"1@app.log.2", "2@app.log.1"});
  // A move over a generation ends it; so does a deletion.
  t.moved_from("app.log.1", 10);
  t.moved_to("app.log.2", 10);
  CHECK(where(t) == std::vector<std::string>{"2@app.log.2"});
  t.deleted("app.log.2");
  CHECK(where(t).empty());
  // Moved out of the directory: the other half never comes.
  t.created("app.log");
  t.moved_from("app.log", 11);
  t.created("other");
  CHECK(where(t).empty());
  // A file moved to the name from elsewhere is a generation; taken ones are followed no more.
  t.moved_from("incoming", 12);
  t.moved_to("app.log", 12);
  CHECK(where(t) == std::vector<std::string>{"4@app.log"});
  t.taken(4);
  CHECK(where(t).empty());
}

TEST_CASE("rename trail: touched names since a round began, and an overflow forgets everything") {
  RenameTrail t("app.log");
  t.created("app.log");
  t.begin_round();
  CHECK_FALSE(t.touched("app.log"));
  t.moved_from("app.log", 3);
  t.moved_to("app.log.1", 3);
  CHECK(t.touched("app.log"));
  CHECK(t.touched("app.log.1"));
  CHECK_FALSE(t.touched("app.log.2"));
  t.reset();
  CHECK(where(t).empty());
  CHECK_FALSE(t.touched("app.log"));
}

TEST_CASE("name watcher: a file renamed away before the watcher ran is opened where it went, in order") {
  TempDir dir;
  const std::string path = dir.file("app.log");
  NameWatcher w(dir.path(), "app.log", path);
  REQUIRE(w.active());
  ino_t first = 0, second = 0;
  {
    // The watcher may read the first events, but opens nothing until the lock is free.
    std::lock_guard hold(w.mutex());
    first = create(path, "first 1\n");
    REQUIRE(::rename(path.c_str(), dir.file("app.log.1").c_str()) == 0);
    second = create(path, "second 1\n");
  }
  // Before: the path was opened once, and only the second file was queued.
  CHECK(queued(w, 2) == std::vector<ino_t>{first, second});
}

TEST_CASE("name watcher: a file overwritten by the next rotation before the watcher ran is gone, the rest come once") {
  TempDir dir;
  const std::string path = dir.file("app.log");
  NameWatcher w(dir.path(), "app.log", path);
  REQUIRE(w.active());
  ino_t second = 0, third = 0;
  {
    std::lock_guard hold(w.mutex());
    create(path, "first\n");
    REQUIRE(::rename(path.c_str(), dir.file("app.log.1").c_str()) == 0);
    second = create(path, "second\n");
    REQUIRE(::rename(path.c_str(), dir.file("app.log.1").c_str()) == 0);  // over the first
    third = create(path, "third\n");
  }
  CHECK(queued(w, 2) == std::vector<ino_t>{second, third});
  // Each is given once, however many events name it later: the next one
  // queued is the next file.
  REQUIRE(::rename(dir.file("app.log.1").c_str(), dir.file("app.log.2").c_str()) == 0);
  REQUIRE(::rename(path.c_str(), dir.file("app.log.1").c_str()) == 0);
  const ino_t fourth = create(path, "fourth\n");
  CHECK(queued(w, 1) == std::vector<ino_t>{fourth});
}

TEST_CASE("name watcher: a file the follower opened at the path itself is never queued") {
  TempDir dir;
  const std::string path = dir.file("app.log");
  NameWatcher w(dir.path(), "app.log", path);
  REQUIRE(w.active());
  ino_t next = 0;
  {
    std::lock_guard hold(w.mutex());
    create(path, "mine\n");
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    struct stat st;
    REQUIRE(::fstat(fd, &st) == 0);
    w.opened_at_path(st.st_dev, st.st_ino);  // as the Follower says when it opens the path itself
    ::close(fd);
    REQUIRE(::rename(path.c_str(), dir.file("app.log.1").c_str()) == 0);
    next = create(path, "next\n");
  }
  // The Follower's file, found at app.log.1 by the trail, is not given again.
  CHECK(queued(w, 1) == std::vector<ino_t>{next});
}

// Files are given in the order they were at the path: a generation older
// than the one the Follower found there itself would be read after it, and
// the Follower, going back to the path, would read the newer one twice.
TEST_CASE("name watcher: a generation older than the file the follower opened itself is given up") {
  TempDir dir;
  const std::string path = dir.file("app.log");
  NameWatcher w(dir.path(), "app.log", path);
  REQUIRE(w.active());
  {
    std::lock_guard hold(w.mutex());
    create(path, "older\n");
    REQUIRE(::rename(path.c_str(), dir.file("app.log.1").c_str()) == 0);  // renamed away unseen
    create(path, "newer\n");
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    struct stat st;
    REQUIRE(::fstat(fd, &st) == 0);
    w.opened_at_path(st.st_dev, st.st_ino);  // the Follower found the newer one first
    ::close(fd);
  }
  REQUIRE(::rename(path.c_str(), dir.file("app.log.2").c_str()) == 0);
  const ino_t next = create(path, "next\n");
  // Not the older one, still at app.log.1: the next one at the path.
  CHECK(queued(w, 1) == std::vector<ino_t>{next});
}
