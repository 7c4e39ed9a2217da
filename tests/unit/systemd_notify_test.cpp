#include <doctest/doctest.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "metrics/systemd_notify.h"
#include "support/fake_clock.h"
#include "support/notify_socket.h"

using swthrottle::metrics::SystemdNotify;
using swthrottle::test::NotifySocket;
using namespace std::chrono_literals;

namespace {

// A datagram sent before the call returns is already queued: this only bounds
// a wait for one that never comes.
constexpr auto kWait = 2000ms;
constexpr auto kNothing = 100ms;

// Sets (or, with nullptr, unsets) an environment variable for the life of the
// object and puts the previous value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// What the next datagram says, or kNone (printable in a failed CHECK).
constexpr const char* kNone = "(nothing within the wait)";
std::string next(NotifySocket& sock, std::chrono::milliseconds wait = kWait) {
  return sock.receive(wait).value_or(kNone);
}

std::string env_of(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "(unset)";
}

int64_t monotonic_usec() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1'000;
}

}  // namespace

TEST_CASE("systemd notify: each message is one datagram with exactly the protocol's text") {
  NotifySocket sock;
  ScopedEnv env("NOTIFY_SOCKET", sock.path().c_str());
  SystemdNotify n;
  CHECK(n.enabled());

  n.ready();
  CHECK(next(sock) == "READY=1");
  n.stopping();
  CHECK(next(sock) == "STOPPING=1");
  n.watchdog_ping();
  CHECK(next(sock) == "WATCHDOG=1");
  n.status("12 rules, 3 inputs");
  CHECK(next(sock) == "STATUS=12 rules, 3 inputs");
  CHECK(next(sock, kNothing) == kNone);  // one datagram each, nothing more
  // NOTIFY_SOCKET stays for children and later readers (unset_environment 0).
  CHECK(env_of("NOTIFY_SOCKET") == sock.path());
}

TEST_CASE("systemd notify: STATUS= is one line (newlines become spaces)") {
  NotifySocket sock;
  ScopedEnv env("NOTIFY_SOCKET", sock.path().c_str());
  SystemdNotify n;
  n.status("a\nb");
  CHECK(next(sock) == "STATUS=a b");
  n.status("x\r\ny\n");
  CHECK(next(sock) == "STATUS=x  y ");
}

TEST_CASE("systemd notify: RELOADING=1 carries MONOTONIC_USEC, the steady time of the call on its clock") {
  NotifySocket sock;
  ScopedEnv env("NOTIFY_SOCKET", sock.path().c_str());
  swthrottle::test::FakeClock clock(1'795'255'200'000, 86'400'123);
  SystemdNotify n(clock);
  n.reloading();
  CHECK(next(sock) == "RELOADING=1\nMONOTONIC_USEC=86400123000");
  clock.advance(1'500);
  n.reloading();
  CHECK(next(sock) == "RELOADING=1\nMONOTONIC_USEC=86401623000");
}

TEST_CASE("systemd notify: the system clock's steady time is CLOCK_MONOTONIC, as MONOTONIC_USEC wants") {
  // To the millisecond the clock gives: systemd compares it with its own
  // CLOCK_MONOTONIC reading of the reload request.
  const int64_t before = monotonic_usec() / 1000;
  const int64_t steady = swthrottle::system_clock().steady_ms();
  const int64_t after = monotonic_usec() / 1000;
  CHECK(steady >= before);
  CHECK(steady <= after);
}

TEST_CASE("systemd notify: an abstract NOTIFY_SOCKET (@name) works too") {
  NotifySocket sock(NotifySocket::Kind::kAbstract);
  REQUIRE(sock.path().front() == '@');
  ScopedEnv env("NOTIFY_SOCKET", sock.path().c_str());
  SystemdNotify n;
  CHECK(n.enabled());
  n.ready();
  CHECK(next(sock) == "READY=1");
}

TEST_CASE("systemd notify: without NOTIFY_SOCKET at construction nothing is sent") {
  NotifySocket sock;
  std::optional<SystemdNotify> n;
  {
    ScopedEnv env("NOTIFY_SOCKET", nullptr);
    n.emplace();
  }
  CHECK_FALSE(n->enabled());
  // NOTIFY_SOCKET is read once: set later, it is not used.
  ScopedEnv env("NOTIFY_SOCKET", sock.path().c_str());
  n->ready();
  n->status("s");
  n->watchdog_ping();
  n->reloading();
  n->stopping();
  CHECK(next(sock, kNothing) == kNone);
}

TEST_CASE("systemd notify: an empty NOTIFY_SOCKET is none") {
  ScopedEnv env("NOTIFY_SOCKET", "");
  SystemdNotify n;
  CHECK_FALSE(n.enabled());
}

TEST_CASE("systemd notify: watchdog() follows sd_watchdog_enabled (WATCHDOG_USEC, WATCHDOG_PID)") {
  ScopedEnv usec("WATCHDOG_USEC", "2000000");
  SUBCASE("WATCHDOG_PID is this process") {
    const std::string pid = std::to_string(::getpid());
    ScopedEnv wpid("WATCHDOG_PID", pid.c_str());
    SystemdNotify n;
    CHECK(n.watchdog() == 2s);
    // Not unset: still there for whoever reads them next.
    CHECK(env_of("WATCHDOG_USEC") == "2000000");
    CHECK(env_of("WATCHDOG_PID") == pid);
  }
  SUBCASE("WATCHDOG_PID unset: meant for whoever reads it") {
    ScopedEnv wpid("WATCHDOG_PID", nullptr);
    CHECK(SystemdNotify().watchdog() == 2s);
  }
  SUBCASE("WATCHDOG_PID is another process") {
    const std::string pid = std::to_string(::getppid());
    ScopedEnv wpid("WATCHDOG_PID", pid.c_str());
    CHECK(SystemdNotify().watchdog() == 0us);
  }
  SUBCASE("WATCHDOG_PID does not parse") {
    ScopedEnv wpid("WATCHDOG_PID", "x");
    CHECK(SystemdNotify().watchdog() == 0us);
  }
}

TEST_CASE("systemd notify: no WATCHDOG_USEC, or one that does not parse, is no watchdog") {
  ScopedEnv wpid("WATCHDOG_PID", nullptr);
  SUBCASE("unset") {
    ScopedEnv usec("WATCHDOG_USEC", nullptr);
    CHECK(SystemdNotify().watchdog() == 0us);
  }
  SUBCASE("not a number") {
    ScopedEnv usec("WATCHDOG_USEC", "soon");
    CHECK(SystemdNotify().watchdog() == 0us);
  }
}
