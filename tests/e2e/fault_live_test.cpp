// Fault injection on a live run (issue 18, part 2): signal storms, SIGTERM in
// the middle of a reload, the --state directory removed mid-run, and
// followed inputs that are deleted, replaced by a symlink, by a directory
// (what "unreadable" is for root, whom chmod does not stop) or by a FIFO.
// Every case: no crash, no hang, the error said, and every line that must
// pass written once.
//
// As in live_test.cpp, nothing sleeps for a fixed time except the storm's
// pacing: every wait ends when what it waits for has happened.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/http_receiver.h"
#include "support/limited_command.h"
#include "support/notify_socket.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::EnvAdditions;
using swthrottle::test::HttpReceiver;
using swthrottle::test::limited;
using swthrottle::test::Limits;
using swthrottle::test::NotifySocket;
using swthrottle::test::open_file_offset;
using swthrottle::test::poll_until;
using swthrottle::test::Process;
using swthrottle::test::read_file;
using swthrottle::test::Reply;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;
using namespace std::chrono_literals;

const std::string kBinary = SWTHROTTLE_BINARY;

Process spawn(std::vector<std::string> args, const EnvAdditions& env = {}) {
  args.insert(args.begin(), kBinary);
  return Process::spawn(args, env);
}

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t at = 0, nl; (nl = s.find('\n', at)) != std::string::npos; at = nl + 1)
    out.push_back(s.substr(at, nl - at));
  return out;
}

// Every stderr line is one of `allowed` (each a prefix).
void check_only(const std::string& err, const std::vector<std::string>& allowed) {
  for (const std::string& line : lines_of(err)) {
    CAPTURE(line);
    bool known = false;
    for (const auto& a : allowed) known = known || line.rfind(a, 0) == 0;
    CHECK(known);
  }
}

void check_exit_0(const RunResult& r) {
  INFO("signal " << r.signal << ", timed out " << r.timed_out << ", stderr: " << r.err);
  CHECK(r.exit_status == 0);
}

// Writes `text` to `path` through a temporary and a rename, as configuration
// tools do: a reload reads the old file or the new, whole.
void replace_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".new";
  std::ofstream(tmp, std::ios::binary | std::ios::trunc) << text;
  REQUIRE(std::rename(tmp.c_str(), path.c_str()) == 0);
}

// A throttle rule that passes every line containing "x" and never limits:
// a line record's "rule" says which rules file version decided it.
std::string passing_rules(const std::string& name) {
  return "[[rule]]\nname = \"" + name + "\"\nkind = \"throttle\"\nthreshold = \"1000000 per 1h\"\n" +
         "  [[rule.event]]\n  name = \"x\"\n  match = 'x'\n";
}

// The same, broken at line 4, column 14 (a threshold that is no "Y per X").
std::string broken_rules(const std::string& name) {
  return "[[rule]]\nname = \"" + name + "\"\nkind = \"throttle\"\nthreshold = \"oops\"\n" +
         "  [[rule.event]]\n  name = \"x\"\n  match = 'x'\n";
}

// "v17" out of {"type":"line","time":...,"rule":"v17","line":"x 3"}.
std::string member(const std::string& rec, const std::string& name) {
  const std::string key = "\"" + name + "\":\"";
  const std::size_t at = rec.find(key);
  if (at == std::string::npos) return "";
  const std::size_t from = at + key.size();
  return rec.substr(from, rec.find('"', from) - from);
}

// A rules file that matches nothing: with --passthrough, every line read is written.
const std::string kNothing =
    "[[rule]]\nname = \"nothing\"\nkind = \"alert\"\nthreshold = \"1 per 1m\"\n"
    "  [[rule.event]]\n  name = \"never\"\n  match = 'NEVER-MATCHES-ANY-TEST-LINE'\n";

// An fd appending to `path`, as a logging program holds one.
struct Writer {
  int fd;
  explicit Writer(const std::string& path) : fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) {
    REQUIRE(fd >= 0);
  }
  ~Writer() { ::close(fd); }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  void write(std::string_view s) const { REQUIRE(::write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size())); }
};

// `swthrottle --passthrough --follow FILE`, once it reads FILE from its end.
Process follow(const TempDir& dir, const std::string& file) {
  Process p = spawn({"--rule", dir.write("nothing.toml", kNothing), "--passthrough", "--follow", file});
  const auto size = static_cast<long long>(std::filesystem::file_size(file));
  REQUIRE(poll_until([&] { return open_file_offset(p.pid(), file) == size; }));
  return p;
}

bool out_is(Process& p, const std::string& want) {
  return p.read_stdout_until([&](const std::string& out) { return out.size() >= want.size(); }, 10s) && p.out() == want;
}

}  // namespace

TEST_CASE("fault: 100 SIGHUPs in a second, valid and broken rules alternating: the last valid in force, no line lost") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", passing_rules("v-initial"));
  Process p = spawn({"--rule", rules, "--format", "json"});
  REQUIRE(p.write_stdin("x 0\n"));
  REQUIRE(p.read_stdout_lines(1));
  // Version i is valid when i is odd: the last one (99) is valid.
  int lines = 1;
  for (int i = 0; i < 100; ++i) {
    replace_file(rules, i % 2 == 1 ? passing_rules("v" + std::to_string(i)) : broken_rules("b" + std::to_string(i)));
    REQUIRE(p.send_signal(SIGHUP));
    REQUIRE(p.write_stdin("x " + std::to_string(lines++) + "\n"));
    std::this_thread::sleep_for(10ms);  // pacing: 100 in about a second
  }
  // SIGUSR1 is taken after every SIGHUP sent before it (the lower signal
  // first): once the stats are out, every reload of the storm is over.
  REQUIRE(p.send_signal(SIGUSR1));
  REQUIRE(p.read_stderr_until([](const std::string& err) { return contains(err, "swthrottle: stats"); }));
  REQUIRE(p.write_stdin("x last\n"));
  const RunResult r = p.wait();
  check_exit_0(r);

  const std::vector<std::string> out = lines_of(r.out);
  REQUIRE(out.size() == static_cast<std::size_t>(lines) + 1);
  int previous = -1;
  for (int i = 0; i <= lines; ++i) {
    CAPTURE(out[static_cast<std::size_t>(i)]);
    CHECK(member(out[static_cast<std::size_t>(i)], "line") == (i < lines ? "x " + std::to_string(i) : "x last"));
    // Rules only move forward: no line is decided by a version older than
    // one that decided a line before it, and never by a broken one.
    const std::string rule = member(out[static_cast<std::size_t>(i)], "rule");
    const int version = rule == "v-initial" ? -1 : std::stoi(rule.substr(1));
    CHECK(rule[0] == 'v');
    CHECK(version >= previous);
    previous = version;
  }
  CHECK(member(out.back(), "rule") == "v99");
  // Each reload said what it did; a rejected file says where it is wrong.
  std::size_t reloaded = 0, rejected = 0;
  for (const std::string& line : lines_of(r.err)) {
    if (line.rfind("swthrottle: SIGHUP: reloaded 1 rules", 0) == 0) ++reloaded;
    else if (line.rfind("swthrottle: SIGHUP: keeping the current rules: " + rules + ":4:14: invalid threshold \"oops\"",
                        0) == 0)
      ++rejected;
  }
  MESSAGE("SIGHUP storm: " << reloaded << " reloads, " << rejected << " rejected (signals coalesce)");
  CHECK(reloaded >= 1);
  CHECK(rejected >= 1);
  CHECK(reloaded + rejected <= 100);
  check_only(r.err, {"swthrottle: SIGHUP: reloaded 1 rules", "swthrottle: SIGHUP: keeping the current rules: " + rules,
                     "swthrottle: stats"});
}

TEST_CASE("fault: SIGTERM in the middle of a reload: exit 0, the state saved, windows kept") {
  TempDir dir;
  // One rule that stays, then a reload to 3000 more: long enough to load
  // (about half a second) that the SIGTERM comes while it does.
  const std::string keep =
      "[[rule]]\nname = \"keep\"\nkind = \"throttle\"\nthreshold = \"2 per 1h\"\nkey = \"{k}\"\n"
      "  [[rule.event]]\n  name = \"e\"\n  match = 'k=(?P<k>\\w+)'\n";
  const std::string rules = dir.write("rules.toml", keep);
  const std::string state = dir.file("state.json");
  NotifySocket sock;
  Process p = spawn({"--rule", rules, "--state", state}, {{"NOTIFY_SOCKET", sock.path()}});
  REQUIRE(p.write_stdin("k=a 1\nk=a 2\nk=a 3\n"));
  REQUIRE(p.read_stdout_lines(2));
  std::string big = keep;
  for (int i = 0; i < 3000; ++i)
    big += "\n[[rule]]\nname = \"r" + std::to_string(i) + "\"\nkind = \"throttle\"\nthreshold = \"5 per 1m\"\n" +
           "  [[rule.event]]\n  name = \"e\"\n  match = 'item" + std::to_string(i) + " (\\w+) done'\n";
  replace_file(rules, big);
  for (;;) {  // READY=1 first, then RELOADING=1 when the reload begins
    const auto msg = sock.receive(10s);
    REQUIRE(msg.has_value());
    if (contains(*msg, "RELOADING=1")) break;
    if (contains(*msg, "READY=1")) REQUIRE(p.send_signal(SIGHUP));
  }
  REQUIRE(p.send_signal(SIGTERM));
  const auto sent = std::chrono::steady_clock::now();
  const RunResult r = p.wait();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - sent);
  MESSAGE("SIGTERM during a reload of 3001 rules: exited after " << took.count() << " ms");
  check_exit_0(r);
  CHECK(r.out == "k=a 1\nk=a 2\n");
  // The reload finished or it did not; either way the state holds the
  // window of `keep`, which both rule sets share (key a: 2 passed).
  const std::string saved = read_file(state);
  CHECK(contains(saved, "\"rule\":\"keep\""));
  CHECK(contains(saved, "\"key\":\"a\""));
  check_only(r.err, {"swthrottle: SIGHUP: reloaded 3001 rules"});
  // The next run goes on from it: key a has no room left.
  const RunResult next = swthrottle::test::run_swthrottle({"--rule", rules, "--state", state}, "k=a 4\nk=b 1\n");
  CHECK(next.exit_status == 0);
  CHECK(next.out == "k=b 1\n");
}

TEST_CASE("fault: the --state directory removed mid-run: every line written, each failed save said, no crash") {
  TempDir dir;
  const std::string sub = dir.file("state");
  std::filesystem::create_directory(sub);
  const std::string state = sub + "/state.json";
  Process p = spawn(
      {"--rule", dir.write("nothing.toml", kNothing), "--passthrough", "--state", state, "--state-interval", "100ms"});
  REQUIRE(p.write_stdin("line 1\n"));
  REQUIRE(p.read_stdout_lines(1));
  REQUIRE(poll_until([&] { return std::filesystem::exists(state); }));
  // Renamed away, then removed: the name is gone at once, whatever a save
  // is doing in it.
  std::filesystem::rename(sub, dir.file("moved"));
  std::filesystem::remove_all(dir.file("moved"));
  const std::string said = "swthrottle: cannot save state to " + state + ": No such file or directory\n";
  REQUIRE(p.read_stderr_until([&](const std::string& err) { return contains(err, said); }));
  REQUIRE(p.write_stdin("line 2\n"));
  REQUIRE(p.read_stdout_lines(2));
  const RunResult r = p.wait();
  CHECK(r.signal == 0);
  CHECK(r.out == "line 1\nline 2\n");
  // The save at exit failed too: said, and exit 2.
  CHECK(r.exit_status == 2);
  check_only(r.err, {said.substr(0, said.size() - 1),
                     "swthrottle: --state " + state + ": the state of this run was not saved (exit 2)"});
  CHECK_FALSE(std::filesystem::exists(sub));  // not made again behind the user's back
}

TEST_CASE("fault: the outbox's directory removed mid-run: the outbox says it keeps nothing more, records still sent") {
  HttpReceiver hook;
  hook.otherwise(Reply(503));
  TempDir dir;
  const std::string sub = dir.file("state");
  std::filesystem::create_directory(sub);
  const std::string state = sub + "/state.json";
  const std::string rules =
      dir.write("rules.toml",
                "[delivery]\ndrain = \"200ms\"\n\n[[rule]]\nname = \"a\"\nkind = \"alert\"\nthreshold = \"1 per 1h\"\n"
                "key = \"{k}\"\n  [[rule.event]]\n  name = \"e\"\n  match = 'k=(?P<k>\\w+)'\n");
  Process p = spawn({"--rule", rules, "--state", state, "--webhook", hook.url("/hook")});
  REQUIRE(p.write_stdin("k=u1\n"));
  REQUIRE(p.read_stdout_lines(1));
  REQUIRE(hook.wait_for(1));  // the first record is in the journal, tried
  std::filesystem::rename(sub, dir.file("moved"));
  std::filesystem::remove_all(dir.file("moved"));
  REQUIRE(p.write_stdin("k=u2\n"));
  REQUIRE(p.read_stdout_lines(2));
  const std::string said = "swthrottle: delivery: the outbox does not take records (" + state +
                           ".outbox: removed while in use (is its directory gone?): records are no longer kept "
                           "across a restart); they are sent without it";
  REQUIRE(p.read_stderr_until([&](const std::string& err) { return contains(err, said); }));
  // Delivered without it once the receiver is back: u2 is tried too.
  hook.otherwise(Reply(200));
  REQUIRE(poll_until([&] {
    for (const auto& q : hook.requests())
      if (contains(q.body, "k=u2")) return true;
    return false;
  }));
  const RunResult r = p.wait();
  CHECK(r.signal == 0);
  CHECK_FALSE(r.timed_out);
  CHECK_FALSE(std::filesystem::exists(sub));
}

TEST_CASE("fault: a followed file deleted: its writer's later lines still read, then the new file from its start") {
  TempDir dir;
  const std::string f = dir.write("app.log", "old\n");
  Process p = follow(dir, f);
  Writer w(f);
  w.write("a 1\n");
  REQUIRE(out_is(p, "a 1\n"));
  REQUIRE(::unlink(f.c_str()) == 0);
  w.write("a 2\n");  // the writer has not noticed: tail -F users expect to see it
  REQUIRE(out_is(p, "a 1\na 2\n"));
  REQUIRE(p.read_stderr_until(
      [&](const std::string& err) { return contains(err, "'" + f + "' has become inaccessible: No such file"); }));
  {
    Writer fresh(f);
    fresh.write("b 1\n");
  }
  REQUIRE(out_is(p, "a 1\na 2\nb 1\n"));
  REQUIRE(p.read_stderr_until([&](const std::string& err) { return contains(err, "'" + f + "' has appeared"); }));
  REQUIRE(p.send_signal(SIGTERM));
  const RunResult r = p.wait();
  check_exit_0(r);
  CHECK(r.out == "a 1\na 2\nb 1\n");
  check_only(r.err, {"swthrottle: '" + f + "' has become inaccessible", "swthrottle: '" + f + "' has appeared"});
}

TEST_CASE("fault: a followed file replaced by a symlink: the link's target followed from its start") {
  TempDir dir;
  const std::string f = dir.write("app.log", "old\n");
  const std::string target = dir.write("other.log", "t 1\nt 2\n");
  Process p = follow(dir, f);
  Writer w(f);
  w.write("a 1\n");
  REQUIRE(out_is(p, "a 1\n"));
  const std::string link = dir.file("link.tmp");
  REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
  REQUIRE(std::rename(link.c_str(), f.c_str()) == 0);
  REQUIRE(out_is(p, "a 1\nt 1\nt 2\n"));
  Writer(target).write("t 3\n");
  REQUIRE(out_is(p, "a 1\nt 1\nt 2\nt 3\n"));
  REQUIRE(p.send_signal(SIGTERM));
  const RunResult r = p.wait();
  check_exit_0(r);
  CHECK(r.out == "a 1\nt 1\nt 2\nt 3\n");
  check_only(r.err, {"swthrottle: '" + f + "' has been replaced; following new file"});
}

TEST_CASE("fault: a followed file replaced by a directory (unreadable, for root too): the old file read on") {
  TempDir dir;
  const std::string f = dir.write("app.log", "old\n");
  Process p = follow(dir, f);
  Writer w(f);
  w.write("a 1\n");
  REQUIRE(out_is(p, "a 1\n"));
  REQUIRE(::unlink(f.c_str()) == 0);
  REQUIRE(::mkdir(f.c_str(), 0755) == 0);
  w.write("a 2\n");
  REQUIRE(out_is(p, "a 1\na 2\n"));
  // A file again: followed from its start.
  REQUIRE(::rmdir(f.c_str()) == 0);
  {
    Writer fresh(f);
    fresh.write("b 1\n");
  }
  REQUIRE(out_is(p, "a 1\na 2\nb 1\n"));
  REQUIRE(p.send_signal(SIGTERM));
  const RunResult r = p.wait();
  check_exit_0(r);
  CHECK(r.out == "a 1\na 2\nb 1\n");
  check_only(r.err, {"swthrottle: '" + f + "' has become inaccessible", "swthrottle: '" + f + "' has appeared",
                     "swthrottle: '" + f + "' has been replaced; following new file"});
}

TEST_CASE("fault: a followed file turned into a FIFO: its writers' lines read as they come, SIGTERM still ends it") {
  TempDir dir;
  const std::string f = dir.write("app.log", "old\n");
  Process p = follow(dir, f);
  Writer w(f);
  w.write("a 1\n");
  REQUIRE(out_is(p, "a 1\n"));
  REQUIRE(::unlink(f.c_str()) == 0);
  REQUIRE(::mkfifo(f.c_str(), 0600) == 0);
  // Writers come and go: each one's lines are read.
  for (const std::string line : {"p 1\n", "p 2\n"}) {
    int fd = -1;
    // Non-blocking: fails (ENXIO) until swthrottle has the FIFO open.
    REQUIRE(poll_until([&] { return (fd = ::open(f.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) >= 0; }));
    REQUIRE(::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
    ::close(fd);
  }
  REQUIRE(out_is(p, "a 1\np 1\np 2\n"));
  // Blocked in read(2) on the FIFO: a stop still ends the run, cleanly.
  REQUIRE(p.send_signal(SIGTERM));
  const RunResult r = p.wait();
  check_exit_0(r);
  CHECK(r.out == "a 1\np 1\np 2\n");
  check_only(r.err,
             {"swthrottle: '" + f + "' has become inaccessible",
              "swthrottle: '" + f + "' has been replaced; following new file", "swthrottle: '" + f + "' has appeared"});
}

TEST_CASE("fault: too many open files with --follow (ulimit -n 30, 10 files): each file read or named, as tail -F") {
#if defined(__SANITIZE_ADDRESS__)
  // Not in the ASan + UBSan build: this case leaves the process without a
  // free descriptor (a refused follower retries its open and takes any that
  // is freed), and UBSan's vptr check does not work then. The first time it
  // meets a dynamic type, it reads the vtable's head through a pipe(2)
  // (libsanitizer's IsAccessibleMemoryRange); when pipe() fails with EMFILE
  // it takes a sound object's vptr for invalid and ends the run: "member
  // call on address ... which does not point to an object of type 'T'",
  // "object has invalid vptr", "<memory cannot be printed>". Seen here for a
  // NameWatcher thread's std::thread::_State at the stop, and for a
  // RecordSink or a ByteSource while running; strace shows pipe2() failing
  // with EMFILE just before each report, and a program that fills its own
  // descriptor table and then makes a virtual call gets the same report. No
  // object of ours is freed or overwritten. The case runs in the Release and
  // ThreadSanitizer builds.
  MESSAGE("skipped under AddressSanitizer + UBSan: UBSan's vptr check needs free descriptors, which this case uses up");
  return;
#endif
  TempDir dir;
  std::vector<std::string> args{kBinary,         "--rule",   dir.write("nothing.toml", kNothing),
                                "--passthrough", "--follow", "--from-start"};
  for (int i = 1; i <= 10; ++i)
    args.push_back(dir.write("in" + std::to_string(i) + ".log", "file " + std::to_string(i) + "\n"));
  Process p = Process::spawn(limited(Limits::files_open(30), args));
  // Every file is accounted for: its line read, or its open refused with the limit named.
  auto read_or_refused = [&](int i) {
    const std::string name = args[static_cast<std::size_t>(5 + i)];
    const bool read = contains(p.out(), "file " + std::to_string(i) + "\n");
    const bool refused = contains(p.err(), "cannot open '" + name +
                                               "' for reading: Too many open files (a followed file holds 5 "
                                               "descriptors or more: raise the limit, ulimit -n)\n");
    return std::pair{read, refused};
  };
  REQUIRE(p.read_stdout_until(
      [&](const std::string&) {
        for (int i = 1; i <= 10; ++i) {
          const auto [read, refused] = read_or_refused(i);
          if (!read && !refused) return false;
        }
        return true;
      },
      10s));
  int read_count = 0, refused_count = 0;
  for (int i = 1; i <= 10; ++i) {
    CAPTURE(i);
    const auto [read, refused] = read_or_refused(i);
    CHECK((read || refused));
    read_count += read ? 1 : 0;
    refused_count += refused ? 1 : 0;
  }
  MESSAGE("ulimit -n 30, 10 followed files: " << read_count << " read, " << refused_count << " refused");
  // Followers start together and race for descriptors: how many get a file
  // varies from run to run (none, at times: all went to inotify). But 10
  // files need 50 or more: some are refused, every time.
  CHECK(refused_count >= 1);
  REQUIRE(p.send_signal(SIGTERM));
  const RunResult r = p.wait();
  check_exit_0(r);
  check_only(r.err, {"swthrottle: cannot open '", "swthrottle: '"});  // refused, or polling without inotify
  for (const std::string& line : lines_of(r.err)) {
    if (line.rfind("swthrottle: cannot open '", 0) != 0)
      CHECK(contains(line, "': inotify cannot be used, reverting to polling: Too many open files"));
  }
}
