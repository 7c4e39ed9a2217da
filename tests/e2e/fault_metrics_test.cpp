// Slow clients of --metrics-listen (issue 32, item 3), against the real
// binary: two connections that sent half a request held cpp-httplib's two
// threads, and every scrape of /metrics and /healthz timed out. Here 200
// real sockets trickle a request head a byte at a time, reconnecting as the
// server closes them, while a scrape loop asks /healthz and /metrics on new
// connections: each answer must come within 1 s (the service answers in
// about a millisecond: the bound is generous, for a loaded 2-core machine).
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/test_daemon.h"

namespace {

using namespace std::chrono_literals;
using swthrottle::test::Process;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;

const std::string kBinary = SWTHROTTLE_BINARY;
const std::string kRules =
    "[[rule]]\nname = \"r\"\nkind = \"alert\"\nthreshold = \"5 per 1m\"\n  [[rule.event]]\n  name = \"e\"\n  match = "
    "'x'\n";

// A connection to 127.0.0.1:port that has sent the start of a request head
// (non-blocking: a full backlog must not stop the trickle), or -1.
int slow_connection(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// 200 clients that never finish a request: each sends one more byte of its
// head every 300 ms, and is opened again when the server closes it.
class Slowloris {
 public:
  Slowloris(int port, std::size_t n) : port_(port), fds_(n, -1) {
    for (int& fd : fds_) fd = slow_connection(port_);
    thread_ = std::thread([this] { run(); });
  }
  ~Slowloris() {
    stop_ = true;
    thread_.join();
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
  }
  uint64_t reopened() const { return reopened_.load(); }
  uint64_t bytes() const { return bytes_.load(); }

 private:
  void run() {
    const std::string head = "GET /metrics HTTP/1.1\r\nX-Slow: ";
    std::vector<std::size_t> sent(fds_.size(), 0);
    while (!stop_) {
      std::vector<pollfd> p;
      for (int fd : fds_) p.push_back({fd, POLLIN, 0});
      ::poll(p.data(), p.size(), 300);  // paces the trickle: one byte per client per round
      for (std::size_t i = 0; i < fds_.size(); ++i) {
        char buf[512];
        const bool gone = fds_[i] < 0 || ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0 &&
                                          ::recv(fds_[i], buf, sizeof buf, 0) <= 0);
        if (gone) {
          if (fds_[i] >= 0) ::close(fds_[i]);
          fds_[i] = slow_connection(port_);
          sent[i] = 0;
          ++reopened_;
          continue;
        }
        const char c = sent[i] < head.size() ? head[sent[i]] : 'a';
        if (::send(fds_[i], &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1) {
          ++sent[i];
          ++bytes_;
        }
      }
    }
  }

  const int port_;
  std::vector<int> fds_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> reopened_{0}, bytes_{0};
  std::thread thread_;
};

}  // namespace

TEST_CASE("fault: 200 slow connections do not keep /healthz or /metrics from answering within 1 s") {
  TempDir dir;
  const int port = swthrottle::test::free_port();
  // Standard input stays open: the run goes on until SIGTERM.
  Process p = Process::spawn(
      {kBinary, "-r", dir.write("rules.toml", kRules), "--metrics-listen", "127.0.0.1:" + std::to_string(port)});
  REQUIRE(swthrottle::test::poll_until(
      [&] {
        try {
          return swthrottle::test::http_get(port, "/healthz").status == 200;
        } catch (const std::exception&) {
          return false;
        }
      },
      15s));
  Slowloris slow(port, 200);
  // Longer than two head timeouts (2 s): slow clients are closed and come back meanwhile.
  const auto until = std::chrono::steady_clock::now() + 6s;
  int scrapes = 0, failed = 0;
  std::chrono::milliseconds slowest{0};
  while (std::chrono::steady_clock::now() < until) {
    for (const std::string path : {"/healthz", "/metrics"}) {
      const auto t0 = std::chrono::steady_clock::now();
      int status = 0;
      try {
        status = swthrottle::test::http_get(port, path).status;
      } catch (const std::exception&) {
        status = -1;  // no answer in 5 s: what two slow clients did before
      }
      const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
      slowest = std::max(slowest, took);
      ++scrapes;
      if (status != 200 || took > 1s) ++failed;
    }
  }
  MESSAGE("scrapes: " << scrapes << ", failed or slower than 1 s: " << failed << ", slowest " << slowest.count()
                      << " ms; slow clients reopened " << slow.reopened() << " times, " << slow.bytes()
                      << " bytes trickled");
  CHECK(failed == 0);
  CHECK(scrapes >= 10);
  CHECK(slow.reopened() >= 200);  // the server did close them (2 s head timeout)
  p.send_signal(SIGTERM);
  CHECK(p.wait(30s).exit_status == 0);
}

TEST_CASE("fault: --check says that :PORT serves /metrics on every address of the machine") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kRules);
  const RunResult all = swthrottle::test::run_swthrottle({"-r", rules, "--check", "--metrics-listen", ":9123"});
  CHECK(all.exit_status == 0);
  CHECK(all.out.find("metrics: /metrics and /healthz listen on every address of this machine (all interfaces), "
                     "port 9123: reachable from other hosts unless a firewall says otherwise; --metrics-listen "
                     "127.0.0.1:9123 keeps them local\n") != std::string::npos);
  const RunResult local =
      swthrottle::test::run_swthrottle({"-r", rules, "--check", "--metrics-listen", "127.0.0.1:9123"});
  CHECK(local.out.find("metrics: /metrics and /healthz listen on 127.0.0.1 port 9123\n") != std::string::npos);
}
