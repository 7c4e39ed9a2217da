// Follower out of descriptors (EMFILE), one stage at a time: a Follower is
// made with 0, 1, ... 5 descriptors free, so that each thing it opens in
// turn is refused (its eventfd, its inotify instance, its NameWatcher's
// inotify instance and eventfd, the file). Each time: what it says (the
// inotify notice below 2, the refused open with the ulimit hint below 5),
// that it reads the file once descriptors are free again, and that its
// destruction gives back every descriptor it holds. Under ASan every one of
// these partial constructions and destructions is checked, deterministically,
// which the racy e2e case (fault_live_test.cpp) cannot be there.
//
// In a forked child: it fills its own descriptor table, which the test
// process must not. UBSan's vptr check needs a pipe(2) the first time it
// meets a type (see fault_live_test.cpp), so the child first follows a file
// with descriptors to spare: every type checked later is known by then, and
// with the table full only the Follower's own opens can fail.
#include <doctest/doctest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "input/follow.h"
#include "support/temp_dir.h"

using swthrottle::input::Follower;
using swthrottle::input::FollowOptions;
using swthrottle::test::TempDir;

namespace {

constexpr int kWaitMs = 5000;  // a bound for a line that is surely there; normally returned at once

// The descriptors open in this process (the one reading /proc/self/fd aside).
int open_descriptors() {
  DIR* d = ::opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  int n = 0;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n - 1;
}

// Takes every free descriptor but `spare`; closes them when it goes.
class DescriptorHog {
 public:
  explicit DescriptorHog(int spare) {
    for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) held_.push_back(fd);
    for (int i = 0; i < spare && !held_.empty(); ++i) {
      ::close(held_.back());
      held_.pop_back();
    }
  }
  ~DescriptorHog() { release(); }
  DescriptorHog(const DescriptorHog&) = delete;
  DescriptorHog& operator=(const DescriptorHog&) = delete;
  void release() {
    for (int fd : held_) ::close(fd);
    held_.clear();
  }

 private:
  std::vector<int> held_;
};

// The first line, with every notice said until it came ("" after kWaitMs).
std::string first_line(Follower& f, std::vector<std::string>& notices) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
  for (;;) {
    const std::optional<swthrottle::input::Line> line = f.next(50);
    for (auto& n : f.take_notices()) notices.push_back(std::move(n));
    if (line) return std::string(line->text);
    if (std::chrono::steady_clock::now() > deadline) return "";
  }
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += "[" + x + "]";
  return s;
}

// What a Follower made with `spare` descriptors free says and reads; "" on
// no line. The table is full again only while it is made.
std::string follow_with_spare(const std::string& path, int spare) {
  FollowOptions opts;
  opts.from_start = true;
  opts.poll_interval_ms = 10;
  const int before = open_descriptors();
  std::string out = "spare " + std::to_string(spare) + ":";
  {
    DescriptorHog hog(spare);
    Follower f(path, opts);
    std::vector<std::string> notices = f.take_notices();
    hog.release();
    const std::string line = first_line(f, notices);
    out += " notices " + joined(notices) + ", line '" + line + "'";
  }
  const int after = open_descriptors();
  if (after != before) out += ", " + std::to_string(after - before) + " descriptors left open";
  return out;
}

// Runs the stages in a forked child, which reports on a pipe.
std::string run_in_child(const std::string& path) {
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(p[0]);
    // A small table: filling it is quick.
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 256) {
      rl.rlim_cur = 256;
      ::setrlimit(RLIMIT_NOFILE, &rl);
    }
    std::string report;
    {
      // With descriptors to spare, a missing file and a present one: UBSan
      // meets every type checked later (the error category, the ByteSource
      // read, a NameWatcher thread's end) while it can still make its pipe.
      FollowOptions opts;
      opts.poll_interval_ms = 10;
      Follower missing(path + ".missing", opts);
      (void)missing.take_notices();
      opts.from_start = true;
      Follower present(path, opts);
      std::vector<std::string> ignored;
      report += "warm-up line '" + first_line(present, ignored) + "'\n";
    }
    for (int spare = 0; spare <= 5; ++spare) report += follow_with_spare(path, spare) + "\n";
    const bool sent = ::write(p[1], report.data(), report.size()) == static_cast<ssize_t>(report.size());
    ::_exit(sent ? 0 : 3);
  }
  ::close(p[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    report.append(buf, static_cast<std::size_t>(n));
  }
  ::close(p[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  INFO("child status " << status << " (a sanitizer report is on stderr)");
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  return report;
}

}  // namespace

TEST_CASE("follow: out of descriptors at each stage of a Follower's start (EMFILE), said, then read once freed") {
  TempDir dir;
  const std::string path = dir.write("app.log", "line 1\n");
  const std::string refused = "[cannot open '" + path +
                              "' for reading: Too many open files (a followed file holds 5 descriptors or more: "
                              "raise the limit, ulimit -n)]";
  const std::string no_inotify = "['" + path + "': inotify cannot be used, reverting to polling: Too many open files]";
  const std::string appeared = "['" + path + "' has appeared; following new file]";
  // 0: no eventfd, no inotify. 1: no inotify. 2: no NameWatcher (its inotify
  // instance refused). 3: no NameWatcher (its eventfd refused; the inotify
  // instance it got is given back, so the file opens). 4: all but the file.
  // 5: all.
  const std::string expected =
      "warm-up line 'line 1'\n"
      "spare 0: notices " +
      no_inotify + refused + appeared +
      ", line 'line 1'\n"
      "spare 1: notices " +
      no_inotify + refused + appeared +
      ", line 'line 1'\n"
      "spare 2: notices " +
      refused + appeared +
      ", line 'line 1'\n"
      "spare 3: notices , line 'line 1'\n"
      "spare 4: notices " +
      refused + appeared +
      ", line 'line 1'\n"
      "spare 5: notices , line 'line 1'\n";
  CHECK(run_in_child(path) == expected);
}
