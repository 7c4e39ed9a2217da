#include "support/fault_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "support/process.h"
#include "support/temp_dir.h"

extern char** environ;

namespace swthrottle::test {

namespace {

constexpr std::chrono::milliseconds kStartTimeout{5'000};
constexpr int kCommandTimeoutSec = 5;

[[noreturn]] void fail(const std::string& what, int err) {
  throw std::runtime_error("fault proxy: " + what + ": " + std::strerror(err));
}

// What the proxy wrote on stderr, for an error message.
std::string stderr_of(const TempDir& dir) {
  try {
    return read_file(dir.file("proxy.err"));
  } catch (const std::runtime_error&) {
    return "";
  }
}

}  // namespace

FaultProxy::FaultProxy() : dir_(std::make_unique<TempDir>()) {}

FaultProxy::FaultProxy(FaultProxy&& other) noexcept { *this = std::move(other); }

FaultProxy& FaultProxy::operator=(FaultProxy&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    dir_ = std::move(other.dir_);
    pid_ = std::exchange(other.pid_, -1);
    stdin_fd_ = std::exchange(other.stdin_fd_, -1);
    port_ = std::exchange(other.port_, -1);
    control_port_ = std::exchange(other.control_port_, -1);
  }
  return *this;
}

FaultProxy::~FaultProxy() { kill_and_reap(); }

void FaultProxy::kill_and_reap() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  stdin_fd_ = -1;
}

FaultProxy FaultProxy::to_tcp(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return start({"--target", (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port)});
}

FaultProxy FaultProxy::to_unix(const std::string& path) { return start({"--target-unix", path}); }

FaultProxy FaultProxy::start(const std::vector<std::string>& target_args) {
  FaultProxy proxy;  // from here on, a throw kills and reaps the child
  const std::string port_file = proxy.dir_->file("ports");
  const std::string err_file = proxy.dir_->file("proxy.err");
  std::vector<std::string> args{"python3", std::string(SWTHROTTLE_SOURCE_DIR) + "/tests/support/fault_proxy.py",
                                "--listen-port-file", port_file, "--exit-on-stdin-eof"};
  args.insert(args.end(), target_args.begin(), target_args.end());

  // stdin: a pipe whose write end only we hold (O_CLOEXEC keeps it from our
  // other children), so the proxy sees end of file when the test dies.
  int in[2];
  if (::pipe2(in, O_CLOEXEC) != 0) fail("pipe2", errno);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  // An empty signal mask and default actions, as Process::spawn does.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, "python3", &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  if (rc != 0) {
    ::close(in[1]);
    fail("posix_spawnp python3", rc);
  }
  proxy.pid_ = pid;
  proxy.stdin_fd_ = in[1];

  // The port file appears (by rename) once both ports listen; a proxy that
  // exits first has failed.
  bool exited = false;
  const bool ready = poll_until(
      [&] {
        struct stat st;
        if (::stat(port_file.c_str(), &st) == 0) return true;
        int status = 0;
        exited = ::waitpid(pid, &status, WNOHANG) == pid;
        return exited;
      },
      kStartTimeout);
  if (exited) {
    proxy.pid_ = -1;  // reaped
    throw std::runtime_error("fault proxy exited at start-up: " + stderr_of(*proxy.dir_));
  }
  if (!ready) throw std::runtime_error("fault proxy did not start in time: " + stderr_of(*proxy.dir_));
  std::istringstream ports(read_file(port_file));
  if (!(ports >> proxy.port_ >> proxy.control_port_)) {
    throw std::runtime_error("fault proxy: bad port file: " + read_file(port_file));
  }
  return proxy;
}

std::string FaultProxy::errors() const { return dir_ ? stderr_of(*dir_) : ""; }

std::string FaultProxy::url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

std::string FaultProxy::command(const std::string& line) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket", errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  const timeval tv{kCommandTimeoutSec, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(control_port_));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) fail("connect control port", errno);
  const std::string out = line + "\n";
  for (std::size_t off = 0; off < out.size();) {
    const ssize_t n = ::send(fd, out.data() + off, out.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("send '" + line + "'", errno);
    off += static_cast<std::size_t>(n);
  }
  std::string reply;
  while (reply.empty() || reply.back() != '\n') {
    char buf[256];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("no reply to '" + line + "'", errno);  // EAGAIN: the timeout
    if (n == 0) throw std::runtime_error("fault proxy: control connection closed after '" + line + "'");
    reply.append(buf, static_cast<std::size_t>(n));
  }
  reply.pop_back();
  return reply;
}

void FaultProxy::expect_ok(const std::string& line) {
  const std::string reply = command(line);
  if (reply != "ok") throw std::runtime_error("fault proxy: '" + line + "' -> '" + reply + "'");
}

void FaultProxy::pass() { expect_ok("pass"); }
void FaultProxy::delay(int ms, int jitter_ms) {
  expect_ok("delay " + std::to_string(ms) + " " + std::to_string(jitter_ms));
}
void FaultProxy::blackhole() { expect_ok("blackhole"); }
void FaultProxy::reset() { expect_ok("reset"); }
void FaultProxy::drop_reply(int n) { expect_ok("drop-reply " + std::to_string(n)); }

std::string FaultProxy::stats() {
  std::string reply = command("stats");
  if (reply.rfind("ok ", 0) != 0) throw std::runtime_error("fault proxy: 'stats' -> '" + reply + "'");
  return reply;
}

FaultProxyCounters FaultProxy::counters() {
  const std::string reply = stats();
  FaultProxyCounters c;
  std::istringstream words(reply.substr(3));
  std::string word;
  int seen = 0;
  while (words >> word) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = word.substr(0, eq);
    const long long value = std::stoll(word.substr(eq + 1));
    long long* field = key == "conns"        ? &c.conns
                       : key == "bytes_up"   ? &c.bytes_up
                       : key == "bytes_down" ? &c.bytes_down
                                             : nullptr;
    if (field != nullptr) {
      *field = value;
      ++seen;
    }
  }
  if (seen != 3) throw std::runtime_error("fault proxy: bad stats '" + reply + "'");
  return c;
}

}  // namespace swthrottle::test
