// Fault injection on what swthrottle writes to disk (issue 18, part 2): the
// state file (--state) and the delivery outbox beside it, on a full disk and
// on a read-only one. DESIGN.md §7: a state file on a full disk is reported and
// the previous good state is never destroyed; the records written are those
// of a run without the fault.
//
// "Full" is made two ways. RLIMIT_FSIZE (support/limited_command.h: EFBIG,
// SIGXFSZ ignored) runs everywhere, always. A tiny tmpfs filled to the last
// byte (ENOSPC) runs as well where mount(2) is allowed (root, no seccomp);
// the test says which ran. "Read-only": root writes through chmod 0555, so a
// path under a regular file (ENOTDIR) stands for a directory nobody may write
// in, always, and a read-only bind mount, where mount(2) is allowed.
// The directory removed while a run is on is in fault_live_test.cpp.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "state/state_checksum.h"
#include "support/http_receiver.h"
#include "support/limited_command.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace {

using swthrottle::test::check_survived;
using swthrottle::test::contains;
using swthrottle::test::HttpReceiver;
using swthrottle::test::limited;
using swthrottle::test::Limits;
using swthrottle::test::read_file;
using swthrottle::test::Reply;
using swthrottle::test::RunResult;
using swthrottle::test::TempDir;
using json = nlohmann::json;

const std::string kBinary = SWTHROTTLE_BINARY;

// At most 2 lines per key an hour: a run's state holds what the next run
// must not pass again.
const std::string kThrottle =
    "[[rule]]\nname = \"per-key\"\nkind = \"throttle\"\nthreshold = \"2 per 1h\"\nkey = \"{k}\"\n"
    "  [[rule.event]]\n  name = \"e\"\n  match = 'k=(?P<k>\\w+)'\n";

RunResult run(const std::vector<std::string>& args, const std::string& input = "", const Limits& limits = {}) {
  std::vector<std::string> argv{kBinary};
  argv.insert(argv.end(), args.begin(), args.end());
  return swthrottle::test::run_process(limited(limits, argv), input);
}

// Files in `dir` whose name starts with `prefix`.
std::vector<std::string> files_starting(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> v;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) v.push_back(e.path().filename().string());
  return v;
}

// A small tmpfs mounted on a fresh directory, unmounted (lazily) at the end.
// mounted() is false where mount(2) is not allowed.
class SmallTmpfs {
 public:
  SmallTmpfs(const std::string& at, const std::string& options) : at_(at) {
    std::filesystem::create_directory(at_);
    mounted_ = ::mount("tmpfs", at_.c_str(), "tmpfs", 0, options.c_str()) == 0;
    if (!mounted_) why_ = std::strerror(errno);
  }
  ~SmallTmpfs() {
    if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& why() const { return why_; }

 private:
  std::string at_;
  bool mounted_ = false;
  std::string why_;
};

// Writes zeros to `path` until the file system has no byte left.
void fill_up(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  const std::string block(4096, '\0');
  int err = 0;
  for (;;) {
    const ssize_t n = ::write(fd, block.data(), block.size());
    if (n < 0) {
      err = errno;
      break;
    }
    if (n == 0) break;
  }
  // Byte by byte, for the tail of the last page.
  while (::write(fd, "x", 1) == 1) {
  }
  ::close(fd);
  REQUIRE(err == ENOSPC);
}

// The state of a first run (2 of 3 lines of key a passed), then a second run
// under `limits` whose save fails with `reason`: the second run's records are
// those of a run that can save, the state file is the first run's, byte for
// byte, no temporary is left, and stderr says why.
// `between` runs after the first run (to fill the disk).
void check_save_fails_safely(const std::string& dir, const Limits& limits, const std::string& reason,
                             const std::function<void()>& between = {}) {
  const std::string rules = dir + "/rules.toml";
  const std::string state = dir + "/state.json";
  {
    const RunResult first = run({"--rule", rules, "--state", state}, "k=a 1\nk=a 2\nk=a 3\n");
    REQUIRE(first.exit_status == 0);
    REQUIRE(first.out == "k=a 1\nk=a 2\n");
  }
  const std::string saved = read_file(state);
  // The same second run against a copy, without the fault: what must be written.
  const std::string control_state = dir + "/control.json";
  std::filesystem::copy_file(state, control_state);
  const std::string second_input = "k=a 4\nk=b 1\nk=b 2\nk=b 3\n";
  const RunResult control = run({"--rule", rules, "--state", control_state}, second_input);
  REQUIRE(control.exit_status == 0);
  REQUIRE(control.out == "k=b 1\nk=b 2\n");
  if (between) between();

  const RunResult r = run({"--rule", rules, "--state", state}, second_input, limits);
  check_survived(r);
  CHECK(r.out == control.out);
  // The save at exit failed: the run's windows are lost, said, exit 2.
  CHECK(r.exit_status == 2);
  CHECK(r.err == "swthrottle: cannot save state to " + state + ": " + reason + "\nswthrottle: --state " + state +
                     ": the state of this run was not saved (exit 2)\n");
  CHECK(read_file(state) == saved);
  CHECK(files_starting(dir, "state.json.tmp.").empty());
}

}  // namespace

TEST_CASE("fault: state file on a full disk (RLIMIT_FSIZE, EFBIG): the previous state kept, the error said") {
  TempDir dir;
  dir.write("rules.toml", kThrottle);
  // The first run of check_save_fails_safely is not limited; the second may
  // not write a byte to any file (its stdout is a pipe).
  check_save_fails_safely(dir.path(), Limits::file_size(0), "File too large");
}

TEST_CASE("fault: state file on a full tmpfs (ENOSPC), where mount is allowed") {
  TempDir dir;
  SmallTmpfs fs(dir.file("fs"), "size=64k,mode=0700");
  if (!fs.mounted()) {
    // The RLIMIT_FSIZE case above stands for it.
    MESSAGE("tmpfs not mounted (" << fs.why() << "): only the RLIMIT_FSIZE case ran");
    return;
  }
  MESSAGE("tmpfs mounted: the ENOSPC case ran");
  const std::string d = dir.file("fs");
  std::ofstream(d + "/rules.toml") << kThrottle;
  check_save_fails_safely(d, Limits{}, "No space left on device", [&] { fill_up(d + "/filler"); });
}

TEST_CASE("fault: --state under a regular file (ENOTDIR, read-only for root too): records written, the error said") {
  TempDir dir;
  const std::string rules = dir.write("rules.toml", kThrottle);
  const std::string state = dir.write("plain-file", "x") + "/state.json";
  const RunResult r = run({"--rule", rules, "--state", state}, "k=a 1\nk=a 2\nk=a 3\n");
  check_survived(r);
  CHECK(r.out == "k=a 1\nk=a 2\n");
  // No lock, nothing to read, nothing saved: each said once.
  CHECK(contains(r.err, "cannot lock state file " + state));
  CHECK(contains(r.err, "swthrottle: cannot save state to " + state + ": Not a directory\n"));
  CHECK(r.exit_status == 2);                      // the state of the run was not saved
  CHECK_FALSE(contains(r.err, "move it aside"));  // there is no file to move: a part of its path is a file
  CHECK(read_file(dir.file("plain-file")) == "x");
}

TEST_CASE("fault: state file on a read-only bind mount, where mount is allowed: loaded, not saved, kept") {
  TempDir dir;
  const std::string d = dir.file("ro");
  std::filesystem::create_directory(d);
  const std::string rules = dir.write("rules.toml", kThrottle);
  const std::string state = d + "/state.json";
  REQUIRE(run({"--rule", rules, "--state", state}, "k=a 1\nk=a 2\nk=a 3\n").exit_status == 0);
  const std::string saved = read_file(state);
  if (::mount(d.c_str(), d.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    MESSAGE("bind mount not allowed (" << std::strerror(errno) << "): only the ENOTDIR case ran");
    return;
  }
  struct Unmount {
    std::string at;
    ~Unmount() { ::umount2(at.c_str(), MNT_DETACH); }
  } unmount{d};
  REQUIRE(::mount(nullptr, d.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) == 0);
  MESSAGE("read-only bind mount: the EROFS case ran");
  // The state is read (key a has used its 2 lines), and cannot be saved.
  const RunResult r = run({"--rule", rules, "--state", state}, "k=a 4\nk=b 1\n");
  check_survived(r);
  CHECK(r.out == "k=b 1\n");
  CHECK(r.exit_status == 2);
  CHECK(r.err == "swthrottle: cannot save state to " + state + ": Read-only file system\nswthrottle: --state " + state +
                     ": the state of this run was not saved (exit 2)\n");
  CHECK(read_file(state) == saved);

  // The outbox cannot be opened there: the run refuses to start, exit 2,
  // before a line is read (it could not keep what it promised).
  HttpReceiver hook;
  const RunResult o = run({"--rule", rules, "--state", state, "--webhook", hook.url("/hook")}, "k=c 1\n");
  check_survived(o);
  CHECK(o.exit_status == 2);
  CHECK(o.out.empty());
  CHECK(o.err == "swthrottle: " + state + ".outbox: cannot open: Read-only file system\n");
}

TEST_CASE(
    "fault: outbox journal on a full disk (RLIMIT_FSIZE): what it took is delivered next run, once, the rest said") {
  HttpReceiver hook;
  hook.otherwise(Reply(503));  // down for the first run: everything waits in the outbox
  TempDir dir;
  const std::string rules =
      dir.write("rules.toml",
                "[delivery]\ndrain = \"200ms\"\n\n[[rule]]\nname = \"a\"\nkind = \"alert\"\nthreshold = \"1 per 1h\"\n"
                "key = \"{k}\"\n  [[rule.event]]\n  name = \"e\"\n  match = 'k=(?P<k>\\w+)'\n");
  const std::string state = dir.file("state.json");
  std::string input;
  for (int i = 1; i <= 40; ++i) input += "k=u" + std::to_string(i) + "\n";
  // 4 blocks of 512 bytes: room in the journal for a few entries only.
  const RunResult r = run({"--rule", rules, "--state", state, "--webhook", hook.url("/hook"), "--format", "json"},
                          input, Limits::file_size(4));
  check_survived(r);
  // Every alert is written on stdout, whatever the disk.
  std::size_t alerts = 0;
  for (std::size_t at = 0; (at = r.out.find("\"type\":\"alert\"", at)) != std::string::npos; ++at) ++alerts;
  CHECK(alerts == 40);

  // The journal holds whole entries only: the failed writes were cut back.
  const std::string journal = read_file(state + ".outbox");
  std::set<std::string> kept;
  std::size_t at = 0;
  while (at < journal.size()) {
    const std::size_t nl = journal.find('\n', at);
    REQUIRE(nl != std::string::npos);
    const json e = json::parse(journal.substr(at, nl - at));
    if (e.contains("add")) kept.insert(e["add"]["id"].get<std::string>());
    at = nl + 1;
  }
  CHECK(kept.size() > 0);
  CHECK(kept.size() < 40);
  // The refusal is said once, and at the end what was kept and what was
  // lost (the receiver never answered): together, every alert.
  const std::string refused = "swthrottle: delivery: the outbox does not take records (";
  CHECK(r.err.find(refused) != std::string::npos);
  CHECK(r.err.find(refused) == r.err.rfind(refused));
  CHECK(contains(r.err, state + ".outbox: cannot write: File too large"));
  const std::string end = "swthrottle: delivery: 40 records not delivered after 200ms ([delivery] drain); " +
                          std::to_string(kept.size()) + " kept in the outbox for the next run, " +
                          std::to_string(40 - kept.size()) + " lost: the outbox did not take them (exit 3)\n";
  CHECK(contains(r.err, end));
  // Lost records would make it 3; the state file could not be saved on
  // that disk either, and 2 wins.
  CHECK(r.exit_status == 2);

  // Up again, no limit: exactly what the outbox took is delivered, once each.
  hook.otherwise(Reply(200));
  const std::size_t before = hook.count();
  const RunResult next = run({"--rule", rules, "--state", state, "--webhook", hook.url("/hook")}, "");
  CHECK(next.exit_status == 0);
  CHECK(contains(next.err,
                 "delivery: " + std::to_string(kept.size()) + " records the last run did not deliver are sent first"));
  std::map<std::string, int> delivered;
  const auto reqs = hook.requests();
  for (std::size_t i = before; i < reqs.size(); ++i) ++delivered[json::parse(reqs[i].body)["id"].get<std::string>()];
  CHECK(delivered.size() == kept.size());
  for (const auto& [id, n] : delivered) {
    CAPTURE(id);
    CHECK(kept.count(id) == 1);
    CHECK(n == 1);
  }
}

TEST_CASE("fault: an outbox that cannot record removals says so once, keeps its stats true, and is rewritten") {
  // A first run, its receiver down, leaves 12 records in the outbox. The
  // next runs deliver them on a disk that takes no more journal lines
  // (RLIMIT_FSIZE below the journal's size): every done entry is refused.
  HttpReceiver hook;
  hook.otherwise(Reply(503));
  TempDir dir;
  const std::string rules =
      dir.write("rules.toml",
                "[delivery]\ndrain = \"200ms\"\n\n[[rule]]\nname = \"a\"\nkind = \"alert\"\nthreshold = \"1 per 1h\"\n"
                "key = \"{k}\"\n  [[rule.event]]\n  name = \"e\"\n  match = 'k=(?P<k>\\w+)'\n");
  std::string input;
  for (int i = 1; i <= 12; ++i) input += "k=u" + std::to_string(i) + "\n";
  const std::string state = dir.file("state.json");
  const std::string empty = dir.write("empty.log", "");
  auto ids_sent = [&](std::size_t from) {
    std::set<std::string> ids;
    const auto reqs = hook.requests();
    for (std::size_t i = from; i < reqs.size(); ++i)
      if (reqs[i].body.starts_with("{")) ids.insert(json::parse(reqs[i].body)["id"].get<std::string>());
    return ids;
  };
  auto first_run = [&] {
    hook.otherwise(Reply(503));
    std::filesystem::remove(state + ".outbox");
    const RunResult r = run({"--rule", rules, "--state", state, "--webhook", hook.url("/hook")}, input);
    REQUIRE(r.exit_status == 0);
    REQUIRE(contains(r.err, "12 records not delivered after 200ms ([delivery] drain); kept in the outbox"));
    REQUIRE(std::filesystem::file_size(state + ".outbox") > 4 * 512);
  };

  SUBCASE("all delivered: the journal is rewritten at exit, and the next run sends nothing again") {
    first_run();
    hook.otherwise(Reply(200));
    const std::size_t before = hook.count();
    const RunResult r = run({"--rule", rules, "--state", state, "--webhook", hook.url("/hook"), "--stats", empty}, "",
                            Limits::file_size(4));
    check_survived(r);
    CHECK(ids_sent(before).size() == 12);
    const std::string said = "swthrottle: delivery: the outbox cannot record that records are done (";
    CHECK(r.err.find(said) != std::string::npos);
    CHECK(r.err.find(said) == r.err.rfind(said));  // once
    CHECK(contains(r.err,
                   "swthrottle: delivery: the outbox is rewritten: the 12 records done meanwhile will not be "
                   "sent again\n"));
    CHECK(contains(r.err, "stats: outbox: added 0 delivered 12 dead_letters 0 dropped 0 recovered 12 pending 0\n"));
    // The disk takes writes again: nothing is sent twice.
    const std::size_t after = hook.count();
    const RunResult again = run({"--rule", rules, "--state", state, "--webhook", hook.url("/hook"), empty});
    CHECK(again.exit_status == 0);
    CHECK(hook.count() == after);
  }

  SUBCASE("some delivered, the journal still too big to rewrite: the stats and the exit say how many, once") {
    first_run();
    // Four are taken, then the receiver is down again.
    hook.respond({Reply(200), Reply(200), Reply(200), Reply(200)});
    hook.otherwise(Reply(503));
    const std::size_t before = hook.count();
    const RunResult r = run({"--rule", rules, "--state", state, "--webhook", hook.url("/hook"), "--stats", empty}, "",
                            Limits::file_size(4));
    check_survived(r);
    CHECK(contains(r.err, "swthrottle: delivery: 4 records done in this run are still listed in the outbox ("));
    CHECK(contains(r.err, "): the next run sends them again\n"));
    CHECK(contains(r.err,
                   "stats: outbox: added 0 delivered 4 dead_letters 0 dropped 0 recovered 12 pending 8 "
                   "unrecorded 4\n"));
    // 8 not delivered, as the stats say (the 4 done are not counted again).
    CHECK(contains(r.err, "swthrottle: delivery: 8 records not delivered after 200ms"));
    CHECK(ids_sent(before).size() >= 5);  // the four taken, and those tried and refused since
  }

  namespace {

  // An alert of 2 per 1h whose cooldown holds the lines after it back
  // (alert_suppressed), and a throttle of 1 per 1h with a pending summary.
  const std::string kStateRules = R"toml(
[settings]
time = "log"
timezone = "UTC"

[[rule]]
name = "fails"
kind = "alert"
threshold = "2 per 1h"
  [[rule.event]]
  name = "fail"
  match = 'fail'

[[rule]]
name = "flood"
kind = "throttle"
threshold = "1 per 1h"
  [[rule.event]]
  name = "flood"
  match = 'flood'
)toml";

  const std::string kSlice1 =
      "2026-11-21T10:00:00Z fail\n2026-11-21T10:00:01Z fail\n2026-11-21T10:00:02Z fail\n2026-11-21T10:00:03Z fail\n"
      "2026-11-21T10:00:04Z flood\n2026-11-21T10:00:05Z flood\n2026-11-21T10:00:07Z flood\n";
  // Two hours later: the cooldown is over, the throttle has room again.
  const std::string kSlice2 = "2026-11-21T12:00:00Z fail\n2026-11-21T12:00:01Z fail\n2026-11-21T12:00:02Z flood\n";

  // The saved state of kSlice1, with `from` replaced by `to` (once, checked).
  std::string edited(const std::string& saved, const std::string& from, const std::string& to) {
    const std::size_t at = saved.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    std::string s = saved;
    s.replace(at, from.size(), to);
    return s;
  }

  }  // namespace

  // Issue 32, item 7: a changed alert_suppressed loaded silently and changed
  // the next alert's count of held-back lines. Now the file's checksum does
  // not match: it is moved aside like a corrupt file, with a message.
  TEST_CASE("fault: a state file changed after it was saved (one digit) is moved aside, said") {
    TempDir dir;
    const std::string rules = dir.write("rules.toml", kStateRules);
    const std::string state = dir.file("state.json");
    REQUIRE(run({"--rule", rules, "--state", state}, kSlice1).exit_status == 0);
    const std::string saved = read_file(state);
    REQUIRE(saved.find("\"checksum\":\"xxh3-64:") != std::string::npos);
    const RunResult good = run({"--rule", rules, "--state", dir.write("control.json", saved)}, kSlice2);
    REQUIRE(good.err == "");
    REQUIRE(good.out.find("suppressed=2") != std::string::npos);  // the 2 held back in slice 1's cooldown

    dir.write("state.json", edited(saved, "\"alert_suppressed\":2", "\"alert_suppressed\":7"));
    const RunResult r = run({"--rule", rules, "--state", state}, kSlice2);
    CHECK(r.exit_status == 0);
    const std::vector<std::string> aside = files_starting(dir.path(), "state.json.corrupt-");
    REQUIRE(aside.size() == 1);
    CHECK(r.err.starts_with("swthrottle: state file " + state + ": its content does not match its checksum (xxh3-64 "));
    CHECK(r.err.ends_with("): it was changed after it was saved; moved aside to " + dir.file(aside[0]) +
                          ", starting fresh\n"));
    CHECK(r.out.find("suppressed=7") == std::string::npos);  // before: the edited count was written
    CHECK(read_file(dir.file(aside[0])) == edited(saved, "\"alert_suppressed\":2", "\"alert_suppressed\":7"));
  }

  // Issue 32, item 7: a pending summary's first_ms after its last_ms is no
  // order a run writes. With a matching checksum written over it (on purpose,
  // or by a buggy tool), the order check still moves the file aside.
  TEST_CASE("fault: a state file whose pending summary's times are out of order is moved aside, with the place") {
    TempDir dir;
    const std::string rules = dir.write("rules.toml", kStateRules);
    const std::string state = dir.file("state.json");
    REQUIRE(run({"--rule", rules, "--state", state}, kSlice1).exit_status == 0);
    const std::string saved = read_file(state);
    // flood: 10:00:05 and 10:00:07 held back.
    const std::string pending = "\"first_ms\":1795255205000,\"last_ms\":1795255207000";
    std::string body = edited(saved, pending, "\"first_ms\":1795255208000,\"last_ms\":1795255207000");
    body = body.substr(0, body.rfind(",\n\"checksum\"")) + "}\n";
    dir.write("state.json", swthrottle::state::seal(body));
    const RunResult r = run({"--rule", rules, "--state", state}, kSlice2);
    CHECK(r.exit_status == 0);
    const std::vector<std::string> aside = files_starting(dir.path(), "state.json.corrupt-");
    REQUIRE(aside.size() == 1);
    CHECK(r.err == "swthrottle: state file " + state +
                       ": rules[1].windows[0].pending.first_ms: time 1795255208000 "
                       "after last_ms 1795255207000: the first suppressed line comes "
                       "first; moved aside to " +
                       dir.file(aside[0]) + ", starting fresh\n");
  }

  // Decided: a state file from before checksums (the upgrade) is loaded once,
  // with a notice; the next save adds the checksum, and the run after that
  // loads without a word.
  TEST_CASE("fault: a state file without a checksum (an older swthrottle's) is loaded once, with a notice") {
    TempDir dir;
    const std::string rules = dir.write("rules.toml", kStateRules);
    const std::string state = dir.file("state.json");
    REQUIRE(run({"--rule", rules, "--state", state}, kSlice1).exit_status == 0);
    const std::string saved = read_file(state);
    const std::string control = dir.write("control.json", saved);
    const RunResult want = run({"--rule", rules, "--state", control}, kSlice2);
    dir.write("state.json", saved.substr(0, saved.rfind(",\n\"checksum\"")) + "}\n");
    const RunResult r = run({"--rule", rules, "--state", state}, kSlice2);
    CHECK(r.exit_status == 0);
    CHECK(r.out == want.out);
    CHECK(r.err == "swthrottle: state file " + state +
                       " has no checksum (saved by an older swthrottle): loaded as it is; the next save adds one\n");
    CHECK(read_file(state).find("\"checksum\":\"xxh3-64:") != std::string::npos);
    CHECK(run({"--rule", rules, "--state", state}, "").err == "");
    CHECK(files_starting(dir.path(), "state.json.corrupt-").empty());
  }
