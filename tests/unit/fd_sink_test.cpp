// FdSink (output/fd_sink.h): records onto a descriptor; a reader that went
// away ends the output quietly, any other write error is reported once.
#include "output/fd_sink.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "support/rule_fixtures.h"

namespace {

namespace sw = swthrottle;

std::vector<sw::engine::Record> alert_and_line(const sw::config::Rule& rule) {
  sw::engine::Record a;
  a.type = sw::engine::RecordType::Alert;
  a.rule = &rule;
  a.time_ms = sw::test::kT0;
  a.count = 5;
  a.counts = {4, 1};
  a.key = "203.0.113.9";
  sw::engine::Record l;
  l.type = sw::engine::RecordType::Line;
  l.line = "a passed line";
  l.has_line = true;
  return {a, l};
}

std::string drain(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

TEST_CASE("fd sink: an --explain block, then each record whole and in order") {
  const sw::config::Rule rule = sw::test::make_ssh();
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
  std::vector<std::string> reports;
  sw::output::FdSink sink(p[1], sw::output::Format::Text, [&](const std::string& m) { reports.push_back(m); });
  CHECK_FALSE(sink.wrote_alert());
  CHECK(sink.write(alert_and_line(rule), "explained\n"));
  CHECK(sink.wrote_alert());
  ::close(p[1]);
  CHECK(drain(p[0]) ==
        "explained\n"
        "swthrottle: alert ssh-bruteforce key=203.0.113.9 count=5 counts=failed:4,invalid:1 threshold=5 window=1m "
        "suppressed=0 time=2026-11-21T10:00:05.000Z\n"
        "a passed line\n");
  ::close(p[0]);
  CHECK(reports.empty());
  CHECK_FALSE(sink.closed());
}

TEST_CASE("fd sink: a reader that went away closes it quietly, other errors are reported once and fail the run") {
  const sw::config::Rule rule = sw::test::make_ssh();
  ::signal(SIGPIPE, SIG_IGN);  // as main does: EPIPE, not a signal
  {
    int p[2];
    REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
    ::close(p[0]);
    std::vector<std::string> reports;
    sw::output::FdSink sink(p[1], sw::output::Format::Json, [&](const std::string& m) { reports.push_back(m); });
    CHECK_FALSE(sink.write(alert_and_line(rule)));
    CHECK(sink.closed());
    CHECK_FALSE(sink.failed());
    CHECK(reports.empty());
    ::close(p[1]);
  }
  {
    const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
    REQUIRE(full >= 0);
    std::vector<std::string> reports;
    sw::output::FdSink sink(full, sw::output::Format::Text, [&](const std::string& m) { reports.push_back(m); });
    CHECK_FALSE(sink.write(alert_and_line(rule)));
    CHECK_FALSE(sink.write(alert_and_line(rule)));  // closed for good, and said once
    CHECK(sink.closed());
    CHECK(sink.failed());
    CHECK(reports == std::vector<std::string>{"write error: No space left on device"});
    ::close(full);
  }
}

}  // namespace

TEST_CASE("fd sink: abandon() ends a write blocked on a full pipe, quietly, and says why first") {
  const sw::config::Rule rule = sw::test::make_ssh();
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::vector<std::string> reported;
  sw::output::FdSink sink(fds[1], sw::output::Format::Text, [&](const std::string& m) { reported.push_back(m); });
  CHECK_FALSE(sink.abandon("nobody writes"));  // nothing blocked: nothing said, and it still writes
  CHECK(reported.empty());
  CHECK(sink.write(alert_and_line(rule)));
  char got[4096];
  CHECK(::read(fds[0], got, sizeof got) > 0);  // the pipe holds them, and is empty again
  sw::output::FdSink blocked_sink(fds[1], sw::output::Format::Text,
                                  [&](const std::string& m) { reported.push_back(m); });
  // Fills the pipe from a thread, which then blocks in write(2).
  std::atomic<bool> returned{false};
  std::atomic<pid_t> tid{0};
  bool result = true;
  std::thread writer([&] {
    tid = static_cast<pid_t>(::syscall(SYS_gettid));
    const std::string text(1000, 'x');  // Record::line is a view: the text outlives the writes
    sw::engine::Record l;
    l.type = sw::engine::RecordType::Line;
    l.line = text;
    l.has_line = true;
    const std::vector<sw::engine::Record> one{l};
    while ((result = blocked_sink.write(one))) {
    }
    returned = true;
  });
  // Blocked: the pipe is full (to within a page: a write of a record is
  // atomic) and the thread sleeps (in write(2): it does nothing else).
  const int capacity = ::fcntl(fds[0], F_GETPIPE_SZ);
  auto sleeping = [&] {
    std::ifstream stat("/proc/self/task/" + std::to_string(tid.load()) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto paren = text.rfind(')');
    return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'S';
  };
  for (int queued = 0;;) {
    if (tid != 0 && ::ioctl(fds[0], FIONREAD, &queued) == 0 && queued > capacity - 4096 && sleeping()) break;
    std::this_thread::yield();
  }
  CHECK(blocked_sink.abandon("stopping: output given up"));
  writer.join();
  CHECK(returned);
  CHECK_FALSE(result);
  CHECK(blocked_sink.closed());
  CHECK_FALSE(blocked_sink.failed());  // quietly, as for a reader gone: exit 0
  CHECK(reported == std::vector<std::string>{"stopping: output given up"});
  ::close(fds[0]);
  ::close(fds[1]);
}
