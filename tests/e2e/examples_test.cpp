// The users' kit in examples/ (issue #6), run as users run it: every
// example's rules pass --check, every sample log replays (time = "log") to
// exactly the records worked out below from the sample and DESIGN.md §2-§5, the
// README's first command prints the output block the README shows, and
// examples/webhook.sh delivers records to a real (local) HTTP listener.
//
// The expected records are reasoned out in the comments next to them; they
// were not copied from the program's output. Every window has the default 10
// buckets, and every sample starts at a whole minute (10:00:00 UTC), so a
// window of X has buckets of X/10 starting at whole multiples of X/10, and the
// window at "now" is the 10 buckets ending with now's bucket (DESIGN.md §2).
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "support/json.h"
#include "support/process.h"

namespace {

using swthrottle::test::EnvAdditions;
using swthrottle::test::lines_of;
using swthrottle::test::RunResult;

const std::string kBinary = SWTHROTTLE_BINARY;
const std::string kSourceDir = SWTHROTTLE_SOURCE_DIR;

// The pod logs of examples/k8s-pods, as the kubelet's runtime names them.
constexpr const char* kCheckoutLog =
    "k8s-pods/var/log/pods/shop_checkout-6f7c9d5b8-x2x9p_3f6c2a1e-8d4b-4e0a-9c1d-5b7e2f9a0c11/app/0.log";
constexpr const char* kPaymentsLog =
    "k8s-pods/var/log/pods/shop_payments-5d78c9869d-q7w4z_a1b2c3d4-e5f6-4789-8abc-def012345678/api/0.log";

std::string example(std::string_view rel) { return kSourceDir + "/examples/" + std::string(rel); }

RunResult swt(const std::vector<std::string>& args) { return swthrottle::test::run_swthrottle(args); }

// A word for sh -c, whatever it holds.
std::string sh_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

RunResult shell(const std::string& command, const EnvAdditions& env = {}) {
  RunResult r = swthrottle::test::run_process({"/bin/sh", "-c", command}, "", std::chrono::seconds(20), env);
  REQUIRE_MESSAGE(!r.timed_out, "did not finish in time: " << command);
  return r;
}

// --- JSON, canonically --------------------------------------------------------
//
// A record and its expectation are compared as canonical JSON (support/json.h,
// nlohmann-json): strings decoded and re-encoded one way, object members
// sorted by name. So the comparison is field by field, whatever order the
// fields come in, and a missing, extra or different field shows in the failed
// CHECK. A field given twice is not JSON here.

std::string canonical(std::string_view json) {
  std::optional<nlohmann::json> j = swthrottle::test::parse_json(json);
  CHECK_MESSAGE(j.has_value(), "not JSON: " << json);
  return j ? swthrottle::test::canonical(*j) : "<not JSON> " + std::string(json);
}

// JSON Lines output against the expected records, one canonical record a line.
void check_records(const std::string& out, const std::vector<std::string>& expected) {
  CHECK_MESSAGE((out.empty() || out.back() == '\n'), "output does not end with a newline");
  std::string got, want;
  for (const std::string& line : lines_of(out)) got += canonical(line) + "\n";
  for (const std::string& e : expected) want += canonical(e) + "\n";
  CHECK(got == want);
}

// The "name value" pairs of the --stats line of one rule on stderr.
std::map<std::string, long> rule_stats(const std::string& err, const std::string& rule) {
  std::map<std::string, long> out;
  const std::string prefix = "swthrottle: stats: rule " + rule + ": ";
  for (const std::string& line : lines_of(err)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::vector<std::string> words;
    std::size_t p = prefix.size();
    while (p < line.size()) {
      std::size_t q = line.find(' ', p);
      if (q == std::string::npos) q = line.size();
      if (q > p) words.push_back(line.substr(p, q - p));
      p = q + 1;
    }
    for (std::size_t k = 0; k + 1 < words.size(); k += 2) {
      const std::string& v = words[k + 1];
      if (!v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
        out[words[k]] = std::stol(v);
    }
  }
  return out;
}

// --- a webhook receiver on 127.0.0.1 ------------------------------------------
//
// Accepts one HTTP/1.1 request per connection (curl makes one connection per
// run), records it and answers with the next status of a script (200 once
// the script is used up), Content-Length: 0, and closes. Everything is
// bounded: a connection that does not deliver a whole request within 5 s is
// dropped, and the accept loop ends when the listener is destroyed (a byte
// on a self-pipe wakes it).

struct HttpRequest {
  std::string method;
  std::string target;
  std::string content_type;
  std::string body;
};

class WebhookListener {
 public:
  explicit WebhookListener(std::vector<int> statuses = {}) : statuses_(std::move(statuses)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;  // any free port
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || ::pipe2(wake_, O_CLOEXEC) != 0) {
      const int err = errno;
      ::close(fd_);
      throw std::runtime_error(std::string("listener: ") + std::strerror(err));
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }

  ~WebhookListener() {
    const char byte = 'x';
    while (::write(wake_[1], &byte, 1) < 0 && errno == EINTR) {
    }
    thread_.join();
    ::close(fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

  WebhookListener(const WebhookListener&) = delete;
  WebhookListener& operator=(const WebhookListener&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }

  std::vector<HttpRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

  std::vector<std::string> bodies() const {
    std::vector<std::string> out;
    for (const HttpRequest& r : requests()) out.push_back(r.body);
    return out;
  }

 private:
  using Clock = std::chrono::steady_clock;

  void serve() {
    for (;;) {
      pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[1].revents != 0) return;
      if ((fds[0].revents & POLLIN) == 0) continue;
      const int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0) continue;
      handle(conn);
      ::close(conn);
    }
  }

  // Appends what arrives on conn to buf; false at end of stream, on error or
  // at the deadline.
  static bool read_more(int conn, std::string& buf, Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{conn, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    char chunk[4096];
    const ssize_t n = ::recv(conn, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buf.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  static void send_all(int conn, std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::send(conn, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  static std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return s;
  }

  void handle(int conn) {
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    std::string buf;
    std::size_t head_end;
    while ((head_end = buf.find("\r\n\r\n")) == std::string::npos)
      if (!read_more(conn, buf, deadline)) return;
    HttpRequest req;
    std::size_t content_length = 0;
    bool expect_continue = false;
    const std::vector<std::string> head = lines_of(std::string_view(buf).substr(0, head_end));
    for (std::size_t k = 0; k < head.size(); ++k) {
      std::string line = head[k];
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (k == 0) {
        const std::size_t sp1 = line.find(' '), sp2 = line.find(' ', sp1 + 1);
        if (sp1 == std::string::npos || sp2 == std::string::npos) return;
        req.method = line.substr(0, sp1);
        req.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
        continue;
      }
      const std::size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string name = lower(line.substr(0, colon));
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      if (name == "content-length") {
        content_length = 0;
        for (char d : value) {
          if (d < '0' || d > '9' || content_length > (1u << 24)) return;  // not a length we take
          content_length = content_length * 10 + static_cast<std::size_t>(d - '0');
        }
      }
      if (name == "content-type") req.content_type = value;
      if (name == "expect" && lower(value) == "100-continue") expect_continue = true;
    }
    if (expect_continue) send_all(conn, "HTTP/1.1 100 Continue\r\n\r\n");
    buf.erase(0, head_end + 4);
    while (buf.size() < content_length)
      if (!read_more(conn, buf, deadline)) return;
    req.body = buf.substr(0, content_length);

    int status = 200;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (requests_.size() < statuses_.size()) status = statuses_[requests_.size()];
      requests_.push_back(std::move(req));
    }
    const char* reason = status == 200 ? "OK" : status == 400 ? "Bad Request" : "Internal Server Error";
    send_all(conn, "HTTP/1.1 " + std::to_string(status) + " " + reason +
                       "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    ::shutdown(conn, SHUT_WR);
  }

  int fd_ = -1;
  int wake_[2] = {-1, -1};
  int port_ = 0;
  std::vector<int> statuses_;
  mutable std::mutex mu_;
  std::vector<HttpRequest> requests_;
  std::thread thread_;
};

// The environment of every webhook.sh run: no proxy between curl and
// 127.0.0.1, no settings leaking in from the test's own environment, and no
// wait between the script's own attempts.
EnvAdditions webhook_env(EnvAdditions extra = {}) {
  EnvAdditions env{{"http_proxy", ""},
                   {"HTTP_PROXY", ""},
                   {"https_proxy", ""},
                   {"HTTPS_PROXY", ""},
                   {"all_proxy", ""},
                   {"ALL_PROXY", ""},
                   {"no_proxy", "*"},
                   {"NO_PROXY", "*"},
                   {"SWTHROTTLE_WEBHOOK_URL", ""},
                   {"SWTHROTTLE_WEBHOOK_ALL", ""},
                   {"SWTHROTTLE_WEBHOOK_TRIES", ""},
                   {"SWTHROTTLE_WEBHOOK_BACKOFF", "0"}};
  for (auto& [name, value] : extra) {
    auto it = std::find_if(env.begin(), env.end(), [&](const auto& e) { return e.first == name; });
    if (it != env.end()) it->second = value;
    else env.emplace_back(name, value);
  }
  return env;
}

// `swthrottle --rule RULES --format json LOG | examples/webhook.sh [URL]`
RunResult pipe_to_webhook(const std::string& rules, const std::string& log, const std::string& url,
                          const EnvAdditions& env) {
  const std::string command = sh_quote(kBinary) + " --rule " + sh_quote(rules) + " --format json " + sh_quote(log) +
                              " | " + sh_quote(example("webhook.sh")) + (url.empty() ? "" : " " + sh_quote(url));
  return shell(command, webhook_env(env));
}

// The JSON lines swthrottle writes for an example, of the given types.
std::vector<std::string> json_records(const std::string& rules, const std::string& log,
                                      const std::vector<std::string>& types) {
  RunResult r = swt({"--rule", rules, "--format", "json", log});
  REQUIRE(r.exit_status == 0);
  std::vector<std::string> out;
  for (const std::string& line : lines_of(r.out))
    for (const std::string& type : types)
      if (line.rfind("{\"type\":\"" + type + "\"", 0) == 0) out.push_back(line);
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += x + "\n";
  return s;
}

}  // namespace

// --- every example -------------------------------------------------------------

TEST_CASE("examples: every rules file passes --check, and every sample log is small") {
  struct Case {
    const char* rules;
    const char* log;
    const char* verdict;  // the last line of --check
  };
  const Case cases[] = {
      {"sshd/rules.toml", "sshd/auth.log", "1 rule OK"},
      {"nginx/rules.toml", "nginx/access.log", "1 rule OK"},
      {"app-errors/rules.toml", "app-errors/app.log", "1 rule OK"},
      {"kernel/rules.toml", "kernel/syslog", "2 rules OK"},
      {"systemd/rules.toml", "systemd/journal.txt", "1 rule OK"},
      {"upstream/rules.toml", "upstream/proxy.log", "2 rules OK"},
      {"k8s-json/rules.toml", "k8s-json/container.log", "1 rule OK"},
      {"java-traces/rules.toml", "java-traces/app.log", "1 rule OK"},
      {"journald/rules.toml", "journald/journal.json", "2 rules OK"},
      {"k8s-pods/rules.toml", kCheckoutLog, "2 rules OK"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.rules);
    RunResult r = swt({"--rule", example(c.rules), "--check"});
    CHECK(r.exit_status == 0);
    CHECK(r.err == "");
    const std::vector<std::string> lines = lines_of(r.out);
    REQUIRE(!lines.empty());
    CHECK(lines.back() == c.verdict);
    // Samples a reader can take in at a glance (issue #6: 30 to 300 lines).
    const std::vector<std::string> log = lines_of(swthrottle::test::read_file(example(c.log)));
    CHECK(log.size() >= 30);
    CHECK(log.size() <= 300);
  }
}

TEST_CASE("examples/sshd: brute force per source address, alert and resolved") {
  // 5 per 1m: 6 s buckets. Events per address (an invalid user's attempt is
  // two events: "Invalid user" and "Failed password for invalid user"):
  //  - 203.0.113.45: :20 inv, :22 fail, :25 inv, :27 fail, :30 inv -> 5 in the
  //    window: alert at 10:00:30 (failed 2, invalid 3). Then :32 fail, :35
  //    fail, :38 fail, :41 inv, :43 fail: the condition holds on each, inside
  //    the 10m cooldown: 5 suppressed. Buckets (t/6): :20,:22 -> 3; :25,:27 ->
  //    4; :30,:32,:35 -> 5; :38,:41 -> 6; :43 -> 7. The window at bucket b is
  //    b-9..b, so the count falls below 5 at b = 15 (10:01:30): buckets 6 and
  //    7 are left, failed 2 (:38, :43) + invalid 1 (:41). The first line from
  //    10:01:30 on is the CRON line at 10:01:31, whose boundary check resolves
  //    the key (the 10:01:25 line, bucket 14, still sees 6).
  //  - 192.0.2.77: 10:02:10, :14, :18 fail, :21 inv, :23 fail -> 5: alert at
  //    10:02:23 (failed 4, invalid 1). Buckets 21, 22, 23, 23, 23: below 5 once
  //    bucket 21 leaves, at bucket 31 (10:03:06); the next line, 10:03:10,
  //    resolves it with failed 3 + invalid 1 = 4 and nothing suppressed.
  //  - 2001:db8::7 fails every 35 s: never more than 2 in a minute.
  //  - 198.51.100.23 (alice's typo) fails once.
  //  - 10.0.0.9 fails 6 times in 6 s, but `ignore` drops its lines.
  // The message uses {key}: a resolved record has no line, so no captures.
  const std::string rules = example("sshd/rules.toml"), log = example("sshd/auth.log");
  const std::vector<std::string> expected = {
      R"J({"type":"alert","time":"2026-11-21T10:00:30.000Z","rule":"ssh-bruteforce","key":"203.0.113.45",
          "window":"1m","threshold":5,"count":5,"counts":{"failed":2,"invalid":3},"suppressed":0,
          "line":"Nov 21 10:00:30 bastion sshd[2150]: Invalid user test from 203.0.113.45 port 50131",
          "message":"5 login failures from 203.0.113.45 within 1m"})J",
      R"J({"type":"resolved","time":"2026-11-21T10:01:31.000Z","rule":"ssh-bruteforce","key":"203.0.113.45",
          "window":"1m","threshold":5,"count":3,"counts":{"failed":2,"invalid":1},"suppressed":5,
          "message":"3 login failures from 203.0.113.45 within 1m"})J",
      R"J({"type":"alert","time":"2026-11-21T10:02:23.000Z","rule":"ssh-bruteforce","key":"192.0.2.77",
          "window":"1m","threshold":5,"count":5,"counts":{"failed":4,"invalid":1},"suppressed":0,
          "line":"Nov 21 10:02:23 bastion sshd[2194]: Failed password for invalid user pi from 192.0.2.77 port 61010 ssh2",
          "message":"5 login failures from 192.0.2.77 within 1m"})J",
      R"J({"type":"resolved","time":"2026-11-21T10:03:10.000Z","rule":"ssh-bruteforce","key":"192.0.2.77",
          "window":"1m","threshold":5,"count":4,"counts":{"failed":3,"invalid":1},"suppressed":0,
          "message":"4 login failures from 192.0.2.77 within 1m"})J",
  };
  RunResult r = swt({"--rule", rules, "--format", "json", log});
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  check_records(r.out, expected);

  // For a cron job: --exit-code says an alert was raised.
  CHECK(swt({"--rule", rules, "--exit-code", log}).exit_status == 1);
}

TEST_CASE("examples/nginx: 5xx ratio with a minimum volume") {
  // One request a second from 10:00:00 (request i at second i), 5m window =
  // 30 s buckets. 5xx at i = 2, 55, 80; at i = 2 the ratio is 1/3, but only
  // 3 requests: no alert. The TLS probe at 10:00:47 has no request line and
  // counts for neither event. After i = 99: 100 requests, 3 errors (3%).
  // Then 503s from i = 100 (10:01:40) to 109:
  //   i = 100: 4/101 = 3.96%; i = 101: 5/102 = 4.90%; i = 102: 6/103 = 5.83%
  //   and 103 >= 100: alert at 10:01:42, count 103 + 6 = 109.
  // Still true, inside the cooldown (default: the window, 5m), on i = 103..109
  // (7 lines), on the ten non-5xx i = 110..119 (13/111 down to 13/120 = 10.8%), and on
  // the health checks at 10:02:10, :40, ... 10:04:40 (6 lines, 13/126 >= 10%):
  // 23 suppressed. At 10:05:10 bucket 0 (i = 0..29) has left the window: the
  // boundary check finds buckets 1-3 (90 requests, errors at 55, 80 and
  // 100..109: 12) plus 6 health checks = 96 requests < 100: resolved, with
  // count 96 + 12 = 108. Nothing after that reaches 100 requests again.
  const std::string rules = example("nginx/rules.toml"), log = example("nginx/access.log");
  RunResult r = swt({"--rule", rules, "--format", "json", log});
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  check_records(
      r.out,
      {
          R"J({"type":"alert","time":"2026-11-21T10:01:42.000Z","rule":"nginx-5xx-ratio","key":"","window":"5m",
          "when":"error / request > 0.05 and request >= 100","count":109,"counts":{"request":103,"error":6},
          "suppressed":0,
          "line":"192.0.2.33 - - [21/Nov/2026:10:01:42 +0000] \"GET /api/orders/8812 HTTP/1.1\" 503 197 \"-\" \"okhttp/4.12.0\"",
          "message":"5xx responses above 5% of requests within 5m"})J",
          R"J({"type":"resolved","time":"2026-11-21T10:05:10.000Z","rule":"nginx-5xx-ratio","key":"","window":"5m",
          "when":"error / request > 0.05 and request >= 100","count":108,"counts":{"request":96,"error":12},
          "suppressed":23,"message":"5xx responses above 5% of requests within 5m"})J",
      });
}

TEST_CASE("examples/app-errors: an ERROR flood thinned to 3 per 30s per component, with summaries") {
  // 3 per 30s: 3 s buckets; one window per component. Only ERROR lines match,
  // so only they (and the summaries) are written.
  //  - payment: 20 ERRORs every 0.5 s from 10:00:10.000 to 10:00:19.500. The
  //    first 3 pass (all in bucket 3, 10:00:09-12); 17 are suppressed, the
  //    first at 11.500, the last at 19.500. Bucket 3 leaves the window at
  //    bucket 13 (10:00:39): the first line from then on, the INFO line at
  //    10:00:40, runs the boundary check that writes the summary.
  //  - db (2) and mailer (1) stay under their own budgets.
  //  - payment again at 10:00:45, :46, :47 (room: bucket 3 is long gone) pass;
  //    :48 is suppressed. Those three stay in the window until 10:01:15, but
  //    the input ends at 10:01:00: the end of input writes the summary at now.
  const std::string rules = example("app-errors/rules.toml"), log = example("app-errors/app.log");
  RunResult r = swt({"--rule", rules, log});
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  CHECK(r.out ==
        "2026-11-21T10:00:10.000Z ERROR [payment] charge failed: upstream timeout after 5000ms order=81720\n"
        "2026-11-21T10:00:10.500Z ERROR [payment] charge failed: upstream timeout after 5000ms order=81721\n"
        "2026-11-21T10:00:11.000Z ERROR [payment] charge failed: upstream timeout after 5000ms order=81722\n"
        "2026-11-21T10:00:25.000Z ERROR [db] query failed: deadlock detected tx=5a1f order=81741\n"
        "2026-11-21T10:00:26.000Z ERROR [db] retry 1/3 failed: deadlock detected tx=5a1f order=81741\n"
        "2026-11-21T10:00:30.000Z ERROR [mailer] SMTP 421 4.7.0 mail.example.net: try again later (queued: 3)\n"
        "swthrottle: summary error-flood key=payment suppressed=17 first=2026-11-21T10:00:11.500Z "
        "last=2026-11-21T10:00:19.500Z window=30s time=2026-11-21T10:00:40.000Z\n"
        "2026-11-21T10:00:45.000Z ERROR [payment] charge failed: card declined by issuer order=81743\n"
        "2026-11-21T10:00:46.000Z ERROR [payment] charge failed: card declined by issuer order=81744\n"
        "2026-11-21T10:00:47.000Z ERROR [payment] charge failed: card declined by issuer order=81745\n"
        "swthrottle: summary error-flood key=payment suppressed=1 first=2026-11-21T10:00:48.000Z "
        "last=2026-11-21T10:00:48.000Z window=30s time=2026-11-21T10:01:00.000Z\n");

  // The same summaries as JSON.
  RunResult j = swt({"--rule", rules, "--format", "json", log});
  CHECK(j.exit_status == 0);
  std::string summaries;
  for (const std::string& line : lines_of(j.out))
    if (line.find("\"summary\"") != std::string::npos) summaries += line + "\n";
  check_records(
      summaries,
      {
          R"J({"type":"summary","time":"2026-11-21T10:00:40.000Z","rule":"error-flood","key":"payment","window":"30s",
          "threshold":3,"suppressed":17,"first":"2026-11-21T10:00:11.500Z","last":"2026-11-21T10:00:19.500Z",
          "counts":{"error":17}})J",
          R"J({"type":"summary","time":"2026-11-21T10:01:00.000Z","rule":"error-flood","key":"payment","window":"30s",
          "threshold":3,"suppressed":1,"first":"2026-11-21T10:00:48.000Z","last":"2026-11-21T10:00:48.000Z",
          "counts":{"error":1}})J",
      });

  // --passthrough writes every line but the 18 suppressed ones: 43 - 18 = 25
  // lines, plus the 2 summaries.
  RunResult p = swt({"--rule", rules, "--passthrough", log});
  CHECK(p.exit_status == 0);
  CHECK(lines_of(p.out).size() == 27);
}

TEST_CASE("examples/java-traces: traces thinned per exception class, each passed or suppressed whole") {
  // multiline = "java": 13 events (7 traces, 6 INFO lines). 2 per 1m: 6 s
  // buckets, one window per exception class (the line after the logger's).
  //  - NullPointerException at 10:00:05 and :08 pass (whole: 5 lines each);
  //    :12 and :14 are suppressed whole (none of their lines is written).
  //  - ResourceAccessException at :10 and :30 stay under their own budget and
  //    pass whole, "Caused by:" and "... 24 more" included.
  //  - NullPointerException at 10:01:10: the window is the buckets from
  //    10:00:12 on, so :05 and :08 have left it. The boundary check of that
  //    line writes the summary of the two held back, then the trace passes.
  // INFO lines match nothing and are not written (no --passthrough).
  const std::string rules = example("java-traces/rules.toml"), log = example("java-traces/app.log");
  RunResult r = swt({"--rule", rules, log});
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  auto npe = [](const char* at, const char* thread, const char* order) {
    return std::string("2026-11-21T10:") + at + " ERROR [" + thread + "] c.e.order.OrderController: order " + order +
           " failed\n"
           "java.lang.NullPointerException: Cannot invoke \"Customer.getId()\" because \"c\" is null\n"
           "\tat com.example.order.OrderService.price(OrderService.java:88)\n"
           "\tat com.example.order.OrderController.create(OrderController.java:41)\n"
           "\tat java.base/java.lang.Thread.run(Thread.java:833)\n";
  };
  auto io = [](const char* at, const char* thread, const char* order) {
    return std::string("2026-11-21T10:") + at + " ERROR [" + thread + "] c.e.payment.PaymentClient: charge of order " +
           order +
           " failed\n"
           "org.springframework.web.client.ResourceAccessException: I/O error on POST request\n"
           "\tat org.springframework.web.client.RestTemplate.doExecute(RestTemplate.java:785)\n"
           "\tat com.example.payment.PaymentClient.charge(PaymentClient.java:57)\n"
           "Caused by: java.net.SocketTimeoutException: Read timed out\n"
           "\tat java.base/java.net.SocketInputStream.socketRead0(Native Method)\n"
           "\t... 24 more\n";
  };
  CHECK(r.out == npe("00:05.000Z", "http-nio-2", "81721") + npe("00:08.000Z", "http-nio-4", "81723") +
                     io("00:10.000Z", "http-nio-5", "81724") + io("00:30.000Z", "http-nio-3", "81728") +
                     "swthrottle: summary exceptions key=java.lang.NullPointerException suppressed=2 "
                     "first=2026-11-21T10:00:12.000Z last=2026-11-21T10:00:14.000Z window=1m "
                     "time=2026-11-21T10:01:10.000Z\n" +
                     npe("01:10.000Z", "http-nio-4", "81729"));
  // --passthrough writes every line but the 2 x 5 suppressed ones, plus the summary.
  RunResult p = swt({"--rule", rules, "--passthrough", log});
  CHECK(p.exit_status == 0);
  CHECK(lines_of(p.out).size() == 45 - 10 + 1);
}

TEST_CASE("examples/kernel: OOM kills and a full disk") {
  // oom-kill (1 per 1m, key {comm}, cooldown 30m) counts only the "Killed
  // process" lines: java at 10:02:10 (alert), java again at 10:09:50 (the
  // condition holds, 7m40s after java's alert: suppressed), node, killed by
  // its memory cgroup at 10:10:20 (its own key: alert).
  // disk-full (1 per 10m, cooldown 1h): rsyslogd at 10:15:02 (alert), then
  // journald 10:15:02, the kernel's ENOSPC 10:15:03, postgres 10:15:40 and
  // cron 10:20:01 all inside the hour: 4 suppressed.
  const std::string rules = example("kernel/rules.toml"), log = example("kernel/syslog");
  RunResult r = swt({"--rule", rules, "--format", "json", "--stats", log});
  CHECK(r.exit_status == 0);
  check_records(r.out,
                {
                    R"J({"type":"alert","time":"2026-11-21T10:02:10.000Z","rule":"oom-kill","key":"java","window":"1m",
          "threshold":1,"count":1,"counts":{"killed":1},"suppressed":0,
          "line":"Nov 21 10:02:10 db1 kernel: [812218.119012] Out of memory: Killed process 4711 (java) total-vm:8123456kB, anon-rss:3987652kB, file-rss:0kB, shmem-rss:0kB, UID:1001 pgtables:8432kB oom_score_adj:0",
          "message":"OOM killer killed java (pid 4711)"})J",
                    R"J({"type":"alert","time":"2026-11-21T10:10:20.000Z","rule":"oom-kill","key":"node","window":"1m",
          "threshold":1,"count":1,"counts":{"killed":1},"suppressed":0,
          "line":"Nov 21 10:10:20 db1 kernel: [812708.021193] Memory cgroup out of memory: Killed process 6021 (node) total-vm:1254300kB, anon-rss:521004kB, file-rss:30112kB, shmem-rss:0kB, UID:1002 pgtables:2204kB oom_score_adj:0",
          "message":"OOM killer killed node (pid 6021)"})J",
                    R"J({"type":"alert","time":"2026-11-21T10:15:02.000Z","rule":"disk-full","key":"","window":"10m",
          "threshold":1,"count":1,"counts":{"enospc":1},"suppressed":0,
          "line":"Nov 21 10:15:02 db1 rsyslogd: file '/var/log/postgresql/postgresql-15-main.log'[7] write error - see https://www.rsyslog.com/solving-rsyslog-write-errors/ for help OS error: No space left on device [v8.2302.0 try https://www.rsyslog.com/e/2027 ]",
          "message":"rsyslogd: No space left on device"})J",
                });
  // The tallies no alert reported yet show in the stats.
  auto oom = rule_stats(r.err, "oom-kill");
  CHECK(oom["lines"] == 3);
  CHECK(oom["alerts"] == 2);
  CHECK(oom["suppressed"] == 1);
  auto disk = rule_stats(r.err, "disk-full");
  CHECK(disk["lines"] == 5);
  CHECK(disk["alerts"] == 1);
  CHECK(disk["suppressed"] == 4);
}

TEST_CASE("examples/systemd: failing units from journalctl -o short-iso") {
  // 1 per 10m, key {unit}, cooldown 30m. The stamps are local time at +0100;
  // records are in UTC, one hour earlier.
  //  - backup.service fails at 11:00:03+0100: alert.
  //  - app.service fails at 11:02:10 (alert), then 11:02:17, :24, :31, :38
  //    and :43 ('start-limit-hit'): 5 suppressed inside the cooldown.
  //  - mnt-nas.mount fails at 11:05:30: alert.
  //  - app.service fails at 11:35:00, 32m50s after its alert: alert carrying
  //    the 5; its window (10m) holds only this failure.
  //  - backup.service fails at 11:40:02, 40 minutes after its alert, nothing
  //    suppressed in between.
  const std::string rules = example("systemd/rules.toml"), log = example("systemd/journal.txt");
  RunResult r = swt({"--rule", rules, log});
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  CHECK(r.out ==
        "swthrottle: alert unit-failed key=backup.service count=1 threshold=1 window=10m suppressed=0 "
        "time=2026-11-21T10:00:03.000Z: backup.service failed (exit-code)\n"
        "swthrottle: alert unit-failed key=app.service count=1 threshold=1 window=10m suppressed=0 "
        "time=2026-11-21T10:02:10.000Z: app.service failed (signal)\n"
        "swthrottle: alert unit-failed key=mnt-nas.mount count=1 threshold=1 window=10m suppressed=0 "
        "time=2026-11-21T10:05:30.000Z: mnt-nas.mount failed (exit-code)\n"
        "swthrottle: alert unit-failed key=app.service count=1 threshold=1 window=10m suppressed=5 "
        "time=2026-11-21T10:35:00.000Z: app.service failed (exit-code)\n"
        "swthrottle: alert unit-failed key=backup.service count=1 threshold=1 window=10m suppressed=0 "
        "time=2026-11-21T10:40:02.000Z: backup.service failed (exit-code)\n");

  RunResult j = swt({"--rule", rules, "--format", "json", log});
  std::vector<std::string> lines = lines_of(j.out);
  REQUIRE(lines.size() == 5);
  check_records(
      lines[3] + "\n",
      {
          R"J({"type":"alert","time":"2026-11-21T10:35:00.000Z","rule":"unit-failed","key":"app.service","window":"10m",
          "threshold":1,"count":1,"counts":{"failed":1},"suppressed":5,
          "line":"2026-11-21T11:35:00+0100 web1 systemd[1]: app.service: Failed with result 'exit-code'.",
          "message":"app.service failed (exit-code)"})J",
      });
}

TEST_CASE("examples/upstream: hysteresis with resolve_when, and a summary that counts per event") {
  // Both rules: 1m window, 6 s buckets (bucket = second / 6). INFO lines every
  // 5 s from 10:00:00 to 10:02:30 match nothing but move now.
  // upstream-timeouts (fire at >= 10, clear below 3): timeouts every 3 s from
  // :00 to :33 (2 per bucket in buckets 0..5), then at 10:01:20 (bucket 13)
  // and 10:01:50 (bucket 18).
  //  - :27 is the 10th: alert. :30 and :33 hold inside the cooldown (the
  //    window, 1m): 2 suppressed.
  //  - Bucket 10 (10:01:00): buckets 1..10 hold 10, still true. Bucket 11
  //    (10:01:10): 8, `when` is false, but 8 is not < 3: still firing (a rule
  //    without resolve_when would resolve here). 10:01:20: 4 + 1 = 5; bucket
  //    14 (10:01:25): 2 + 1 = 3, not < 3. Bucket 15 (10:01:30): 1 < 3:
  //    resolved, carrying the 2 suppressed.
  // upstream-errors (5 per 1m, timeouts and refusals): the timeouts at :00,
  // :03, :06, :09, :12 pass; the timeouts :15 .. :33 (7) and the refusals at
  // :20, :22, :25 (3) are suppressed. At bucket 10 (10:01:00) the passed
  // lines of bucket 0 have left: 3 < 5, room again: the summary of 10, 7
  // timeouts and 3 refusals, first :15, last :33. The timeouts at 10:01:20
  // and 10:01:50 pass.
  const std::string rules = example("upstream/rules.toml"), log = example("upstream/proxy.log");
  auto timeout = [](const char* t) {
    return std::string(t) +
           R"( WARN proxy: upstream timed out (110: Connection timed out) while reading response header, upstream: "http://10.0.0.5:8080/api/orders")";
  };
  RunResult r = swt({"--rule", rules, log});
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  CHECK(r.out == timeout("2026-11-21T10:00:00Z") + "\n" + timeout("2026-11-21T10:00:03Z") + "\n" +
                     timeout("2026-11-21T10:00:06Z") + "\n" + timeout("2026-11-21T10:00:09Z") + "\n" +
                     timeout("2026-11-21T10:00:12Z") + "\n" +
                     "swthrottle: alert upstream-timeouts count=10 when=\"timeout >= 10\" window=1m suppressed=0 "
                     "time=2026-11-21T10:00:27.000Z: 10 upstream timeouts within 1m\n"
                     "swthrottle: summary upstream-errors suppressed=10 counts=timeout:7,refused:3 "
                     "first=2026-11-21T10:00:15.000Z last=2026-11-21T10:00:33.000Z window=1m "
                     "time=2026-11-21T10:01:00.000Z\n" +
                     timeout("2026-11-21T10:01:20Z") + "\n" +
                     "swthrottle: resolved upstream-timeouts count=1 when=\"timeout >= 10\" window=1m "
                     "time=2026-11-21T10:01:30.000Z\n" +
                     timeout("2026-11-21T10:01:50Z") + "\n");

  RunResult j = swt({"--rule", rules, "--format", "json", log});
  std::vector<std::string> lines = lines_of(j.out);
  REQUIRE(lines.size() == 10);
  check_records(
      lines[6] + "\n" + lines[8] + "\n",
      {
          R"J({"type":"summary","time":"2026-11-21T10:01:00.000Z","rule":"upstream-errors","key":"","window":"1m",
          "threshold":5,"suppressed":10,"first":"2026-11-21T10:00:15.000Z","last":"2026-11-21T10:00:33.000Z",
          "counts":{"timeout":7,"refused":3}})J",
          R"J({"type":"resolved","time":"2026-11-21T10:01:30.000Z","rule":"upstream-timeouts","key":"","window":"1m",
          "when":"timeout >= 10","count":1,"counts":{"timeout":1},"suppressed":2,
          "message":"1 upstream timeouts within 1m"})J",
      });
}

// --- README.md ---------------------------------------------------------------

TEST_CASE("examples/k8s-json: 5xx per app from a container's JSON log") {
  // 3 per 1m, cooldown = window. One request a second, 10:00:00-10:00:39.
  //  - checkout answers 503, 502, 503 at :10, :12, :14 (the :14 line from a
  //    logger with another key order): the third makes 3 in the window, so an
  //    alert at :14 with the :14 line's fields, its message unescaped.
  //  - checkout's 500 (:16) and 503 (:18) fall in the cooldown: no record.
  //  - search's one 500 (:20) and checkout's 404 (:26) stay below the
  //    threshold; the panic line (:22) is not JSON: read as text, no fields.
  const std::string rules = example("k8s-json/rules.toml"), log = example("k8s-json/container.log");
  RunResult r = swt({"--rule", rules, log});
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  CHECK(r.out ==
        "swthrottle: alert server-errors key=checkout count=3 threshold=3 window=1m suppressed=0 "
        "time=2026-11-21T10:00:14.000Z: checkout: 503 on POST /pay: upstream \"payments\" timed out\n");
}

TEST_CASE("examples/k8s-pods: errors per pod from the CRI logs of a node's containers") {
  // 3 per 1m per pod, cooldown = window; the runtime's times, .123456789 s
  // past each second. checkout logs errors at :10, :12 (written in two
  // records, P then F: one line again) and :14 (on stderr): the alert comes
  // at :14, with the :14 line's stream and message; its :18 error falls in
  // the cooldown. payments' two errors (:20, :25) stay below 3. checkout's
  // panic (:16, plain text on stderr) is the first of its pod: an alert.
  const std::string rules = example("k8s-pods/rules.toml");
  RunResult r = swt({"--rule", rules, example(kCheckoutLog), example(kPaymentsLog)});
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  CHECK(r.out ==
        "swthrottle: alert pod-errors key=shop/checkout-6f7c9d5b8-x2x9p count=3 threshold=3 window=1m suppressed=0 "
        "time=2026-11-21T10:00:14.123Z: shop/checkout-6f7c9d5b8-x2x9p app (stderr): payment declined: upstream "
        "timeout\n"
        "swthrottle: alert panics key=checkout-6f7c9d5b8-x2x9p count=1 threshold=1 window=10m suppressed=0 "
        "time=2026-11-21T10:00:16.123Z: shop/checkout-6f7c9d5b8-x2x9p app: panic: runtime error: invalid memory "
        "address\n");
}

TEST_CASE("examples/journald: errors per unit from journalctl -o json") {
  // 3 per 1m per unit, PRIORITY 0-3; one entry a second, 10:00:00-10:00:39.
  //  - nginx.service logs errors at :10, :12 and :14; the :14 one is a byte
  //    array (a colour code and a Latin-1 "é"): the alert comes at :14, its
  //    time __REALTIME_TIMESTAMP's, its message the decoded bytes (ESC
  //    escaped, the byte that is not UTF-8 as U+FFFD, as in any record).
  //  - nginx's :16 error falls in the cooldown, its :22 warning (4) is no
  //    error; ssh.service's two errors (:20, :24) stay below the threshold.
  //  - "upstream payments" is in the MESSAGE of :10, :12, :14 (the bytes),
  //    :16 and :22: `match` reads MESSAGE decoded, so the 4th is :16.
  const std::string rules = example("journald/rules.toml"), log = example("journald/journal.json");
  RunResult r = swt({"--input", "journal", "--rule", rules, log});
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  CHECK(r.out ==
        "swthrottle: alert unit-errors key=nginx.service count=3 threshold=3 window=1m suppressed=0 "
        "time=2026-11-21T10:00:14.123Z: web-1 nginx: \\u001b[31mupstream payments: no live upstreams, "
        "client sent \"caf\xEF\xBF\xBD\"\\u001b[0m\n"
        "swthrottle: alert payments-upstream count=4 threshold=4 window=1m suppressed=0 "
        "time=2026-11-21T10:00:16.123Z: upstream timed out (110: Connection timed out) while reading response "
        "header from upstream payments\n");
  // Without --input journal an array has no text: "{.MESSAGE}" is "", and
  // `match` searches the raw line, where the bytes' words are not.
  RunResult plain = swt({"--rule", rules, log});
  CHECK(plain.out ==
        "swthrottle: alert unit-errors key=nginx.service count=3 threshold=3 window=1m suppressed=0 "
        "time=2026-11-21T10:00:14.123Z: web-1 nginx: \n"
        "swthrottle: alert payments-upstream count=4 threshold=4 window=1m suppressed=0 "
        "time=2026-11-21T10:00:22.123Z: upstream server temporarily disabled while connecting to upstream "
        "payments\n");
}

TEST_CASE("README.md: the first command's output block is the real output") {
  const std::string readme = swthrottle::test::read_file(kSourceDir + "/README.md");

  // The command, as the README writes it: `... && ./build/swthrottle ARGS`.
  const std::string marker = "./build/swthrottle ";
  const std::size_t cmd = readme.find(marker);
  REQUIRE_MESSAGE(cmd != std::string::npos, "README.md has no ./build/swthrottle command");
  const std::string args = readme.substr(cmd + marker.size(), readme.find('\n', cmd) - cmd - marker.size());
  REQUIRE(args.find("examples/rules.toml") != std::string::npos);

  // The fenced block after "This is its real output".
  const std::size_t intro = readme.find("This is its real output");
  REQUIRE_MESSAGE(intro != std::string::npos, "README.md has no \"This is its real output\" block");
  const std::size_t fence = readme.find("\n```", intro);
  REQUIRE(fence != std::string::npos);
  const std::size_t body = readme.find('\n', fence + 1) + 1;
  const std::size_t end = readme.find("\n```", body - 1);
  REQUIRE(end != std::string::npos);
  const std::string shown = readme.substr(body, end + 1 - body);
  CHECK(shown.size() > 0);

  // Run from the source directory, where the README's relative paths point.
  RunResult r = shell("cd " + sh_quote(kSourceDir) + " && exec " + sh_quote(kBinary) + " " + args);
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  CHECK(r.out == shown);

  // "[examples/app.log](examples/app.log) (N lines of ...": N is right.
  const std::string claim = "(examples/app.log) (";
  const std::size_t at = readme.find(claim);
  REQUIRE(at != std::string::npos);
  const long n = std::stol(readme.substr(at + claim.size()));
  CHECK(static_cast<long>(lines_of(swthrottle::test::read_file(example("app.log"))).size()) == n);
}

// --- examples/webhook.sh -----------------------------------------------------

TEST_CASE("examples/webhook.sh: one POST per alert and resolved record, body = the JSON line") {
  WebhookListener hook;
  const std::string rules = example("sshd/rules.toml"), log = example("sshd/auth.log");
  RunResult r = pipe_to_webhook(rules, log, hook.url(), {});
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  CHECK(r.out == "");
  const std::vector<HttpRequest> reqs = hook.requests();
  // sshd writes alert, resolved, alert, resolved (see the examples/sshd case).
  REQUIRE(reqs.size() == 4);
  for (const HttpRequest& q : reqs) {
    CHECK(q.method == "POST");
    CHECK(q.target == "/hook");
    CHECK(q.content_type == "application/json");
  }
  CHECK(joined(hook.bodies()) == joined(json_records(rules, log, {"alert", "resolved"})));
  CHECK(hook.bodies()[0].rfind(R"({"type":"alert",)", 0) == 0);
  CHECK(hook.bodies()[1].rfind(R"({"type":"resolved",)", 0) == 0);
}

TEST_CASE(
    "examples/webhook.sh: line records are skipped unless SWTHROTTLE_WEBHOOK_ALL=1, and the URL may come from the "
    "environment") {
  const std::string rules = example("app-errors/rules.toml"), log = example("app-errors/app.log");
  {
    WebhookListener hook;
    RunResult r = pipe_to_webhook(rules, log, "", {{"SWTHROTTLE_WEBHOOK_URL", hook.url()}});
    CHECK(r.exit_status == 0);
    CHECK(r.err == "");
    // The two summaries of the examples/app-errors case, not its 9 lines.
    const std::vector<std::string> bodies = hook.bodies();
    CHECK(bodies.size() == 2);
    CHECK(joined(bodies) == joined(json_records(rules, log, {"summary"})));
  }
  {
    WebhookListener hook;
    RunResult r = pipe_to_webhook(rules, log, hook.url(), {{"SWTHROTTLE_WEBHOOK_ALL", "1"}});
    CHECK(r.exit_status == 0);
    CHECK(r.err == "");
    const std::vector<std::string> bodies = hook.bodies();
    CHECK(bodies.size() == 11);
    CHECK(joined(bodies) == joined(json_records(rules, log, {"line", "summary"})));
  }
}

TEST_CASE("examples/webhook.sh: a 500 is retried (by curl), and the record still arrives once accepted") {
  // curl --retry treats HTTP 500 as transient and tries again after 1 s.
  WebhookListener hook({500});
  const std::string rules = example("sshd/rules.toml"), log = example("sshd/auth.log");
  RunResult r = pipe_to_webhook(rules, log, hook.url(), {});
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  const std::vector<std::string> want = json_records(rules, log, {"alert", "resolved"});
  REQUIRE(want.size() == 4);
  // The first record twice (refused, then accepted), then the other three.
  CHECK(joined(hook.bodies()) == joined({want[0], want[0], want[1], want[2], want[3]}));
}

TEST_CASE("examples/webhook.sh: the script retries what curl gives up on, reports what never arrives, exits 1") {
  const std::string rules = example("sshd/rules.toml"), log = example("sshd/auth.log");
  const std::vector<std::string> want = json_records(rules, log, {"alert", "resolved"});
  REQUIRE(want.size() == 4);

  SUBCASE("a 400, then accepted: delivered on the script's second attempt") {
    // curl does not retry a 400; -f makes it fail; the script tries again.
    WebhookListener hook({400});
    RunResult r = pipe_to_webhook(rules, log, hook.url(), {});
    CHECK(r.exit_status == 0);
    CHECK(r.err == "");
    CHECK(joined(hook.bodies()) == joined({want[0], want[0], want[1], want[2], want[3]}));
  }

  SUBCASE("three 400s: the first record is given up, the others still go out") {
    WebhookListener hook({400, 400, 400});
    RunResult r = pipe_to_webhook(rules, log, hook.url(), {});
    CHECK(r.exit_status == 1);
    CHECK(joined(hook.bodies()) == joined({want[0], want[0], want[0], want[1], want[2], want[3]}));
    // One report for the record (curl's own words in the parentheses), then
    // the total.
    const std::vector<std::string> err = lines_of(r.err);
    REQUIRE(err.size() == 2);
    const std::string head = "webhook.sh: could not deliver the record of input line 1 after 3 attempts (";
    CHECK(err[0].rfind(head, 0) == 0);
    CHECK(err[0].find("400") != std::string::npos);
    const std::string tail = "): " + want[0];
    REQUIRE(err[0].size() > tail.size());
    CHECK(err[0].substr(err[0].size() - tail.size()) == tail);
    CHECK(err[1] == "webhook.sh: 1 record(s) not delivered");
  }

  SUBCASE("SWTHROTTLE_WEBHOOK_TRIES=1: no second attempt") {
    WebhookListener hook({400});
    RunResult r = pipe_to_webhook(rules, log, hook.url(), {{"SWTHROTTLE_WEBHOOK_TRIES", "1"}});
    CHECK(r.exit_status == 1);
    CHECK(joined(hook.bodies()) == joined(want));
    CHECK(r.err.find("after 1 attempts") != std::string::npos);
  }
}

TEST_CASE("examples/webhook.sh: usage errors exit 2 before reading anything") {
  const std::string script = example("webhook.sh");
  struct Case {
    std::vector<std::string> argv;
    EnvAdditions env;
    std::string err;
  };
  const std::string usage = "usage: webhook.sh [URL]   (or set SWTHROTTLE_WEBHOOK_URL); JSON Lines on stdin\n";
  const Case cases[] = {
      {{script}, {}, "webhook.sh: no webhook URL given\n" + usage},
      {{script, "http://127.0.0.1:9/a", "http://127.0.0.1:9/b"}, {}, "webhook.sh: too many arguments\n" + usage},
      {{script, "http://127.0.0.1:9/a"},
       {{"SWTHROTTLE_WEBHOOK_TRIES", "0"}},
       "webhook.sh: SWTHROTTLE_WEBHOOK_TRIES must be a whole number >= 1, not '0'\n" + usage},
      {{script, "http://127.0.0.1:9/a"},
       {{"SWTHROTTLE_WEBHOOK_BACKOFF", "0.5"}},
       "webhook.sh: SWTHROTTLE_WEBHOOK_BACKOFF must be whole seconds, not '0.5'\n" + usage},
  };
  for (const Case& c : cases) {
    CAPTURE(c.err);
    RunResult r =
        swthrottle::test::run_process(c.argv, "{\"type\":\"alert\"}\n", std::chrono::seconds(10), webhook_env(c.env));
    REQUIRE(!r.timed_out);
    CHECK(r.exit_status == 2);
    CHECK(r.err == c.err);
    CHECK(r.out == "");
  }
}

TEST_CASE("examples/webhook.sh: blank lines, CRLF and a last line without a newline") {
  // Records as another producer might write them: the blank line is skipped,
  // the \r is not part of the record, the line record is skipped, and the
  // last record counts though no newline ends it.
  WebhookListener hook;
  const std::string input =
      "\n"
      "{\"rule\":\"a\",\"line\":\"{\\\"type\\\":\\\"line\\\"}\",\"type\":\"alert\"}\r\n"
      "{\"type\": \"line\", \"line\": \"x\"}\n"
      "{\"type\":\"summary\",\"rule\":\"t\",\"suppressed\":3}";
  RunResult r = swthrottle::test::run_process({example("webhook.sh"), hook.url()}, input, std::chrono::seconds(20),
                                              webhook_env());
  REQUIRE(!r.timed_out);
  CHECK(r.exit_status == 0);
  CHECK(r.err == "");
  // The alert's "line" field, before its type, holds the text
  // {"type":"line"} (escaped): only the record's real type field decides.
  CHECK(joined(hook.bodies()) == joined({"{\"rule\":\"a\",\"line\":\"{\\\"type\\\":\\\"line\\\"}\",\"type\":\"alert\"}",
                                         "{\"type\":\"summary\",\"rule\":\"t\",\"suppressed\":3}"}));
}
