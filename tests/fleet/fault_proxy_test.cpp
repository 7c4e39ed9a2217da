// The fault proxy itself (tests/support/fault_proxy.py through FaultProxy),
// against a small echo server in the test: each mode does to open and new
// connections what the proxy's header says. No sleeps: every wait is a read
// or a condition with a bounded timeout.
#include "support/fault_proxy.h"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

using swthrottle::test::FaultProxy;
using swthrottle::test::Process;
using swthrottle::test::TempDir;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// An echo server on 127.0.0.1 (port 0) or on a unix socket, on a thread of
// its own: one poll loop over the listening socket, its clients and a wake
// pipe. It keeps everything it received, for the test to wait on.
class EchoServer {
 public:
  explicit EchoServer(const std::string& unix_path = "") {
    if (unix_path.empty()) {
      listen_ = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::bind(listen_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) fail("bind");
      socklen_t len = sizeof a;
      ::getsockname(listen_.get(), reinterpret_cast<sockaddr*>(&a), &len);
      port_ = ntohs(a.sin_port);
    } else {
      listen_ = Fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_un a{};
      a.sun_family = AF_UNIX;
      std::strncpy(a.sun_path, unix_path.c_str(), sizeof a.sun_path - 1);
      if (::bind(listen_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) fail("bind " + unix_path);
    }
    if (::listen(listen_.get(), 16) != 0) fail("listen");
    int w[2];
    if (::pipe2(w, O_CLOEXEC) != 0) fail("pipe2");
    wake_read_ = Fd(w[0]);
    wake_write_ = Fd(w[1]);
    thread_ = std::thread([this] { loop(); });
  }
  ~EchoServer() {
    const char c = 'x';
    (void)!::write(wake_write_.get(), &c, 1);
    thread_.join();
  }
  EchoServer(const EchoServer&) = delete;
  EchoServer& operator=(const EchoServer&) = delete;

  int port() const { return port_; }
  std::string received() {
    std::lock_guard lock(mu_);
    return received_;
  }
  // Waits until everything received contains `needle`.
  bool wait_received(const std::string& needle, std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return received_.find(needle) != std::string::npos; });
  }

 private:
  void loop() {
    std::vector<Fd> clients;
    for (;;) {
      std::vector<pollfd> fds{{wake_read_.get(), POLLIN, 0}, {listen_.get(), POLLIN, 0}};
      for (const Fd& c : clients) fds.push_back({c.get(), POLLIN, 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents != 0) return;
      std::vector<Fd> still;
      for (std::size_t i = 2; i < fds.size(); ++i) {
        Fd& c = clients[i - 2];
        if (fds[i].revents == 0) {
          still.push_back(std::move(c));
          continue;
        }
        char buf[65536];
        const ssize_t n = ::recv(c.get(), buf, sizeof buf, 0);
        if (n <= 0) continue;  // end of file or reset: drop it
        {
          std::lock_guard lock(mu_);
          received_.append(buf, static_cast<std::size_t>(n));
        }
        cv_.notify_all();
        (void)::send(c.get(), buf, static_cast<std::size_t>(n), MSG_NOSIGNAL);  // blocking: small test data
        still.push_back(std::move(c));
      }
      clients = std::move(still);
      if (fds[1].revents != 0) {
        const int c = ::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0) clients.emplace_back(c);  // polled from the next round on
      }
    }
  }

  Fd listen_;
  Fd wake_read_;
  Fd wake_write_;
  int port_ = -1;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string received_;
};

// A blocking client connection to 127.0.0.1:port.
Fd connect_to(int port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) fail("connect");
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

void send_all(const Fd& fd, const std::string& data) {
  for (std::size_t off = 0; off < data.size();) {
    const ssize_t n = ::send(fd.get(), data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("send");
    off += static_cast<std::size_t>(n);
  }
}

// What one bounded read saw.
struct ReadResult {
  enum Kind { kData, kEof, kTimeout, kError } kind;
  std::string data;
  int err = 0;
};

// Reads until `want` bytes came (or any, when want is 0), the peer closed,
// an error, or the timeout.
ReadResult read_for(const Fd& fd, std::chrono::milliseconds timeout, std::size_t want = 0) {
  const auto deadline = Clock::now() + timeout;
  ReadResult r{ReadResult::kTimeout, "", 0};
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return r;
    pollfd p{fd.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return r;
    char buf[65536];
    const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return {ReadResult::kError, r.data, errno};
    if (n == 0) return {r.data.empty() ? ReadResult::kEof : ReadResult::kData, r.data, 0};
    r.kind = ReadResult::kData;
    r.data.append(buf, static_cast<std::size_t>(n));
    if (r.data.size() >= want) return r;
  }
}

// Sends `msg` and expects it back whole.
void check_echo(const Fd& fd, const std::string& msg) {
  send_all(fd, msg);
  const ReadResult r = read_for(fd, 5s, msg.size());
  REQUIRE(r.kind == ReadResult::kData);
  CHECK(r.data == msg);
}

bool closed_by_reset_or_eof(const ReadResult& r) {
  return r.kind == ReadResult::kEof || (r.kind == ReadResult::kError && r.err == ECONNRESET);
}

}  // namespace

TEST_CASE("fault proxy: pass forwards both ways, in order") {
  EchoServer echo;
  FaultProxy proxy = FaultProxy::to_tcp("127.0.0.1", echo.port());
  CHECK(proxy.url() == "redis://127.0.0.1:" + std::to_string(proxy.port()));
  Fd c = connect_to(proxy.port());
  check_echo(c, "PING\r\n");
  CHECK(echo.received() == "PING\r\n");

  // Many chunks each way: nothing lost, nothing reordered.
  std::string big;
  for (int i = 0; big.size() < 300'000; ++i) big += std::to_string(i) + ",";
  check_echo(c, big);
  CHECK(echo.received() == "PING\r\n" + big);
  CHECK(proxy.errors() == "");
}

TEST_CASE("fault proxy: delay holds each chunk both ways, also on a connection already open") {
  EchoServer echo;
  FaultProxy proxy = FaultProxy::to_tcp("127.0.0.1", echo.port());
  Fd c = connect_to(proxy.port());
  check_echo(c, "before");

  proxy.delay(200, 0);
  const auto t0 = Clock::now();
  check_echo(c, "x");
  const auto rtt = Clock::now() - t0;
  CHECK(rtt >= 395ms);  // 200 ms up, 200 ms down (a little slack for the clock's rounding)
  CHECK(rtt < 5s);

  // With jitter larger than the gaps between chunks, order still holds.
  proxy.delay(20, 20);
  std::string all;
  for (int i = 0; i < 30; ++i) {
    const std::string msg = "m" + std::to_string(i) + ";";
    send_all(c, msg);
    all += msg;
  }
  const ReadResult r = read_for(c, 5s, all.size());
  CHECK(r.data == all);

  proxy.pass();
  check_echo(c, "after");
  CHECK(proxy.errors() == "");
}

TEST_CASE("fault proxy: blackhole answers nothing, a blackholed connection stays dead, new ones work after pass") {
  EchoServer echo;
  FaultProxy proxy = FaultProxy::to_tcp("127.0.0.1", echo.port());
  Fd open = connect_to(proxy.port());
  check_echo(open, "hello");

  proxy.blackhole();
  send_all(open, "lost1");
  CHECK(read_for(open, 300ms).kind == ReadResult::kTimeout);  // no reply, no FIN, no RST
  Fd during = connect_to(proxy.port());                       // accepted, then silence
  send_all(during, "lost2");
  CHECK(read_for(during, 300ms).kind == ReadResult::kTimeout);

  proxy.pass();
  send_all(open, "lost3");
  CHECK(read_for(open, 300ms).kind == ReadResult::kTimeout);
  send_all(during, "lost4");
  CHECK(read_for(during, 300ms).kind == ReadResult::kTimeout);
  Fd after = connect_to(proxy.port());
  check_echo(after, "again");
  CHECK(echo.received() == "helloagain");  // nothing of the blackholed bytes reached the server
  CHECK(proxy.errors() == "");
}

TEST_CASE("fault proxy: reset closes open connections with RST and refuses new ones until the mode changes") {
  EchoServer echo;
  FaultProxy proxy = FaultProxy::to_tcp("127.0.0.1", echo.port());
  Fd open = connect_to(proxy.port());
  check_echo(open, "hello");

  proxy.reset();
  const ReadResult r = read_for(open, 5s);
  CHECK_MESSAGE(closed_by_reset_or_eof(r), "kind ", r.kind, " errno ", r.err);

  // A new connection may complete its handshake, but it is reset at once.
  Fd during = connect_to(proxy.port());
  (void)::send(during.get(), "x", 1, MSG_NOSIGNAL);  // may fail already: the RST came
  const ReadResult d = read_for(during, 5s);
  CHECK_MESSAGE(closed_by_reset_or_eof(d), "kind ", d.kind, " errno ", d.err);

  proxy.pass();
  Fd after = connect_to(proxy.port());
  check_echo(after, "again");
  CHECK(proxy.errors() == "");
}

TEST_CASE("fault proxy: drop-reply N applies N requests, loses their replies, closes, then passes") {
  EchoServer echo;
  FaultProxy proxy = FaultProxy::to_tcp("127.0.0.1", echo.port());
  Fd open = connect_to(proxy.port());
  check_echo(open, "hello;");

  SUBCASE("one") {
    proxy.drop_reply(1);
    send_all(open, "applied;");
    CHECK(echo.wait_received("applied;"));    // the server got the request
    const ReadResult r = read_for(open, 5s);  // ... and answered it, but the client
    CHECK(r.kind == ReadResult::kEof);        // sees no reply, only the end
    Fd after = connect_to(proxy.port());      // back to pass
    check_echo(after, "next;");
  }
  SUBCASE("two, across connections") {
    proxy.drop_reply(2);
    send_all(open, "first;");
    CHECK(echo.wait_received("first;"));
    CHECK(read_for(open, 5s).kind == ReadResult::kEof);
    Fd retry = connect_to(proxy.port());  // the retry's reply is lost too
    send_all(retry, "second;");
    CHECK(echo.wait_received("second;"));
    CHECK(read_for(retry, 5s).kind == ReadResult::kEof);
    Fd after = connect_to(proxy.port());
    check_echo(after, "third;");
  }
  CHECK(proxy.errors() == "");
}

TEST_CASE("fault proxy: stats counts connections and forwarded bytes") {
  EchoServer echo;
  FaultProxy proxy = FaultProxy::to_tcp("127.0.0.1", echo.port());
  CHECK(proxy.stats() == "ok conns=0 bytes_up=0 bytes_down=0");
  Fd a = connect_to(proxy.port());
  check_echo(a, "abc");
  Fd b = connect_to(proxy.port());
  check_echo(b, "defg");
  CHECK(proxy.stats() == "ok conns=2 bytes_up=7 bytes_down=7");
  const auto c = proxy.counters();
  CHECK(c.conns == 2);
  CHECK(c.bytes_up == 7);
  CHECK(c.bytes_down == 7);
  CHECK(proxy.errors() == "");
}

TEST_CASE("fault proxy: bad control commands are refused, and the typed calls throw") {
  EchoServer echo;
  FaultProxy proxy = FaultProxy::to_tcp("127.0.0.1", echo.port());
  CHECK(proxy.command("bogus").rfind("err ", 0) == 0);
  CHECK(proxy.command("delay 10").rfind("err ", 0) == 0);
  CHECK(proxy.command("delay ten 1").rfind("err ", 0) == 0);
  CHECK_THROWS_AS(proxy.delay(-1, 0), std::runtime_error);
  CHECK_THROWS_AS(proxy.drop_reply(0), std::runtime_error);
  CHECK(proxy.command("pass") == "ok");
  CHECK(proxy.errors() == "");
}

TEST_CASE("fault proxy: to_unix forwards to a unix socket") {
  TempDir dir;
  const std::string path = dir.file("echo.sock");
  EchoServer echo(path);
  FaultProxy proxy = FaultProxy::to_unix(path);
  Fd c = connect_to(proxy.port());
  check_echo(c, "over unix");
  CHECK(echo.received() == "over unix");
  CHECK(proxy.errors() == "");
}

TEST_CASE("fault proxy: the destructor kills and reaps the proxy") {
  EchoServer echo;
  pid_t pid = -1;
  {
    FaultProxy proxy = FaultProxy::to_tcp("127.0.0.1", echo.port());
    pid = proxy.pid();
    REQUIRE(pid > 0);
    CHECK(::kill(pid, 0) == 0);
  }
  CHECK(::kill(pid, 0) == -1);  // reaped: no zombie left under this pid
  CHECK(errno == ESRCH);
}

// The script on its own, through Process: it writes its ports, exits at once
// and quietly on SIGTERM, and with --exit-on-stdin-eof when the test that
// started it closes its stdin (or dies).
TEST_CASE("fault proxy: the script exits on SIGTERM and at the end of its stdin") {
  TempDir dir;
  const std::string script = std::string(SWTHROTTLE_SOURCE_DIR) + "/tests/support/fault_proxy.py";
  const std::string ports = dir.file("ports");
  Process p = Process::spawn({"/usr/bin/env", "python3", script, "--listen-port-file", ports, "--target", "127.0.0.1:1",
                              "--exit-on-stdin-eof"});
  REQUIRE(swthrottle::test::poll_until([&] { return ::access(ports.c_str(), F_OK) == 0; }, 5s));
  CHECK(swthrottle::test::read_file(ports).find('\n') != std::string::npos);

  SUBCASE("SIGTERM") {
    p.send_signal(SIGTERM);
    const auto r = p.wait(5s);
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_status == 0);
    CHECK(r.out == "");
    CHECK(r.err == "");
  }
  SUBCASE("end of stdin") {
    const auto r = p.wait(5s);  // closes stdin first
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_status == 0);
    CHECK(r.err == "");
  }
}
