// GlobWatcher (input/glob_watcher.h): what a followed pattern matches, scan
// by scan, against real files in a temp directory. No sleeps: a scan sees
// what the test did before it, and wait() is woken by inotify events the
// test has already caused.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "input/glob_watcher.h"
#include "support/temp_dir.h"

using swthrottle::input::GlobWatcher;
using swthrottle::input::has_glob_chars;
using swthrottle::test::TempDir;

namespace {

using Names = std::vector<std::string>;

}  // namespace

TEST_CASE("glob: which --follow names are patterns") {
  CHECK(has_glob_chars("/var/log/app/*.log"));
  CHECK(has_glob_chars("/var/log/app-?.log"));
  CHECK(has_glob_chars("/var/log/app[12].log"));
  CHECK(has_glob_chars("/var/log/*/access.log"));
  CHECK_FALSE(has_glob_chars("/var/log/syslog"));
  CHECK_FALSE(has_glob_chars("app.log"));
  CHECK_FALSE(has_glob_chars("-"));
}

TEST_CASE("glob: the first scan adds every matching file in name order, not directories nor other names") {
  TempDir dir;
  dir.write("b.log", "");
  dir.write("a.log", "x\n");
  dir.write("c.txt", "");
  REQUIRE(::mkdir(dir.file("d.log").c_str(), 0755) == 0);
  GlobWatcher w(dir.file("*.log"));
  const GlobWatcher::Scan s = w.scan();
  CHECK(s.added == Names{dir.file("a.log"), dir.file("b.log")});
  CHECK(s.removed.empty());
  // Nothing changed: nothing to do.
  const GlobWatcher::Scan again = w.scan();
  CHECK(again.added.empty());
  CHECK(again.removed.empty());
}

TEST_CASE("glob: files created later are added, deleted ones removed, a file replaced at its name is neither") {
  TempDir dir;
  dir.write("a.log", "");
  GlobWatcher w(dir.file("*.log"));
  CHECK(w.scan().added == Names{dir.file("a.log")});

  dir.write("b.log", "new\n");
  REQUIRE(::unlink(dir.file("a.log").c_str()) == 0);
  GlobWatcher::Scan s = w.scan();
  CHECK(s.added == Names{dir.file("b.log")});
  CHECK(s.removed == Names{dir.file("a.log")});

  // Rotation at a followed name (rename away to a name the pattern does not
  // match, create anew): the Follower of b.log sees it; the pattern has no news.
  REQUIRE(::rename(dir.file("b.log").c_str(), dir.file("b.log.1").c_str()) == 0);
  dir.write("b.log", "");
  s = w.scan();
  CHECK(s.added.empty());
  CHECK(s.removed.empty());
}

TEST_CASE("glob: a file renamed to another matched name is not followed twice") {
  TempDir dir;
  dir.write("app.log", "line 1\nline 2\n");
  GlobWatcher w(dir.file("app.log*"));
  CHECK(w.scan().added == Names{dir.file("app.log")});

  // logrotate's create: app.log -> app.log.1, then a new app.log. app.log.1
  // is the file app.log's Follower reads to its end: not a new one.
  REQUIRE(::rename(dir.file("app.log").c_str(), dir.file("app.log.1").c_str()) == 0);
  dir.write("app.log", "");
  GlobWatcher::Scan s = w.scan();
  CHECK(s.added.empty());
  CHECK(s.removed.empty());

  // The next rotation: app.log.1 -> app.log.2 (still the same old file) and
  // app.log -> app.log.1: nothing new either, and app.log.1 stays unfollowed.
  REQUIRE(::rename(dir.file("app.log.1").c_str(), dir.file("app.log.2").c_str()) == 0);
  REQUIRE(::rename(dir.file("app.log").c_str(), dir.file("app.log.1").c_str()) == 0);
  dir.write("app.log", "");
  s = w.scan();
  CHECK(s.added.empty());
  CHECK(s.removed.empty());

  // Deleting the unfollowed names removes nothing that is followed.
  REQUIRE(::unlink(dir.file("app.log.2").c_str()) == 0);
  REQUIRE(::unlink(dir.file("app.log.1").c_str()) == 0);
  s = w.scan();
  CHECK(s.added.empty());
  CHECK(s.removed.empty());

  // A new file under a new name is new.
  dir.write("app.log.extra", "x\n");
  CHECK(w.scan().added == Names{dir.file("app.log.extra")});
}

TEST_CASE("glob: a wildcard in a directory component is expanded too") {
  TempDir dir;
  REQUIRE(::mkdir(dir.file("web1").c_str(), 0755) == 0);
  REQUIRE(::mkdir(dir.file("web2").c_str(), 0755) == 0);
  dir.write("web1/access.log", "");
  GlobWatcher w(dir.file("web*/access.log"));
  CHECK_FALSE(w.watching());  // no one directory to watch: the rescans find changes
  CHECK(w.scan().added == Names{dir.file("web1/access.log")});
  dir.write("web2/access.log", "");
  CHECK(w.scan().added == Names{dir.file("web2/access.log")});
}

TEST_CASE("glob: wait() is woken by a change in the directory, and returns at once after stop()") {
  TempDir dir;
  GlobWatcher w(dir.file("*.log"));
  REQUIRE(w.watching());
  CHECK(w.scan().added.empty());
  CHECK_FALSE(w.wait(0));  // nothing happened
  dir.write("a.log", "");
  CHECK(w.wait(-1));  // the creation's event is there already: no timeout needed
  CHECK(w.scan().added == Names{dir.file("a.log")});
  REQUIRE(::unlink(dir.file("a.log").c_str()) == 0);
  CHECK(w.wait(-1));
  CHECK(w.scan().removed == Names{dir.file("a.log")});

  std::thread stopper([&w] { w.stop(); });
  CHECK_FALSE(w.wait(-1));  // woken by stop(), whenever it comes
  stopper.join();
  CHECK(w.stopped());
  CHECK_FALSE(w.wait(-1));
}

TEST_CASE("glob: a directory that does not exist yet is watched once it does") {
  TempDir dir;
  GlobWatcher w(dir.file("later/*.log"));
  CHECK_FALSE(w.watching());
  CHECK(w.scan().added.empty());
  REQUIRE(::mkdir(dir.file("later").c_str(), 0755) == 0);
  CHECK_FALSE(w.wait(0));  // the watch is made here; nothing in it yet
  CHECK(w.watching());
  dir.write("later/a.log", "");
  CHECK(w.wait(-1));
  CHECK(w.scan().added == Names{dir.file("later/a.log")});
}

TEST_CASE("glob: without inotify, scans alone find every change") {
  TempDir dir;
  GlobWatcher w(dir.file("*.log"), /*use_inotify=*/false);
  CHECK_FALSE(w.watching());
  CHECK(w.scan().added.empty());
  dir.write("a.log", "");
  CHECK_FALSE(w.wait(0));
  CHECK(w.scan().added == Names{dir.file("a.log")});
}
