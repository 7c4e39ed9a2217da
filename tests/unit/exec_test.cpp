// exec actions with real child processes: /bin/sh scripts that succeed, fail,
// fail once, hang, and take their time. Every job must end exactly once:
// delivered (its record on the command's stdin), or reported.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "config/rules.h"
#include "engine/record.h"
#include "output/command_line.h"
#include "output/exec_pool.h"
#include "output/record_id.h"
#include "output/writer.h"
#include "support/rule_fixtures.h"
#include "support/temp_dir.h"
#include "support/text_files.h"
#include "util/clock.h"

using swthrottle::config::Rule;
using swthrottle::config::RuleKind;
using swthrottle::engine::Record;
using swthrottle::engine::RecordType;
using swthrottle::output::exec_job_for;
using swthrottle::output::ExecJob;
using swthrottle::output::ExecOptions;
using swthrottle::output::ExecPool;
using swthrottle::output::ExecStats;
using swthrottle::output::Format;
using swthrottle::output::split_command;
using swthrottle::test::read_file_if_exists;
using swthrottle::test::TempDir;

namespace {

using swthrottle::test::kT0;
using swthrottle::test::make_flood;
using swthrottle::test::make_ssh;

const Rule kSsh = make_ssh();
const Rule kFlood = make_flood();

Record ssh_alert(std::string key) {
  Record r;
  r.type = RecordType::Alert;
  r.time_ms = kT0;
  r.rule = &kSsh;
  r.count = 5;
  r.counts = {3, 2};
  r.message = "5 failed logins from " + key;
  r.has_message = true;
  r.key = std::move(key);
  r.line = "Failed password for root from 203.0.113.9 port 22";
  r.has_line = true;
  return r;
}

// What an action's stdin holds: the JSON record with the id webhooks get
// first ({"id":"...","type":...}).
std::string json_of(const Record& r) {
  std::string out;
  swthrottle::output::render(out, r, Format::Json);
  return "{\"id\":\"" + swthrottle::output::record_id(r) + "\"," + out.substr(1);
}

// Runs `script` with /bin/sh; inside it, $1 is `dir`.
std::vector<std::string> sh(const std::string& script, const TempDir& dir) {
  return {"/bin/sh", "-c", script, "sh", dir.path()};
}

// Collects report lines (called from the pool's worker threads).
struct Reports {
  std::mutex mu;
  std::vector<std::string> lines;
  ExecPool::Reporter fn() {
    return [this](const std::string& line) {
      std::lock_guard lk(mu);
      lines.push_back(line);
    };
  }
  std::vector<std::string> get() {
    std::lock_guard lk(mu);
    return lines;
  }
};

ExecOptions fast_options() {
  ExecOptions o;
  o.jobs = 2;
  o.timeout_ms = 20'000;  // generous: the tests that want a timeout set their own
  o.retries = 2;
  o.backoff_ms = 1;
  o.kill_grace_ms = 100;
  o.queue_capacity = 4;
  return o;
}

ExecJob job(std::vector<std::string> argv, std::string key) {
  ExecJob j = exec_job_for(ssh_alert(std::move(key)), argv);
  return j;
}

// The pid that a script wrote to `path` (echo $$ > file).
pid_t read_pid(const std::string& path) {
  return static_cast<pid_t>(std::strtol(read_file_if_exists(path).c_str(), nullptr, 10));
}

// True when `pid` is not (or no longer) a child of ours waiting to be
// reaped: waitpid on it fails with ECHILD. A zombie left behind would be
// reaped here instead, and fail the check.
bool not_our_child(pid_t pid) {
  int status = 0;
  return ::waitpid(pid, &status, WNOHANG) == -1 && errno == ECHILD;
}

// Waits (bounded, for a process that is not our child) until `pid` has
// exited. SIGKILL is delivered asynchronously, so it may take a moment.
bool exits_within_5s(pid_t pid) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));  // <sys/pidfd.h> lacks extern "C"
  if (fd < 0) return errno == ESRCH;                                   // gone already
  pollfd p{fd, POLLIN, 0};
  const int r = ::poll(&p, 1, 5000);
  ::close(fd);
  return r == 1;
}

}  // namespace

// --- split_command -------------------------------------------------------------

TEST_CASE("exec: split_command splits like a shell, without one") {
  struct Case {
    const char* cmd;
    std::vector<std::string> argv;
  };
  const std::vector<Case> cases = {
      {"notify", {"notify"}},
      {"  curl  -fsS\t--data-binary @-  http://127.0.0.1:8080/hook?a=1  ",
       {"curl", "-fsS", "--data-binary", "@-", "http://127.0.0.1:8080/hook?a=1"}},
      {"sh -c 'echo \"$SWTHROTTLE_KEY\" | mail -s alert root'",
       {"sh", "-c", "echo \"$SWTHROTTLE_KEY\" | mail -s alert root"}},
      {R"(sh -c "printf '%s\n' \"\$X\" \\ \`")", {"sh", "-c", R"(printf '%s\n' "$X" \ `)"}},
      {R"(a "b\c" 'd\e')", {"a", R"(b\c)", R"(d\e)"}},         // backslash literal unless it escapes
      {R"(a b\ c d\|e \$f)", {"a", "b c", "d|e", "$f"}},       // outside quotes it escapes anything
      {"a '' \"\" b", {"a", "", "", "b"}},                     // empty quoted words are words
      {"a'b'\"c\"d", {"abcd"}},                                // quotes join with what touches them
      {"say \"it's\" 'a \"b\"'", {"say", "it's", "a \"b\""}},  // each quote is literal in the other
      {"a \\\nb", {"a", "b"}},                                 // backslash-newline continues the line
      {"a \"x\\\ny\"", {"a", "xy"}},
      {"x *.log ~/y #z [a]", {"x", "*.log", "~/y", "#z", "[a]"}},  // no globbing, no comments
      {"ünï \xff", {"ünï", "\xff"}},                               // bytes pass through
  };
  for (const Case& c : cases) {
    CAPTURE(c.cmd);
    const auto r = split_command(c.cmd);
    REQUIRE(r.ok());
    CHECK(*r == c.argv);
  }
}

TEST_CASE("exec: split_command errors say what and where") {
  struct Case {
    const char* cmd;
    int col;
    const char* what;
  };
  const std::vector<Case> cases = {
      {"", 1, "empty command"},
      {" \t\n", 1, "empty command"},
      {"echo 'abc", 6, "unterminated single quote (opened at column 6)"},
      {"echo \"a\\\"", 6, "unterminated double quote (opened at column 6)"},
      {"echo a\\", 7, "backslash at the end of the command"},
      {"cat > /tmp/x", 5, "\">\" at column 5 needs a shell: put it in single quotes, or use sh -c '...'"},
      {"a|b", 2, "\"|\" at column 2 needs a shell: put it in single quotes, or use sh -c '...'"},
      {"notify $SWTHROTTLE_KEY", 8, "\"$\" at column 8 needs a shell: put it in single quotes, or use sh -c '...'"},
      {"curl http://h/?a=1&b=2", 19, "\"&\" at column 19 needs a shell: put it in single quotes, or use sh -c '...'"},
      {"a; b", 2, "\";\" at column 2 needs a shell: put it in single quotes, or use sh -c '...'"},
      {"echo `id`", 6, "\"`\" at column 6 needs a shell: put it in single quotes, or use sh -c '...'"},
      {"x (y)", 3, "\"(\" at column 3 needs a shell: put it in single quotes, or use sh -c '...'"},
      {"notify \"$SWTHROTTLE_KEY\"", 9, "\"$\" at column 9 needs a shell: put it in single quotes, or use sh -c '...'"},
      {"a \"b`c\"", 5, "\"`\" at column 5 needs a shell: put it in single quotes, or use sh -c '...'"},
      {"x <y", 3, "\"<\" at column 3 needs a shell: put it in single quotes, or use sh -c '...'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.cmd);
    const auto r = split_command(c.cmd);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().what == c.what);
    CHECK(r.error().col == c.col);
    CHECK(r.error().file.empty());
  }
}

// --- exec_job_for -------------------------------------------------------------------

TEST_CASE("exec: exec_job_for puts the JSON record on stdin and SWTHROTTLE_* in the environment") {
  using Env = std::vector<std::pair<std::string, std::string>>;
  const std::vector<std::string> argv = {"notify", "--urgent"};

  SUBCASE("alert with a message") {
    const Record r = ssh_alert("203.0.113.9");
    const ExecJob j = exec_job_for(r, argv);
    CHECK(j.argv == argv);
    CHECK(j.stdin_data == json_of(r));
    CHECK(j.stdin_data.back() == '\n');
    CHECK(j.env == Env{{"SWTHROTTLE_TYPE", "alert"},
                       {"SWTHROTTLE_RULE", "ssh-bruteforce"},
                       {"SWTHROTTLE_KEY", "203.0.113.9"},
                       {"SWTHROTTLE_COUNT", "5"},
                       {"SWTHROTTLE_MESSAGE", "5 failed logins from 203.0.113.9"}});
    CHECK(j.label == "alert ssh-bruteforce key=203.0.113.9");
  }
  SUBCASE("alert without a message: the triggering line, as in the text format") {
    Record r = ssh_alert("");
    r.has_message = false;
    r.message.clear();
    const ExecJob j = exec_job_for(r, argv);
    CHECK(j.env == Env{{"SWTHROTTLE_TYPE", "alert"},
                       {"SWTHROTTLE_RULE", "ssh-bruteforce"},
                       {"SWTHROTTLE_KEY", ""},
                       {"SWTHROTTLE_COUNT", "5"},
                       {"SWTHROTTLE_MESSAGE", "Failed password for root from 203.0.113.9 port 22"}});
    CHECK(j.label == "alert ssh-bruteforce");
  }
  SUBCASE("resolved without a message has an empty MESSAGE") {
    Record r = ssh_alert("k");
    r.type = RecordType::Resolved;
    r.count = 2;
    r.has_message = false;
    r.message.clear();
    const ExecJob j = exec_job_for(r, argv);
    CHECK(j.stdin_data == json_of(r));
    CHECK(j.env == Env{{"SWTHROTTLE_TYPE", "resolved"},
                       {"SWTHROTTLE_RULE", "ssh-bruteforce"},
                       {"SWTHROTTLE_KEY", "k"},
                       {"SWTHROTTLE_COUNT", "2"},
                       {"SWTHROTTLE_MESSAGE", ""}});
    CHECK(j.label == "resolved ssh-bruteforce key=k");
  }
  SUBCASE("summary: COUNT is the number suppressed") {
    Record r;
    r.type = RecordType::Summary;
    r.time_ms = kT0;
    r.rule = &kFlood;
    r.key = "a\nb";
    r.suppressed = 42;
    r.first_ms = kT0 - 5000;
    r.last_ms = kT0 - 1;
    const ExecJob j = exec_job_for(r, argv);
    CHECK(j.stdin_data == json_of(r));
    CHECK(j.env == Env{{"SWTHROTTLE_TYPE", "summary"},
                       {"SWTHROTTLE_RULE", "flood"},
                       {"SWTHROTTLE_KEY", "a\nb"},
                       {"SWTHROTTLE_COUNT", "42"},
                       {"SWTHROTTLE_MESSAGE", ""}});
    CHECK(j.label == "summary flood key=a\\nb");  // a label is one line

    // ... and, like a text record, carries no control character to stderr.
    r.key = "\x1b[31m\\\x7f";
    CHECK(exec_job_for(r, argv).label == R"(summary flood key=\u001b[31m\\\u007f)");
    CHECK(exec_job_for(r, argv).env[2].second == r.key);
  }
  SUBCASE("line record without a rule") {
    Record r;
    r.type = RecordType::Line;
    r.time_ms = kT0;
    r.line = "hello";
    r.has_line = true;
    const ExecJob j = exec_job_for(r, argv);
    CHECK(j.stdin_data == json_of(r));
    CHECK(j.env == Env{{"SWTHROTTLE_TYPE", "line"},
                       {"SWTHROTTLE_RULE", ""},
                       {"SWTHROTTLE_KEY", ""},
                       {"SWTHROTTLE_COUNT", "0"},
                       {"SWTHROTTLE_MESSAGE", ""}});
    CHECK(j.label == "line");
  }
}

// --- real children --------------------------------------------------------------

TEST_CASE("exec: each job runs once with its record on stdin and its variables set") {
  TempDir dir;
  Reports reports;
  const auto argv =
      sh("cat >> \"$1/in.$SWTHROTTLE_KEY\"; "
         "printf '%s|%s|%s|%s|%s\\n' \"$SWTHROTTLE_TYPE\" \"$SWTHROTTLE_RULE\" \"$SWTHROTTLE_KEY\" "
         "\"$SWTHROTTLE_COUNT\" \"$SWTHROTTLE_MESSAGE\" >> \"$1/env.$SWTHROTTLE_KEY\"",
         dir);
  std::vector<Record> records;
  for (int i = 0; i < 8; ++i) records.push_back(ssh_alert("k" + std::to_string(i)));
  {
    ExecPool pool(fast_options(), reports.fn());
    for (const Record& r : records) pool.submit(exec_job_for(r, argv));
    pool.drain();
    const ExecStats s = pool.stats();
    CHECK(s.submitted == 8);
    CHECK(s.started == 8);
    CHECK(s.succeeded == 8);
    CHECK(s.failed_attempts == 0);
    CHECK(s.retried == 0);
    CHECK(s.gave_up == 0);
  }
  for (const Record& r : records) {
    CAPTURE(r.key);
    CHECK(read_file_if_exists(dir.file("in." + r.key)) == json_of(r));  // appended: twice would show
    CHECK(read_file_if_exists(dir.file("env." + r.key)) == "alert|ssh-bruteforce|" + r.key + "|5|" + r.message + "\n");
  }
  CHECK(reports.get().empty());
}

TEST_CASE("exec: a command that always fails is tried 1 + retries times, then reported once") {
  TempDir dir;
  Reports reports;
  ExecOptions o = fast_options();
  const auto argv = sh("echo x >> \"$1/attempts\"; exit 1", dir);
  {
    ExecPool pool(o, reports.fn());
    pool.submit(job(argv, "k"));
    pool.drain();
    const ExecStats s = pool.stats();
    CHECK(s.started == 3);
    CHECK(s.succeeded == 0);
    CHECK(s.failed_attempts == 3);
    CHECK(s.retried == 2);
    CHECK(s.timed_out == 0);
    CHECK(s.gave_up == 1);
  }
  CHECK(read_file_if_exists(dir.file("attempts")) == "x\nx\nx\n");
  CHECK(reports.get() == std::vector<std::string>{
                             "swthrottle: exec: alert ssh-bruteforce key=k: gave up after 3 attempts: exit status 1"});
}

TEST_CASE("exec: retries = 0 gives up after one attempt") {
  TempDir dir;
  Reports reports;
  ExecOptions o = fast_options();
  o.retries = 0;
  {
    ExecPool pool(o, reports.fn());
    pool.submit(job(sh("exit 3", dir), "k"));
    pool.submit(job(sh("kill -USR1 $$", dir), "s"));
    pool.drain();
    const ExecStats s = pool.stats();
    CHECK(s.started == 2);
    CHECK(s.failed_attempts == 2);
    CHECK(s.retried == 0);
    CHECK(s.gave_up == 2);
  }
  auto got = reports.get();
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<std::string>{
                   "swthrottle: exec: alert ssh-bruteforce key=k: gave up after 1 attempt: exit status 3",
                   "swthrottle: exec: alert ssh-bruteforce key=s: gave up after 1 attempt: killed by SIGUSR1",
               });
}

TEST_CASE("exec: a command that fails once is retried and delivers once") {
  TempDir dir;
  Reports reports;
  const auto argv =
      sh("if [ -e \"$1/marker\" ]; then cat >> \"$1/out\"; "
         "else touch \"$1/marker\"; cat > /dev/null; exit 1; fi",
         dir);
  const Record r = ssh_alert("k");
  {
    ExecPool pool(fast_options(), reports.fn());
    pool.submit(exec_job_for(r, argv));
    pool.drain();
    const ExecStats s = pool.stats();
    CHECK(s.started == 2);
    CHECK(s.succeeded == 1);
    CHECK(s.failed_attempts == 1);
    CHECK(s.retried == 1);
    CHECK(s.gave_up == 0);
  }
  CHECK(read_file_if_exists(dir.file("out")) == json_of(r));
  CHECK(reports.get().empty());
}

TEST_CASE("exec: a command that is not found is reported at once, not retried") {
  Reports reports;
  {
    ExecPool pool(fast_options(), reports.fn());
    pool.submit(job({"swthrottle-no-such-command-h10"}, "k"));
    pool.submit(job({}, "e"));
    pool.drain();
    const ExecStats s = pool.stats();
    CHECK(s.started == 0);
    CHECK(s.failed_attempts == 1);
    CHECK(s.retried == 0);
    CHECK(s.gave_up == 2);
  }
  auto got = reports.get();
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<std::string>{
                   "swthrottle: exec: alert ssh-bruteforce key=e: empty command",
                   "swthrottle: exec: alert ssh-bruteforce key=k: cannot run \"swthrottle-no-such-command-h10\": "
                   "No such file or directory",
               });
}

TEST_CASE("exec: a command that hangs is killed at the timeout, reported and reaped") {
  TempDir dir;
  Reports reports;
  ExecOptions o = fast_options();
  o.timeout_ms = 200;
  o.retries = 0;

  SUBCASE("it goes on SIGTERM") {
    {
      ExecPool pool(o, reports.fn());
      pool.submit(job(sh("echo $$ > \"$1/pid\"; exec sleep 1000", dir), "k"));
      pool.drain();
      const ExecStats s = pool.stats();
      CHECK(s.started == 1);
      CHECK(s.timed_out == 1);
      CHECK(s.failed_attempts == 1);
      CHECK(s.gave_up == 1);
    }
    CHECK(reports.get() ==
          std::vector<std::string>{"swthrottle: exec: alert ssh-bruteforce key=k: gave up after 1 attempt: "
                                   "timed out after 200ms"});
    const pid_t pid = read_pid(dir.file("pid"));
    REQUIRE(pid > 0);
    CHECK(not_our_child(pid));
  }
  SUBCASE("it ignores SIGTERM and started a child of its own: SIGKILL for the whole group") {
    {
      ExecPool pool(o, reports.fn());
      pool.submit(
          job(sh("trap '' TERM; echo $$ > \"$1/pid\"; sleep 1000 & echo $! > \"$1/grandchild\"; wait", dir), "k"));
      pool.drain();
      CHECK(pool.stats().timed_out == 1);
    }
    CHECK(reports.get().size() == 1);
    const pid_t pid = read_pid(dir.file("pid"));
    const pid_t grandchild = read_pid(dir.file("grandchild"));
    REQUIRE(pid > 0);
    REQUIRE(grandchild > 0);
    CHECK(not_our_child(pid));
    const bool gone = exits_within_5s(grandchild);
    CHECK(gone);
    if (!gone) ::kill(grandchild, SIGKILL);  // do not leave it behind when the check fails
  }
  SUBCASE("a timed-out attempt is retried like any failure") {
    o.retries = 1;
    {
      ExecPool pool(o, reports.fn());
      pool.submit(job(sh("echo x >> \"$1/attempts\"; exec sleep 1000", dir), "k"));
      pool.drain();
      const ExecStats s = pool.stats();
      CHECK(s.started == 2);
      CHECK(s.timed_out == 2);
      CHECK(s.retried == 1);
      CHECK(s.gave_up == 1);
    }
    CHECK(read_file_if_exists(dir.file("attempts")) == "x\nx\n");
    CHECK(reports.get() ==
          std::vector<std::string>{"swthrottle: exec: alert ssh-bruteforce key=k: gave up after 2 attempts: "
                                   "timed out after 200ms"});
  }
}

// A clock that jumps three hours each time it is read, so that a deadline
// measured on it has passed at the next look, whatever the real time.
class JumpingClock final : public swthrottle::Clock {
 public:
  int64_t steady_ms() const override { return t_.fetch_add(3 * 3'600'000); }
  int64_t wall_ms() const override { return 0; }

 protected:
  void wait_step(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, int64_t) const override {
    cv.wait_for(lock, std::chrono::milliseconds(1));
  }

 private:
  mutable std::atomic<int64_t> t_{0};
};

TEST_CASE("exec: the timeout is measured on the pool's clock") {
  TempDir dir;
  Reports reports;
  ExecOptions o = fast_options();
  o.timeout_ms = 2 * 3'600'000;  // on the real clock, two hours: the test would hang
  o.retries = 0;
  const JumpingClock clock;
  {
    ExecPool pool(o, reports.fn(), clock);
    pool.submit(job(sh("exec sleep 1000", dir), "k"));
    pool.drain();
    CHECK(pool.stats().timed_out == 1);
  }
  CHECK(reports.get() ==
        std::vector<std::string>{"swthrottle: exec: alert ssh-bruteforce key=k: gave up after 1 attempt: "
                                 "timed out after 2h"});
}

TEST_CASE("exec: never more than `jobs` commands at once") {
  TempDir dir;
  Reports reports;
  ExecOptions o = fast_options();
  o.jobs = 2;
  {
    ExecPool pool(o, reports.fn());
    for (int i = 0; i < 6; ++i) {
      pool.submit(job(sh("echo + >> \"$1/log\"; sleep 0.2; echo - >> \"$1/log\"", dir), "k" + std::to_string(i)));
    }
    pool.drain();
    CHECK(pool.stats().succeeded == 6);
  }
  // Each child logs "+" after it started and "-" before it ends, so the
  // log's overlap can only understate the real one.
  const std::string log = read_file_if_exists(dir.file("log"));
  int running = 0;
  int most = 0;
  int started = 0;
  for (char c : log) {
    if (c == '+') {
      ++started;
      most = std::max(most, ++running);
    }
    if (c == '-') --running;
  }
  CHECK(started == 6);
  CHECK(running == 0);
  CHECK(most <= 2);
  CHECK(reports.get().empty());
}

TEST_CASE("exec: `jobs` commands do run at once") {
  // Each waits until both have started: run one at a time, the first would
  // wait in vain and time out.
  TempDir dir;
  Reports reports;
  ExecOptions o = fast_options();
  o.jobs = 2;
  o.retries = 0;
  o.timeout_ms = 10'000;
  {
    ExecPool pool(o, reports.fn());
    for (int i = 0; i < 2; ++i) {
      pool.submit(job(sh("touch \"$1/here.$SWTHROTTLE_KEY\"; "
                         "until [ -e \"$1/here.k0\" ] && [ -e \"$1/here.k1\" ]; do sleep 0.01; done",
                         dir),
                      "k" + std::to_string(i)));
    }
    pool.drain();
    CHECK(pool.stats().succeeded == 2);
  }
  CHECK(reports.get().empty());
}

TEST_CASE("exec: a full queue blocks submit() until a slot frees, nothing is dropped") {
  TempDir dir;
  Reports reports;
  ExecOptions o = fast_options();
  o.jobs = 1;
  o.queue_capacity = 1;
  constexpr int kJobs = 6;
  std::vector<uint64_t> done_when_returned;
  {
    ExecPool pool(o, reports.fn());
    for (int i = 0; i < kJobs; ++i) {
      pool.submit(job(sh("echo \"$SWTHROTTLE_KEY\" >> \"$1/log\"", dir), "k" + std::to_string(i)));
      done_when_returned.push_back(pool.stats().succeeded);
    }
    pool.drain();
    CHECK(pool.stats().succeeded == kJobs);
  }
  // When submit(job k) returns (k from 1), the queue holds at most 1 job, so
  // jobs 1..k-1 were taken by the one worker, which finishes a job before it
  // takes the next: at least k-2 are done.
  for (int k = 1; k <= kJobs; ++k) {
    CAPTURE(k);
    CHECK(done_when_returned[static_cast<std::size_t>(k - 1)] >= static_cast<uint64_t>(std::max(k - 2, 0)));
  }
  CHECK(read_file_if_exists(dir.file("log")) == "k0\nk1\nk2\nk3\nk4\nk5\n");  // in order, each once
  CHECK(reports.get().empty());
}

TEST_CASE("exec: every record is delivered once or reported, under a mix of outcomes") {
  TempDir dir;
  Reports reports;
  ExecOptions o = fast_options();
  o.jobs = 3;
  o.queue_capacity = 2;
  o.retries = 1;
  // Keys ending in 0, 3, 6 or 9 fail every time; the others deliver.
  const auto argv = sh("case \"$SWTHROTTLE_KEY\" in *[0369]) exit 1;; esac; cat >> \"$1/out.$SWTHROTTLE_KEY\"", dir);
  auto fails = [](const std::string& key) { return std::string("0369").find(key.back()) != std::string::npos; };
  std::vector<Record> records;
  for (int i = 0; i < 14; ++i) records.push_back(ssh_alert("k" + std::to_string(i)));
  std::size_t expected_failures = 0;
  {
    ExecPool pool(o, reports.fn());
    for (const Record& r : records) pool.submit(exec_job_for(r, argv));
    pool.drain();
    for (const Record& r : records) expected_failures += fails(r.key) ? 1 : 0;
    const ExecStats s = pool.stats();
    CHECK(s.succeeded == records.size() - expected_failures);
    CHECK(s.gave_up == expected_failures);
    CHECK(s.failed_attempts == 2 * expected_failures);
    CHECK(s.retried == expected_failures);
  }
  const std::vector<std::string> got = reports.get();
  CHECK(got.size() == expected_failures);
  for (const Record& r : records) {
    CAPTURE(r.key);
    const std::string report =
        "swthrottle: exec: alert ssh-bruteforce key=" + r.key + ": gave up after 2 attempts: exit status 1";
    const auto reported = std::count(got.begin(), got.end(), report);
    if (fails(r.key)) {
      CHECK(reported == 1);
      CHECK(read_file_if_exists(dir.file("out." + r.key)).empty());
    } else {
      CHECK(reported == 0);
      CHECK(read_file_if_exists(dir.file("out." + r.key)) == json_of(r));
    }
  }
}

TEST_CASE("exec: a command that does not read its stdin neither fails nor kills us with SIGPIPE") {
  TempDir dir;
  Reports reports;
  // SIGPIPE at its default action: if a write raised it at a thread that did
  // not block it, this test binary would die.
  const auto old_handler = ::signal(SIGPIPE, SIG_DFL);
  {
    ExecPool pool(fast_options(), reports.fn());
    for (const char* script : {"exit 0", "head -c 10 > /dev/null", "exec 0<&-; sleep 0.05"}) {
      ExecJob j = job(sh(script, dir), script);
      j.stdin_data.assign(1 << 20, 'x');  // far more than a pipe holds
      pool.submit(std::move(j));
    }
    pool.drain();
    const ExecStats s = pool.stats();
    CHECK(s.succeeded == 3);
    CHECK(s.failed_attempts == 0);
  }
  ::signal(SIGPIPE, old_handler);
  CHECK(reports.get().empty());
}

TEST_CASE("exec: a child's stdout goes to our stderr, never to our stdout") {
  TempDir dir;
  Reports reports;
  std::fflush(stdout);
  std::fflush(stderr);
  const int saved_out = ::dup(STDOUT_FILENO);
  const int saved_err = ::dup(STDERR_FILENO);
  const int out = ::open(dir.file("our-stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int err = ::open(dir.file("our-stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(saved_out >= 0);
  REQUIRE(saved_err >= 0);
  REQUIRE(out >= 0);
  REQUIRE(err >= 0);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  ExecStats s;
  {
    ExecPool pool(fast_options(), reports.fn());
    pool.submit(job(sh("echo to-stdout; echo to-stderr >&2", dir), "k"));
    pool.drain();
    s = pool.stats();
  }
  ::dup2(saved_out, STDOUT_FILENO);
  ::dup2(saved_err, STDERR_FILENO);
  for (int fd : {saved_out, saved_err, out, err}) ::close(fd);
  CHECK(s.succeeded == 1);
  CHECK(read_file_if_exists(dir.file("our-stdout")).empty());
  CHECK(read_file_if_exists(dir.file("our-stderr")) == "to-stdout\nto-stderr\n");
}

TEST_CASE("exec: the child's environment and signal state") {
  TempDir dir;
  Reports reports;
  // A stale SWTHROTTLE_TYPE in our environment is replaced, not duplicated;
  // other variables pass through.
  REQUIRE(::setenv("SWTHROTTLE_TYPE", "stale", 1) == 0);
  REQUIRE(::setenv("SWTHROTTLE_H10_PARENT", "yes", 1) == 0);
  // A blocked SIGINT and an ignored SIGPIPE here must not reach the child.
  sigset_t block;
  sigset_t old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  pthread_sigmask(SIG_BLOCK, &block, &old_mask);
  const auto old_handler = ::signal(SIGPIPE, SIG_IGN);
  {
    ExecPool pool(fast_options(), reports.fn());
    ::unsetenv("SWTHROTTLE_H10_PARENT");  // the pool took its snapshot already
    // /proc/PID/environ is the environment as execve() got it, duplicates
    // and all (a shell would fold them). `exec` first thing, so that the
    // shell cannot have touched the signal mask yet (dash blocks signals
    // around its own fork and wait).
    pool.submit(job(sh("{ tr '\\0' '\\n' < /proc/$$/environ | grep -c '^SWTHROTTLE_TYPE='; "
                       "echo \"$SWTHROTTLE_TYPE $SWTHROTTLE_H10_PARENT\"; } > \"$1/env\"",
                       dir),
                    "k"));
    pool.submit(job(sh("exec grep -E '^(SigBlk|SigIgn):' /proc/self/status > \"$1/sig\"", dir), "s"));
    pool.drain();
    CHECK(pool.stats().succeeded == 2);
  }
  ::signal(SIGPIPE, old_handler);
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::unsetenv("SWTHROTTLE_TYPE");

  CHECK(read_file_if_exists(dir.file("env")) == "1\nalert yes\n");
  std::istringstream sig(read_file_if_exists(dir.file("sig")));
  std::string blk, ign;
  std::getline(sig, blk);
  std::getline(sig, ign);
  CHECK(blk == "SigBlk:\t0000000000000000");
  REQUIRE(ign.rfind("SigIgn:\t", 0) == 0);
  const unsigned long long ignored = std::strtoull(ign.c_str() + 8, nullptr, 16);
  CHECK((ignored & (1ULL << (SIGPIPE - 1))) == 0);
  CHECK((ignored & (1ULL << (SIGXFSZ - 1))) == 0);
}

TEST_CASE("exec: the destructor waits for queued and running commands") {
  TempDir dir;
  {
    ExecOptions o = fast_options();
    o.jobs = 1;
    ExecPool pool(o);
    for (int i = 0; i < 3; ++i)
      pool.submit(job(sh("sleep 0.05; echo \"$SWTHROTTLE_KEY\" >> \"$1/log\"", dir), "k" + std::to_string(i)));
  }
  CHECK(read_file_if_exists(dir.file("log")) == "k0\nk1\nk2\n");
}

// --- stop, the bounded queue, threads (issue 18) ---------------------------------

namespace {

// Waits (bounded) until the file at `path` has `n` lines.
bool file_has_lines(const std::string& path, std::size_t n) {
  for (int i = 0; i < 1000; ++i) {
    const std::string s = read_file_if_exists(path);
    if (static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')) >= n) return true;
    ::poll(nullptr, 0, 10);
  }
  return false;
}

}  // namespace

TEST_CASE("exec: stop() kills the running command, ends the waiting jobs as not run, and drain() returns") {
  TempDir dir;
  Reports reports;
  ExecOptions o = fast_options();
  o.jobs = 1;
  o.queue_capacity = 10;
  o.timeout_ms = 3'600'000;  // an hour: only the stop can end the command in time
  o.kill_grace_ms = 100;
  ExecPool pool(o, reports.fn());
  // The command ignores SIGTERM: the grace's SIGKILL ends it.
  pool.submit(job(sh("trap '' TERM; echo $$ >> \"$1/pids\"; exec sleep 1000", dir), "k0"));
  pool.submit(job(sh("echo $$ >> \"$1/pids\"", dir), "k1"));
  pool.submit(job(sh("echo $$ >> \"$1/pids\"", dir), "k2"));
  REQUIRE(file_has_lines(dir.file("pids"), 1));
  pool.stop("stopped by SIGTERM");
  pool.drain();
  pool.submit(job(sh("echo $$ >> \"$1/pids\"", dir), "k3"));  // after the stop: not run either
  pool.flush_reports();
  const ExecStats s = pool.stats();
  CHECK(s.started == 1);
  CHECK(s.succeeded == 0);
  CHECK(s.not_run == 4);
  CHECK(s.gave_up == 0);
  CHECK(s.retried == 0);  // a killed command is not retried
  CHECK(s.queued == 0);
  const std::string pids = read_file_if_exists(dir.file("pids"));
  CHECK(std::count(pids.begin(), pids.end(), '\n') == 1);  // k1, k2, k3 never started
  const pid_t pid = read_pid(dir.file("pids"));
  CHECK(not_our_child(pid));  // reaped
  std::vector<std::string> got = reports.get();
  std::sort(got.begin(), got.end());  // the killed command's line comes from its worker
  CHECK(got ==
        std::vector<std::string>{
            "swthrottle: exec: alert ssh-bruteforce key=k0: not run: stopped by SIGTERM (its command was killed)",
            "swthrottle: exec: alert ssh-bruteforce key=k1: not run: stopped by SIGTERM",
            "swthrottle: exec: alert ssh-bruteforce key=k2: not run: stopped by SIGTERM",
            "swthrottle: exec: alert ssh-bruteforce key=k3: not run: stopped by SIGTERM",
        });
}

TEST_CASE("exec: stop() during a backoff ends the job at once, without the retry") {
  TempDir dir;
  Reports reports;
  ExecOptions o = fast_options();
  o.jobs = 1;
  o.retries = 5;
  o.backoff_ms = 3'600'000;  // an hour: only the stop can end the wait in time
  ExecPool pool(o, reports.fn());
  pool.submit(job(sh("echo x >> \"$1/attempts\"; exit 1", dir), "k"));
  REQUIRE(file_has_lines(dir.file("attempts"), 1));
  // The attempt's end is counted just after the file is written: wait for it.
  for (int i = 0; i < 1000 && pool.stats().failed_attempts == 0; ++i) ::poll(nullptr, 0, 10);
  pool.stop("stopped by SIGINT");
  pool.drain();
  CHECK(read_file_if_exists(dir.file("attempts")) == "x\n");
  const ExecStats s = pool.stats();
  CHECK(s.not_run == 1);
  CHECK(s.retried == 0);
  CHECK(reports.get() == std::vector<std::string>{"swthrottle: exec: alert ssh-bruteforce key=k: not run: stopped by "
                                                  "SIGINT (after 1 failed attempt: exit status 1)"});
}

TEST_CASE("exec: past reported_not_run, the jobs not run are one count") {
  TempDir dir;
  Reports reports;
  ExecOptions o = fast_options();
  o.jobs = 1;
  o.queue_capacity = 100;
  o.timeout_ms = 3'600'000;
  o.reported_not_run = 3;
  ExecPool pool(o, reports.fn());
  pool.submit(job(sh("echo $$ >> \"$1/pids\"; exec sleep 1000", dir), "k0"));
  REQUIRE(file_has_lines(dir.file("pids"), 1));
  for (int i = 1; i <= 9; ++i) pool.submit(job(sh("true", dir), "k" + std::to_string(i)));
  pool.stop("stopped by SIGTERM");
  pool.drain();
  pool.flush_reports();
  pool.flush_reports();  // once
  CHECK(pool.stats().not_run == 10);
  CHECK(reports.get() == std::vector<std::string>{
                             "swthrottle: exec: alert ssh-bruteforce key=k1: not run: stopped by SIGTERM",
                             "swthrottle: exec: alert ssh-bruteforce key=k2: not run: stopped by SIGTERM",
                             "swthrottle: exec: alert ssh-bruteforce key=k3: not run: stopped by SIGTERM",
                             "swthrottle: exec: 7 more actions not run: stopped by SIGTERM",
                         });
}

TEST_CASE(
    "exec: Full::Drop: submit() never waits, past the bound jobs are dropped and counted, one report an episode") {
  TempDir dir;
  Reports reports;
  ExecOptions o = fast_options();
  o.jobs = 1;
  o.queue_capacity = 4;
  o.full = ExecOptions::Full::Drop;
  ExecPool pool(o, reports.fn());
  // The first job holds the one slot until the file `go` exists.
  pool.submit(job(
      sh("echo $$ >> \"$1/pids\"; while [ ! -e \"$1/go\" ]; do sleep 0.01; done; echo k0 >> \"$1/log\"", dir), "k0"));
  REQUIRE(file_has_lines(dir.file("pids"), 1));
  for (int i = 1; i <= 10; ++i)
    pool.submit(job(sh("echo \"$SWTHROTTLE_KEY\" >> \"$1/log\"", dir), "k" + std::to_string(i)));
  // Returned at once, with the slot still taken: 4 wait, 6 were dropped.
  ExecStats s = pool.stats();
  CHECK(s.queued == 4);
  CHECK(s.dropped == 6);
  CHECK(s.submitted == 5);
  CHECK(reports.get() == std::vector<std::string>{
                             "swthrottle: exec: the queue is full (4 actions, " + std::to_string(s.queued_bytes) +
                                 " bytes waiting): new actions are dropped, and counted, until it is half empty; the "
                                 "first: alert ssh-bruteforce key=k5",
                         });
  dir.write("go", "");
  pool.drain();
  pool.flush_reports();
  s = pool.stats();
  CHECK(s.succeeded == 5);
  CHECK(s.queued == 0);
  CHECK(s.queued_bytes == 0);
  CHECK(read_file_if_exists(dir.file("log")) == "k0\nk1\nk2\nk3\nk4\n");
  const std::vector<std::string> got = reports.get();
  REQUIRE(got.size() == 2);
  CHECK(got[1] == "swthrottle: exec: 6 actions dropped while the queue was full");
}

TEST_CASE("exec: the queue's byte bound: a job over it waits only in an empty queue") {
  TempDir dir;
  Reports reports;
  ExecOptions o = fast_options();
  o.jobs = 1;
  o.queue_capacity = 100;
  o.queue_bytes = 10'000;
  o.full = ExecOptions::Full::Drop;
  ExecPool pool(o, reports.fn());
  pool.submit(job(sh("echo $$ >> \"$1/pids\"; while [ ! -e \"$1/go\" ]; do sleep 0.01; done", dir), "k0"));
  REQUIRE(file_has_lines(dir.file("pids"), 1));
  ExecJob big = job(sh("echo big >> \"$1/log\"", dir), "big");
  big.stdin_data.assign(20'000, 'x');  // more than the bound: taken, the queue being empty
  pool.submit(big);
  pool.submit(job(sh("true", dir), "small"));  // no room beside it
  ExecStats s = pool.stats();
  CHECK(s.queued == 1);
  CHECK(s.queued_bytes > 20'000);
  CHECK(s.dropped == 1);
  dir.write("go", "");
  pool.drain();
  CHECK(read_file_if_exists(dir.file("log")) == "big\n");
}

TEST_CASE("exec: a worker thread that cannot be started: the pool runs with those it got, and says so") {
  TempDir dir;
  Reports reports;
  ExecOptions o = fast_options();
  o.jobs = 5;
  o.fail_thread_at = 2;
  {
    ExecPool pool(o, reports.fn());
    CHECK(pool.workers() == 2);
    for (int i = 0; i < 4; ++i)
      pool.submit(job(sh("echo \"$SWTHROTTLE_KEY\" >> \"$1/log\"", dir), "k" + std::to_string(i)));
    pool.drain();
    CHECK(pool.stats().succeeded == 4);
  }
  CHECK(reports.get() == std::vector<std::string>{"swthrottle: exec: started only 2 of 5 worker threads (Resource "
                                                  "temporarily unavailable): at most 2 commands run at once"});
  o.fail_thread_at = 0;
  ExecPool none(o, reports.fn());
  CHECK(none.workers() == 0);
  CHECK(none.thread_error() == "Resource temporarily unavailable");
}
