// Follower against real files: rename(2), truncate(2), unlink(2) in a temp
// directory, every scenario with inotify and with polling only.
//
// No sleeps: a test changes the files, then asks for lines with a bounded
// next(timeout) that returns as soon as they are there. Whatever the test did
// before calling next() is seen in that call (each call stats the file), so
// "nothing more" is checked with next(0).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <random>
#include <semaphore>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "input/follow.h"
#include "support/process.h"
#include "support/seed.h"
#include "support/temp_dir.h"

// doctest prints the vectors compared.
template <>
struct doctest::StringMaker<std::vector<std::string>> {
  static doctest::String convert(const std::vector<std::string>& v) {
    std::string s = "{";
    for (const auto& x : v) s += (s.size() > 1 ? ", \"" : "\"") + x + "\"";
    return (s + "}").c_str();
  }
};

using swthrottle::input::Follower;
using swthrottle::input::FollowOptions;
using swthrottle::test::TempDir;

namespace {

using Lines = std::vector<std::string>;

constexpr int kWaitMs = 5000;  // a bound for a line that is surely coming; normally returned at once

// A program writing a log: opens once (appending, creating), keeps its descriptor.
class Writer {
 public:
  explicit Writer(const std::string& path)
      : fd_(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) {
    REQUIRE(fd_ >= 0);
  }
  ~Writer() { close(); }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void write(std::string_view data) const {
    while (!data.empty()) {
      const ssize_t n = ::write(fd_, data.data(), data.size());
      REQUIRE(n > 0);
      data.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

void write_file(const std::string& path, std::string_view data) { Writer(path).write(data); }

FollowOptions options(bool inotify, bool from_start = false) {
  FollowOptions o;
  o.use_inotify = inotify;
  o.from_start = from_start;
  // With inotify, a long check interval: a wake-up within kWaitMs must come from an event.
  o.poll_interval_ms = inotify ? 60'000 : 20;
  return o;
}

// A Follower with its notices collected.
struct Tail {
  Tail(std::string path, FollowOptions o) : f(std::move(path), o) { collect(); }

  // The next n lines, each waited for at most kWaitMs; "<none>" for one that did not come.
  Lines lines(std::size_t n) {
    Lines out;
    while (out.size() < n) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
      std::optional<std::string> got;
      // next() also returns early to hand out notices.
      while (!got && std::chrono::steady_clock::now() < until) {
        if (auto l = f.next(kWaitMs)) got = std::string(l->text);
        collect();
      }
      out.push_back(got.value_or("<none>"));
    }
    return out;
  }

  // The lines there now, without waiting.
  Lines now() {
    Lines out;
    for (int empty = 0; empty < 2;) {  // twice: the first nullopt may be the early one for notices
      if (auto l = f.next(0)) {
        out.emplace_back(l->text);
        empty = 0;
      } else {
        ++empty;
      }
      collect();
    }
    return out;
  }

  void collect() {
    for (auto& n : f.take_notices()) notices.push_back(std::move(n));
  }
  Lines take_notices() { return std::exchange(notices, {}); }

  Follower f;
  Lines notices;
};

bool modes[] = {true, false};  // use_inotify

}  // namespace

TEST_CASE("follow: starts after the last complete line, appended lines come out") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    struct Case {
      std::string_view at_start;
      std::string_view appended;
      Lines want;
    } cases[] = {
        {"old1\nold2\n", "new1\nnew2\n", {"new1", "new2"}},
        {"", "a\n", {"a"}},
        {"old\npar", "tial\nnext\n", {"partial", "next"}},  // the unterminated last line comes whole
        {"abc", "d\n", {"abcd"}},                           // no "\n" at all: all of it is that line
        {"old\n\n", "\nx\n", {"", "x"}},
    };
    for (const Case& c : cases) {
      CAPTURE(c.at_start);
      TempDir dir;
      const std::string path = dir.file("app.log");
      Writer w(path);
      w.write(c.at_start);
      Tail t(path, options(inotify));
      CHECK(t.now() == Lines{});
      w.write(c.appended);
      CHECK(t.lines(c.want.size()) == c.want);
      CHECK(t.now() == Lines{});
      CHECK(t.notices == Lines{});
    }
  }
}

TEST_CASE("follow: --from-start reads what is there, then what is appended") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    Writer w(path);
    w.write("a\nb\r\nc");
    Tail t(path, options(inotify, /*from_start=*/true));
    CHECK(t.lines(2) == Lines{"a", "b"});
    CHECK(t.now() == Lines{});
    w.write("\nd\n");
    CHECK(t.lines(2) == Lines{"c", "d"});
    CHECK(t.now() == Lines{});
  }
}

TEST_CASE("follow: a partial line is held until its newline, however it is written") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    Writer w(path);
    Tail t(path, options(inotify));
    w.write("ab");
    CHECK(t.now() == Lines{});
    w.write("cd");
    CHECK(t.now() == Lines{});
    w.write("ef\ngh");
    CHECK(t.lines(1) == Lines{"abcdef"});
    CHECK(t.now() == Lines{});
    w.write("\r");
    CHECK(t.now() == Lines{});
    w.write("\n");
    CHECK(t.lines(1) == Lines{"gh"});  // the "\r" before "\n" goes, even when written apart
    CHECK(t.now() == Lines{});
  }
}

TEST_CASE("follow: long lines are cut to max_line") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    Writer w(path);
    FollowOptions o = options(inotify);
    o.max_line = 4;
    Follower f(path, o);
    w.write("abcdefgh\nxy\n");
    auto l = f.next(kWaitMs);
    REQUIRE(l);
    CHECK(l->text == "abcd");
    CHECK(l->truncated);
    l = f.next(kWaitMs);
    REQUIRE(l);
    CHECK(l->text == "xy");
    CHECK_FALSE(l->truncated);
  }
}

TEST_CASE("follow: rotation by rename + create reads the old file to its end first") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    Writer old(path);
    old.write("a\n");
    Tail t(path, options(inotify, true));
    CHECK(t.lines(1) == Lines{"a"});

    old.write("b\n");
    REQUIRE(::rename(path.c_str(), (dir.file("app.log.1")).c_str()) == 0);
    old.write("c\nd");  // the writer has not reopened yet
    Writer fresh(path);
    fresh.write("n1\nn2\n");
    old.write("e\nf");  // still before the follower looked: read too
    // The old file's unterminated last line comes out as a line: no "\n" can follow it.
    CHECK(t.lines(6) == Lines{"b", "c", "de", "f", "n1", "n2"});
    CHECK(t.now() == Lines{});
    fresh.write("n3\n");
    CHECK(t.lines(1) == Lines{"n3"});
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{"'" + path + "' has been replaced; following new file"});
    CHECK(t.f.counts().rotations == 1);
    CHECK(t.f.counts().truncations == 0);
  }
}

TEST_CASE("follow: logrotate create: the old file is read until the writer moves to the new one") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    std::optional<Writer> w;
    w.emplace(path);
    Tail t(path, options(inotify));
    w->write("a\n");
    CHECK(t.lines(1) == Lines{"a"});
    REQUIRE(::rename(path.c_str(), (dir.file("app.log.1")).c_str()) == 0);
    Writer(path).close();  // logrotate creates the new file, empty; the writer has not been told yet
    CHECK(t.now() == Lines{});
    w->write("b\n");
    CHECK(t.lines(1) == Lines{"b"});
    w->write("c");
    CHECK(t.now() == Lines{});
    w.emplace(path);  // told (SIGHUP): it reopens the name
    w->write("n1\n");
    CHECK(t.lines(2) == Lines{"c", "n1"});
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{"'" + path + "' has been replaced; following new file"});
    CHECK(t.f.counts().rotations == 1);
  }
}

TEST_CASE("follow: an empty new file is switched to once it has content, even off the path") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    std::optional<Writer> w;
    w.emplace(path);
    Tail t(path, options(inotify));
    w->write("a\n");
    CHECK(t.lines(1) == Lines{"a"});
    REQUIRE(::rename(path.c_str(), (dir.file("app.log.1")).c_str()) == 0);
    w.emplace(path);  // the writer moved to a new file, and wrote nothing yet
    w->write("");
    CHECK(t.now() == Lines{});
    REQUIRE(::rename(path.c_str(), (dir.file("app.log.2")).c_str()) == 0);  // rotated again, still empty
    w->write("b\n");
    CHECK(t.lines(1) == Lines{"b"});
    CHECK(t.now() == Lines{});
    // The file followed now is not at the path.
    CHECK(t.take_notices() == Lines{"'" + path + "' has been replaced; following new file",
                                    "'" + path + "' has become inaccessible: No such file or directory"});
    // An empty file replaced by another before it got content is dropped.
    Writer(path).close();
    CHECK(t.now() == Lines{});
    REQUIRE(::unlink(path.c_str()) == 0);
    write_file(path, "c\n");
    CHECK(t.lines(1) == Lines{"c"});
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{"'" + path + "' has appeared; following new file"});
    CHECK(t.f.counts().rotations == 2);
  }
}

TEST_CASE("follow: while the name is gone after a rename, the old file is still read") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    Writer old(path);
    Tail t(path, options(inotify));
    old.write("a\n");
    CHECK(t.lines(1) == Lines{"a"});
    REQUIRE(::rename(path.c_str(), (dir.file("app.log.1")).c_str()) == 0);
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{"'" + path + "' has become inaccessible: No such file or directory"});
    old.write("b\n");
    CHECK(t.lines(1) == Lines{"b"});
    old.write("c");
    CHECK(t.now() == Lines{});
    Writer fresh(path);
    fresh.write("n1\n");
    // A file that appears later is read from its start, even without --from-start.
    CHECK(t.lines(2) == Lines{"c", "n1"});
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{"'" + path + "' has appeared; following new file"});
    CHECK(t.f.counts().rotations == 1);
  }
}

TEST_CASE("follow: a file renamed back is not a rotation") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    const std::string moved = dir.file("moved");
    Writer w(path);
    Tail t(path, options(inotify));
    REQUIRE(::rename(path.c_str(), moved.c_str()) == 0);
    CHECK(t.now() == Lines{});
    REQUIRE(::rename(moved.c_str(), path.c_str()) == 0);
    w.write("a\n");
    CHECK(t.lines(1) == Lines{"a"});
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{"'" + path + "' has become inaccessible: No such file or directory"});
    CHECK(t.f.counts().rotations == 0);
  }
}

TEST_CASE("follow: a file renamed over the name is followed from its start") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    const std::string next = dir.file("app.log.new");
    Writer old(path);
    Tail t(path, options(inotify));
    old.write("a\nb");
    write_file(next, "x\ny\n");
    REQUIRE(::rename(next.c_str(), path.c_str()) == 0);
    CHECK(t.lines(4) == Lines{"a", "b", "x", "y"});
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{"'" + path + "' has been replaced; following new file"});
  }
}

TEST_CASE("follow: truncation (copytruncate) restarts at offset 0") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    struct Case {
      std::string_view before;  // written and read before the truncation
      Lines before_lines;
      std::string_view after;  // written right after the truncation, before the follower looks
      Lines want;              // lines then
    } cases[] = {
        {"aaaa\nbbbb\n", {"aaaa", "bbbb"}, "x\n", {"x"}},
        {"aaaa\nbbbb\n", {"aaaa", "bbbb"}, "", {}},
        {"aaaa\nbb", {"aaaa"}, "c\n", {"bb", "c"}},  // the held partial line of the old content goes out
        {"aaaa\nbbbb\n", {"aaaa", "bbbb"}, "p", {}},
    };
    for (const Case& c : cases) {
      CAPTURE(c.after);
      TempDir dir;
      const std::string path = dir.file("app.log");
      Writer w(path);
      Tail t(path, options(inotify));
      w.write(c.before);
      CHECK(t.lines(c.before_lines.size()) == c.before_lines);
      REQUIRE(::truncate(path.c_str(), 0) == 0);
      w.write(c.after);  // O_APPEND: at the new end
      CHECK(t.lines(c.want.size()) == c.want);
      CHECK(t.now() == Lines{});
      w.write("z\n");
      const std::string tail = c.after == "p" ? "pz" : "z";
      CHECK(t.lines(1) == Lines{tail});
      CHECK(t.now() == Lines{});
      CHECK(t.take_notices() == Lines{path + ": file truncated"});
      CHECK(t.f.counts().truncations == 1);
      CHECK(t.f.counts().rotations == 0);
    }
  }
}

TEST_CASE("follow: a deleted file is read to its end, then the re-created one from its start") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    Writer old(path);
    Tail t(path, options(inotify));
    old.write("a\n");
    CHECK(t.lines(1) == Lines{"a"});
    REQUIRE(::unlink(path.c_str()) == 0);
    old.write("b\n");  // its writer still has it open
    CHECK(t.lines(1) == Lines{"b"});
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{"'" + path + "' has become inaccessible: No such file or directory"});
    old.write("p");
    old.close();
    Writer fresh(path);
    fresh.write("c\n");
    CHECK(t.lines(2) == Lines{"p", "c"});
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{"'" + path + "' has appeared; following new file"});
  }
}

TEST_CASE("follow: deleted and re-created before the follower looks") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    Writer old(path);
    Tail t(path, options(inotify));
    old.write("a\n");
    REQUIRE(::unlink(path.c_str()) == 0);
    old.write("b\n");
    write_file(path, "c\n");
    CHECK(t.lines(3) == Lines{"a", "b", "c"});
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{"'" + path + "' has been replaced; following new file"});
  }
}

TEST_CASE("follow: a file missing at start is waited for and read from its start") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    Tail t(path, options(inotify));
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{"cannot open '" + path + "' for reading: No such file or directory"});
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{});  // reported once
    Writer w(path);
    w.write("a\nb\n");
    CHECK(t.lines(2) == Lines{"a", "b"});
    w.write("c\n");
    CHECK(t.lines(1) == Lines{"c"});
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{"'" + path + "' has appeared; following new file"});
    CHECK(t.f.counts().rotations == 0);
  }
}

TEST_CASE("follow: a directory at the path is waited out") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    REQUIRE(::mkdir(path.c_str(), 0755) == 0);
    Tail t(path, options(inotify));
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{"cannot open '" + path + "' for reading: Is a directory"});
    REQUIRE(::rmdir(path.c_str()) == 0);
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{"cannot open '" + path + "' for reading: No such file or directory"});
    write_file(path, "a\n");
    CHECK(t.lines(1) == Lines{"a"});
    CHECK(t.take_notices() == Lines{"'" + path + "' has appeared; following new file"});
  }
}

TEST_CASE("follow: a file in a directory that does not exist yet") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string sub = dir.file("sub");
    const std::string path = sub + "/app.log";
    FollowOptions o = options(inotify);
    o.poll_interval_ms = 20;  // a missing directory cannot be watched: it is found by the check
    Tail t(path, o);
    CHECK(t.now() == Lines{});
    REQUIRE(::mkdir(sub.c_str(), 0755) == 0);
    write_file(path, "a\n");
    CHECK(t.lines(1) == Lines{"a"});
    CHECK(t.take_notices() == Lines{"cannot open '" + path + "' for reading: No such file or directory",
                                    "'" + path + "' has appeared; following new file"});
  }
}

TEST_CASE("follow: a blocked next() wakes for every kind of change made meanwhile") {
  // With inotify the check interval is a minute: each wake-up is an event.
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    const std::string rotated = dir.file("app.log.1");
    std::optional<Writer> w;
    w.emplace(path);
    Tail t(path, options(inotify));
    std::binary_semaphore go(0);
    std::vector<std::pair<std::string, std::function<void()>>> steps = {
        {"1", [&] { w->write("1\n"); }},
        {"2",
         [&] {
           CHECK(::rename(path.c_str(), rotated.c_str()) == 0);
           w->write("2\n");
         }},
        {"3", [&] { Writer(path).write("3\n"); }},  // the file is created (IN_CREATE), then written
        {"4",
         [&] {
           w.emplace(path);
           w->write("4\n");
         }},
        {"5",
         [&] {
           CHECK(::truncate(path.c_str(), 0) == 0);
           w->write("5\n");
         }},
        {"6",
         [&] {
           CHECK(::unlink(path.c_str()) == 0);
           w->write("6\n");
         }},
        {"7",
         [&] {
           w.emplace(path);
           w->write("7\n");
         }},
        {"8",
         [&] {
           w->write("8");
           w->write("\n");
         }},
    };
    std::thread writer([&] {
      for (auto& step : steps) {
        go.acquire();
        step.second();
      }
    });
    Lines got;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      go.release();  // the step runs before or during the wait: both must work
      got.push_back(t.lines(1).front());
    }
    writer.join();
    Lines want;
    for (auto& step : steps) want.push_back(step.first);
    CHECK(got == want);
    CHECK(t.now() == Lines{});
  }
}

TEST_CASE("follow: stop() from another thread ends a blocked next()") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    for (bool exists : {true, false}) {
      CAPTURE(exists);
      TempDir dir;
      const std::string path = dir.file("app.log");
      if (exists) write_file(path, "a\n");
      FollowOptions o = options(inotify);
      o.poll_interval_ms = 60'000;  // only the wake-up can end the wait in time
      Follower f(path, o);
      (void)f.take_notices();
      std::thread stopper([&] { f.stop(); });
      std::optional<swthrottle::input::Line> l;
      do {
        l = f.next(-1);
      } while (!l && !f.stopped());  // an early return for notices is not the stop
      stopper.join();
      CHECK_FALSE(l);
      CHECK(f.stopped());
      write_file(path, "b\n");
      CHECK_FALSE(f.next(0));  // for good
    }
  }
}

TEST_CASE("follow: take_partial hands out the held line once") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    write_file(path, "x\nyz");
    Tail t(path, options(inotify, true));
    CHECK(t.lines(1) == Lines{"x"});
    CHECK(t.now() == Lines{});
    auto p = t.f.take_partial();
    REQUIRE(p);
    CHECK(p->text == "yz");
    CHECK_FALSE(t.f.take_partial());
  }
  TempDir dir;
  Follower missing(dir.file("none"), options(false));
  CHECK_FALSE(missing.take_partial());
}

TEST_CASE("follow: a FIFO is read as writers come and go") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("pipe");
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    Tail t(path, options(inotify));
    CHECK(t.notices == Lines{});
    for (std::string_view data : {"a\nb\n", "c\n"}) {
      // Non-blocking: fails with ENXIO unless the follower has it open for reading.
      const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      REQUIRE(fd >= 0);
      REQUIRE(::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size()));
      ::close(fd);
    }
    CHECK(t.lines(3) == Lines{"a", "b", "c"});  // not t.now(): an idle FIFO blocks in read(2)
    CHECK(t.notices == Lines{});
  }
}

// Random appends, rotations, deletions and truncations, the follower looking
// after each: the lines are exactly those of a plain model in which each
// file's unterminated last line becomes a line when the follower leaves it.
TEST_CASE("follow: random rotations and truncations lose and repeat no line") {
  const uint64_t seed = swthrottle::test::base_seed(20261121);
  CAPTURE(seed);
  for (bool inotify : modes) {
    CAPTURE(inotify);
    std::mt19937_64 rng(seed + (inotify ? 1 : 0));
    TempDir dir;
    const std::string path = dir.file("app.log");
    std::optional<Writer> w;
    w.emplace(path);
    Tail t(path, options(inotify, true));

    Lines want;
    std::string partial;
    std::size_t size = 0;  // of the writer's file
    bool at_path = true;   // the writer's file is the one at the path
    int rotated = 0;
    auto flush = [&] {
      if (!partial.empty()) want.push_back(std::exchange(partial, {}));
    };
    auto append = [&](std::size_t n) {
      std::string s;
      for (std::size_t i = 0; i < n; ++i) s += "ab\n"[rng() % 3];
      w->write(s);
      size += s.size();
      for (char ch : s) {
        if (ch == '\n') want.push_back(std::exchange(partial, {}));
        else partial += ch;
      }
    };
    Lines got;
    for (int op = 0; op < 300; ++op) {
      const auto r = rng() % 20;
      if (r < 12) {
        append(1 + rng() % 8);
      } else if (r < 14 && at_path) {  // logrotate `create`: rename; the writer goes on in the old file
        REQUIRE(::rename(path.c_str(), dir.file("app.log." + std::to_string(++rotated)).c_str()) == 0);
        at_path = false;
      } else if (r < 15 && at_path) {  // deleted while written
        REQUIRE(::unlink(path.c_str()) == 0);
        at_path = false;
      } else if (r < 17 && !at_path) {  // the writer reopens: a new file at the path
        w.emplace(path);
        flush();
        size = 0;
        at_path = true;
      } else if (r < 19 && at_path) {  // copytruncate, maybe written again at once (less than before)
        REQUIRE(::truncate(path.c_str(), 0) == 0);
        const std::size_t old = size;
        size = 0;
        if (old > 0) flush();
        if (old > 1 && rng() % 2) append(1 + rng() % (old - 1));
      } else if (at_path) {  // a new file renamed over the name
        const std::string next = dir.file("next");
        write_file(next, "");
        REQUIRE(::rename(next.c_str(), path.c_str()) == 0);
        w.emplace(path);
        flush();
        size = 0;
      }
      for (auto& l : t.now()) got.push_back(std::move(l));
    }
    // A last line in a file at the path: the follower ends up there, whatever the state.
    if (!at_path) {
      w.emplace(path);
      flush();
    }
    w->write("END\n");
    want.push_back(partial + "END");
    for (auto& l : t.now()) got.push_back(std::move(l));
    CHECK(got == want);
    CHECK(got.size() > 100);
  }
}

TEST_CASE("follow: a compressed file at the path is reported and skipped, the next file is followed") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    write_file(path, "a\n");
    Tail t(path, options(inotify, true));
    CHECK(t.lines(1) == Lines{"a"});
    // A compressed file replaces it (gzip magic, then bytes that are not text).
    const std::string gz = dir.file("new.gz");
    write_file(gz, std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03zzz\nyyy\n", 18));
    REQUIRE(::rename(gz.c_str(), path.c_str()) == 0);
    CHECK(t.now() == Lines{});
    CHECK(t.take_notices() == Lines{"'" + path + "' has been replaced; following new file",
                                    path + ": compressed input (gzip) cannot be followed; skipped"});
    // Then a plain file again: followed from its start.
    const std::string next = dir.file("next");
    write_file(next, "n1\n");
    REQUIRE(::rename(next.c_str(), path.c_str()) == 0);
    CHECK(t.lines(1) == Lines{"n1"});
  }
}

TEST_CASE("follow: copytruncate that grew back to or past the offset before the follower looked") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    struct Case {
      std::string_view before;  // written and read before the truncation
      Lines before_lines;
      std::string_view after;  // written right after the truncation, before the follower looks
      Lines want;              // lines then
      uint64_t truncations;    // 0: the new head equals the old one, which cannot be told from growth
    } cases[] = {
        {"aaaa\nbbbb\n", {"aaaa", "bbbb"}, "xxxxxxxx\nyyyy\n", {"xxxxxxxx", "yyyy"}, 1},  // past the offset
        {"aaaa\nbbbb\n", {"aaaa", "bbbb"}, "cccc\ndddd\n", {"cccc", "dddd"}, 1},          // to the offset exactly
        {"aaaa\nbb", {"aaaa"}, "xxxxxxxxxx\n", {"bb", "xxxxxxxxxx"}, 1},  // the held partial line goes out first
        // The limit: the same first bytes as before. Read as growth, from the old offset.
        {"aaaa\nbbbb\n", {"aaaa", "bbbb"}, "aaaa\nbbbb\ncccc\n", {"cccc"}, 0},
    };
    for (const Case& c : cases) {
      CAPTURE(c.after);
      TempDir dir;
      const std::string path = dir.file("app.log");
      Writer w(path);
      Tail t(path, options(inotify));
      w.write(c.before);
      CHECK(t.lines(c.before_lines.size()) == c.before_lines);
      REQUIRE(::truncate(path.c_str(), 0) == 0);
      w.write(c.after);  // O_APPEND: from offset 0
      CHECK(t.lines(c.want.size()) == c.want);
      CHECK(t.now() == Lines{});
      w.write("z\n");
      CHECK(t.lines(1) == Lines{"z"});
      CHECK(t.now() == Lines{});
      CHECK(t.take_notices() == (c.truncations ? Lines{path + ": file truncated"} : Lines{}));
      CHECK(t.f.counts().truncations == c.truncations);
      CHECK(t.f.counts().regrown == c.truncations);
      CHECK(t.f.counts().rotations == 0);
    }
  }
}

TEST_CASE("follow: a file shorter than its fingerprint grows without a truncation, and its fingerprint with it") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    Writer w(path);
    Tail t(path, options(inotify, true));  // the fingerprint of an empty file: no bytes
    w.write("a\n");
    CHECK(t.lines(1) == Lines{"a"});
    w.write("b\n");  // 4 bytes now: the 2 known ones are still there, and 2 more are known
    CHECK(t.lines(1) == Lines{"b"});
    std::string more;
    Lines more_lines;
    for (int i = 0; i < 100; ++i) {  // 600 bytes: past the 256 a fingerprint holds
      more += "l" + std::to_string(100 + i) + "\n";
      more_lines.push_back("l" + std::to_string(100 + i));
    }
    w.write(more);
    CHECK(t.lines(more_lines.size()) == more_lines);
    CHECK(t.now() == Lines{});
    CHECK(t.f.counts().truncations == 0);
    // Truncated and grown back past the offset with the same first 4 bytes but
    // not the same first 256: found, because the fingerprint grew to 256.
    REQUIRE(::truncate(path.c_str(), 0) == 0);
    const std::string again = "a\nb\n" + std::string(700, 'x') + "\n";
    w.write(again);
    CHECK(t.lines(3) == Lines{"a", "b", std::string(700, 'x')});
    CHECK(t.now() == Lines{});
    CHECK(t.f.counts().truncations == 1);
    CHECK(t.f.counts().regrown == 1);
    CHECK(t.take_notices() == Lines{path + ": file truncated"});
  }
}

TEST_CASE("follow: polling, two rotations before the follower looks: the file never seen at the path is not read") {
  // The guarantee's bound: a file is read only if it was at the path when
  // the follower looked; one created and renamed away in between is lost.
  // (With inotify the watcher thread may open it meanwhile: timing.)
  TempDir dir;
  const std::string path = dir.file("app.log");
  std::optional<Writer> w;
  w.emplace(path);
  Tail t(path, options(false));
  w->write("a1\n");
  CHECK(t.lines(1) == Lines{"a1"});
  w->write("a2\n");
  REQUIRE(::rename(path.c_str(), dir.file("app.log.1").c_str()) == 0);
  w.emplace(path);
  w->write("b1\n");
  REQUIRE(::rename(path.c_str(), dir.file("app.log.2").c_str()) == 0);
  w.emplace(path);
  w->write("c1\n");
  CHECK(t.lines(2) == Lines{"a2", "c1"});
  CHECK(t.now() == Lines{});
  CHECK(t.take_notices() == Lines{"'" + path + "' has been replaced; following new file"});
  CHECK(t.f.counts().rotations == 1);
}

TEST_CASE("follow: files seen at the path while a backlog is read are each read to their end, in order") {
  // inotify only: the new file is opened by the watcher thread, or, failing
  // that, at the next read after the directory event (with polling, at most
  // every poll interval: timing).
  TempDir dir;
  const std::string path = dir.file("app.log");
  std::optional<Writer> w;
  w.emplace(path);
  std::string backlog;
  Lines want;
  for (int i = 0; i < 30000; ++i) {  // 8 bytes a line: several 64 KiB reads
    char line[16];
    std::snprintf(line, sizeof line, "L%06d", i);
    backlog += std::string(line) + "\n";
    want.emplace_back(line);
  }
  w->write(backlog);
  Tail t(path, options(true, true));
  CHECK(t.lines(1) == Lines{want[0]});  // the first read: 64 KiB of it buffered
  // Rotated while the backlog is read: the writer goes on in a new file at once.
  REQUIRE(::rename(path.c_str(), dir.file("app.log.1").c_str()) == 0);
  w.emplace(path);
  w->write("b1\n");
  // Read on past the buffered part: the next read sees the directory event and opens the new file.
  CHECK(t.lines(10000) == Lines(want.begin() + 1, want.begin() + 10001));
  // Rotated again, and more: the file opened above has left the path.
  w->write("b2\n");
  REQUIRE(::rename(path.c_str(), dir.file("app.log.2").c_str()) == 0);
  w.emplace(path);
  w->write("c1\n");
  Lines rest(want.begin() + 10001, want.end());
  for (const char* l : {"b1", "b2", "c1"}) rest.emplace_back(l);
  CHECK(t.lines(rest.size()) == rest);
  CHECK(t.now() == Lines{});
  CHECK(t.f.counts().rotations == 2);
  CHECK(t.take_notices() == Lines{"'" + path + "' has been replaced; following new file",
                                  "'" + path + "' has been replaced; following new file"});
}

TEST_CASE("follow: rename, then new writes at once in both files: the old one is read to its end first") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    Writer old(path);
    Tail t(path, options(inotify));
    old.write("a1\n");
    CHECK(t.lines(1) == Lines{"a1"});
    REQUIRE(::rename(path.c_str(), dir.file("app.log.1").c_str()) == 0);
    Writer fresh(path);
    fresh.write("n1\n");
    CHECK(t.now() == Lines{"n1"});  // the old file had nothing more when the new one was seen
    old.write("a2\n");              // too late: the follower had switched (documented)
    fresh.write("n2\n");
    CHECK(t.lines(1) == Lines{"n2"});
    CHECK(t.now() == Lines{});
  }
}

namespace {

// Whether this process has a descriptor other than `except` open on `path`'s
// file: the Follower's (its watcher's), since nothing else opens it.
bool held_open(const std::string& path, int except) {
  struct stat file;
  return ::stat(path.c_str(), &file) == 0 && swthrottle::test::held_open(file.st_dev, file.st_ino, except);
}

}  // namespace

TEST_CASE("follow: inotify, a file opened by the watcher is read whole though it left the path before any next()") {
  // The watcher thread opens a new file at the path as soon as it is created,
  // without the reading thread: here the test calls no next() from the
  // rotation to the end, and the file in between is still read.
  TempDir dir;
  const std::string path = dir.file("app.log");
  std::optional<Writer> w;
  w.emplace(path);
  Tail t(path, options(true));
  w->write("a1\n");
  CHECK(t.lines(1) == Lines{"a1"});
  w->write("a2\n");
  REQUIRE(::rename(path.c_str(), dir.file("app.log.1").c_str()) == 0);
  const int b = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(b >= 0);
  // A bounded wait on a condition: the watcher has it open.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
  while (!held_open(path, b) && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  REQUIRE(held_open(path, b));
  REQUIRE(::write(b, "b1\n", 3) == 3);
  ::close(b);
  REQUIRE(::rename(path.c_str(), dir.file("app.log.1").c_str()) == 0);  // over the first one: only held open now
  w.emplace(path);
  w->write("c1\n");
  CHECK(t.lines(3) == Lines{"a2", "b1", "c1"});
  CHECK(t.now() == Lines{});
  CHECK(t.f.counts().rotations == 2);
  CHECK(t.take_notices() == Lines{"'" + path + "' has been replaced; following new file",
                                  "'" + path + "' has been replaced; following new file"});
}

TEST_CASE("follow: let_go reads the rest of the file, its unterminated line by take_partial, then stops") {
  for (bool inotify : modes) {
    CAPTURE(inotify);
    TempDir dir;
    const std::string path = dir.file("app.log");
    Writer w(path);
    w.write("old\n");
    Tail t(path, options(inotify));
    CHECK(t.now() == Lines{});
    // Written, then the name removed, before the reader looks: let go of
    // (its pattern no longer matches), the lines already written still come.
    w.write("a\nb\npart");
    REQUIRE(::unlink(path.c_str()) == 0);
    t.f.let_go();
    CHECK(t.lines(2) == Lines{"a", "b"});
    CHECK_FALSE(t.f.next(kWaitMs).has_value());  // at once: stopped at the end, not waiting kWaitMs
    CHECK(t.f.stopped());
    const auto partial = t.f.take_partial();
    REQUIRE(partial.has_value());
    CHECK(partial->text == "part");
    // Nothing more, even what the writer appends later.
    w.write("late\n");
    CHECK(t.now() == Lines{});
  }
}

TEST_CASE("follow: let_go while waiting at the end wakes next() and stops it") {
  TempDir dir;
  const std::string path = dir.file("app.log");
  write_file(path, "old\n");
  Follower f(path, options(true));
  std::thread letter([&f] { f.let_go(); });
  // Whenever let_go() comes (before or during the wait), next(-1) returns.
  CHECK_FALSE(f.next(-1).has_value());
  letter.join();
  CHECK(f.stopped());
}
