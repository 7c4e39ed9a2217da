#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "delivery/outbox.h"
#include "support/json.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "util/base64.h"

using swthrottle::delivery::CrashPhase;
using swthrottle::delivery::Delivery;
using swthrottle::delivery::Outbox;
using swthrottle::delivery::OutboxOptions;
using swthrottle::delivery::OutboxStats;
using swthrottle::test::append_file;
using swthrottle::test::parse_json;
using swthrottle::test::read_file;
using swthrottle::test::TempDir;
using namespace std::string_literals;

namespace {

Delivery rec(const std::string& id, uint32_t dest = 0, std::string body = "", int64_t created_ms = 0) {
  Delivery d;
  d.id = id;
  d.destination = dest;
  d.body = body.empty() ? "{\"id\":\"" + id + "\"}" : std::move(body);
  d.created_ms = created_ms;
  return d;
}

// The journal and dead-letter paths of one test's outbox.
struct Paths {
  explicit Paths(const TempDir& dir) : journal(dir.file("state.outbox")), dead(dir.file("state.dead")) {}
  std::string journal;
  std::string dead;
};

std::unique_ptr<Outbox> open_box(const Paths& p, OutboxOptions options = {}) {
  auto r = Outbox::open(p.journal, p.dead, options);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().str()));
  return std::move(*r);
}

bool add_one(Outbox& box, const Delivery& d) { return box.add(std::span<const Delivery>(&d, 1)); }

bool same(const Delivery& a, const Delivery& b) {
  return a.id == b.id && a.destination == b.destination && a.body == b.body && a.created_ms == b.created_ms &&
         a.attempts == b.attempts;
}

std::vector<std::string> ids_of(const std::vector<Delivery>& ds) {
  std::vector<std::string> out;
  for (const Delivery& d : ds) out.push_back(d.id);
  return out;
}

uint64_t size_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return static_cast<uint64_t>(st.st_size);
}

// The complete lines of `text` (a last line without "\n" is left out).
std::vector<std::string> complete_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  for (std::size_t nl; (nl = text.find('\n', pos)) != std::string::npos; pos = nl + 1)
    out.push_back(text.substr(pos, nl - pos));
  return out;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------- children

// A forked child and the read end of a pipe it reports on: one line per
// operation that returned, so the parent knows exactly what was acknowledged
// before the child died.
struct Child {
  pid_t pid = -1;
  int fd = -1;
};

// fork() running body(write_fd) in the child, which then leaves with _exit
// (no destructors, no doctest reporting in the child). Fork before any thread
// of the test starts: the child is single-threaded (the outbox starts none).
template <typename F>
Child fork_child(F body) {
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(p[0]);
    int rc = 1;
    try {
      rc = body(p[1]);
    } catch (...) {
      rc = 2;
    }
    ::_exit(rc);
  }
  ::close(p[1]);
  return Child{pid, p[0]};
}

void report(int fd, const std::string& line) {
  const std::string s = line + "\n";
  if (::write(fd, s.data(), s.size()) != static_cast<ssize_t>(s.size())) ::_exit(3);
}

// Reads one more chunk from the child's pipe into `into`, waiting at most
// `limit`. False at end of file, on timeout or error.
bool read_some(int fd, std::string& into, std::chrono::milliseconds limit = swthrottle::test::kDefaultTimeout) {
  pollfd pfd{fd, POLLIN, 0};
  int n;
  while ((n = ::poll(&pfd, 1, static_cast<int>(limit.count()))) < 0 && errno == EINTR) {
  }
  if (n <= 0) return false;
  char buf[4096];
  ssize_t r;
  while ((r = ::read(fd, buf, sizeof buf)) < 0 && errno == EINTR) {
  }
  if (r <= 0) return false;
  into.append(buf, static_cast<std::size_t>(r));
  return true;
}

// Everything the child reported until it closed the pipe (by dying), and its
// wait status. A child that hangs is killed and fails the test.
int finish(Child& c, std::string& reports) {
  bool eof = false;
  for (;;) {
    pollfd pfd{c.fd, POLLIN, 0};
    int n = ::poll(&pfd, 1, static_cast<int>(swthrottle::test::kDefaultTimeout.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) break;  // timed out: the child hangs
    char buf[4096];
    ssize_t r = ::read(c.fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      eof = true;
      break;
    }
    reports.append(buf, static_cast<std::size_t>(r));
  }
  CHECK_MESSAGE(eof, "the child neither died nor exited in time");
  if (!eof) ::kill(c.pid, SIGKILL);
  ::close(c.fd);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// Closes the outbox when the scope is left: declared after a future whose
// add() may block, so that a failed REQUIRE wakes it instead of hanging in
// the future's destructor.
struct CloseOnExit {
  Outbox& box;
  ~CloseOnExit() { box.close(); }
};

bool died_of_sigkill(int status) { return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL; }

// The journal, read back, can take one more add that survives a reopen.
void check_appendable(const Paths& p, const std::vector<std::string>& expected_ids) {
  {
    auto box = open_box(p);
    CHECK(box->last_error() == "");
    CHECK(ids_of(box->recovered()) == expected_ids);
    REQUIRE(add_one(*box, rec("after")));
  }
  const std::string text = read_file(p.journal);
  CHECK((!text.empty() && text.back() == '\n'));
  auto box = open_box(p);
  std::vector<std::string> with_after = expected_ids;
  with_after.push_back("after");
  CHECK(ids_of(box->recovered()) == with_after);
}

}  // namespace

// ---------------------------------------------------------------- adding and recovering

TEST_CASE("outbox: added records come back after a reopen byte for byte, in add order, with the same ids") {
  TempDir dir;
  Paths p(dir);
  const std::vector<Delivery> records = {
      rec("a", 0, "{\"text\":\"plain\"}", 1'700'000'000'000),
      rec("nul", 1, "before\0after"s, 2),
      rec("newlines", 0, "line 1\nline 2\r\n\n", 3),
      rec("invalid-utf8", 2, "bad \xff byte and a cut \xe2\x82", 4),
      rec("quotes", 0, R"(say "hi" \ and \" and {"a":[1,2]})", -5),
      rec("id \xfe not utf-8", 3, "x", 6),
  };
  {
    auto box = open_box(p);
    CHECK(box->recovered().empty());
    REQUIRE(box->add(std::span<const Delivery>(records.data(), 2)));
    REQUIRE(box->add(std::span<const Delivery>(records.data() + 2, records.size() - 2)));
    CHECK(box->stats().added == records.size());
    CHECK(box->stats().pending == records.size());
    CHECK(box->stats().recovered == 0);
    // A record added in this run is not "recovered": recovered() is a previous run's.
    CHECK(box->recovered().empty());
  }
  // Every line is one JSON entry; bytes that are not UTF-8 are base64.
  const std::vector<std::string> lines = complete_lines(read_file(p.journal));
  REQUIRE(lines.size() == records.size());
  for (const std::string& line : lines) {
    auto j = parse_json(line);
    REQUIRE(j);
    CHECK(j->contains("add"));
  }
  CHECK((*parse_json(lines[0]))["add"]["body"] == "{\"text\":\"plain\"}");
  CHECK((*parse_json(lines[3]))["add"]["body"].contains("base64"));
  CHECK((*parse_json(lines[5]))["add"]["id"].contains("base64"));

  auto box = open_box(p);
  const std::vector<Delivery> back = box->recovered();
  REQUIRE(back.size() == records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    CAPTURE(i);
    CHECK(same(back[i], records[i]));
  }
  CHECK(box->stats().recovered == records.size());
  CHECK(box->stats().pending == records.size());
  CHECK(box->stats().added == 0);
}

TEST_CASE("outbox: done removes a record, for good, a done of a record not pending changes nothing") {
  TempDir dir;
  Paths p(dir);
  {
    auto box = open_box(p);
    const std::vector<Delivery> three = {rec("a"), rec("b"), rec("c")};
    REQUIRE(box->add(three));
    box->done("b", 0);
    box->done("a", 7);  // same id, another destination: a different record
    box->done("zzz", 0);
    const OutboxStats s = box->stats();
    CHECK(s.delivered == 3);
    CHECK(s.pending == 2);
  }
  {
    auto box = open_box(p);
    CHECK(ids_of(box->recovered()) == std::vector<std::string>{"a", "c"});
    box->done("a", 0);
    CHECK(ids_of(box->recovered()) == std::vector<std::string>{"c"});
  }
  auto box = open_box(p);
  CHECK(ids_of(box->recovered()) == std::vector<std::string>{"c"});
}

TEST_CASE("outbox: the same id to two destinations is two records") {
  TempDir dir;
  Paths p(dir);
  {
    auto box = open_box(p);
    const std::vector<Delivery> two = {rec("a", 0), rec("a", 1)};
    REQUIRE(box->add(two));
    box->done("a", 0);
  }
  auto box = open_box(p);
  const auto back = box->recovered();
  REQUIRE(back.size() == 1);
  CHECK(back[0].destination == 1);
}

TEST_CASE("outbox: tried keeps the attempt count across a reopen") {
  TempDir dir;
  Paths p(dir);
  {
    auto box = open_box(p);
    Delivery d = rec("a");
    REQUIRE(add_one(*box, d));
    REQUIRE(add_one(*box, rec("b")));
    d.attempts = 1;
    box->tried(d);
    d.attempts = 2;
    box->tried(d);
    box->tried(rec("unknown"));  // ignored
  }
  {
    auto box = open_box(p);
    const auto back = box->recovered();
    REQUIRE(back.size() == 2);
    CHECK(back[0].id == "a");
    CHECK(back[0].attempts == 2);
    CHECK(back[1].attempts == 0);
    Delivery d = back[0];
    d.attempts = 3;
    box->tried(d);
    // recovered() shows what is pending now, attempts included.
    CHECK(box->recovered()[0].attempts == 3);
  }
  auto box = open_box(p);
  CHECK(box->recovered()[0].attempts == 3);
}

TEST_CASE("outbox: adding a record already pending is ignored, in a batch and across a reopen") {
  TempDir dir;
  Paths p(dir);
  {
    auto box = open_box(p);
    Delivery a = rec("a", 0, "first");
    REQUIRE(add_one(*box, a));
    Delivery again = rec("a", 0, "second");
    const std::vector<Delivery> batch = {again, rec("b"), rec("b", 0, "other")};
    REQUIRE(box->add(batch));
    CHECK(box->stats().added == 2);
    CHECK(box->stats().pending == 2);
  }
  CHECK(complete_lines(read_file(p.journal)).size() == 2);  // nothing written for the duplicates
  {
    auto box = open_box(p);
    const auto back = box->recovered();
    REQUIRE(back.size() == 2);
    CHECK(back[0].body == "first");
    CHECK(ids_of(back) == std::vector<std::string>{"a", "b"});
    REQUIRE(add_one(*box, rec("a", 0, "third")));  // still pending: ignored
    box->done("a", 0);
    REQUIRE(add_one(*box, rec("a", 0, "fourth")));  // done: a new record again
  }
  auto box = open_box(p);
  const auto back = box->recovered();
  REQUIRE(back.size() == 2);
  CHECK(ids_of(back) == std::vector<std::string>{"b", "a"});
  CHECK(back[1].body == "fourth");
}

TEST_CASE("outbox: replay of a journal written by hand: duplicate adds, dones and tries of unknown ids") {
  TempDir dir;
  Paths p(dir);
  dir.write("state.outbox",
            "{\"add\":{\"id\":\"a\",\"dest\":0,\"created\":5,\"attempts\":0,\"body\":\"one\"}}\n"
            "{\"add\":{\"id\":\"a\",\"dest\":0,\"created\":6,\"attempts\":9,\"body\":\"two\"}}\n"
            "{\"done\":{\"id\":\"ghost\",\"dest\":0}}\n"
            "{\"try\":{\"id\":\"ghost\",\"dest\":0,\"attempts\":4}}\n"
            "{\"add\":{\"id\":\"b\",\"dest\":1,\"created\":7,\"attempts\":0,\"body\":{\"base64\":\"AP8=\"}}}\n"
            "{\"try\":{\"id\":\"b\",\"dest\":1,\"attempts\":4}}\n"
            "{\"add\":{\"id\":\"c\",\"dest\":0,\"created\":8,\"attempts\":0,\"body\":\"\"}}\n"
            "{\"done\":{\"id\":\"c\",\"dest\":0}}\n");
  auto box = open_box(p);
  CHECK(box->last_error() == "");
  const auto back = box->recovered();
  REQUIRE(back.size() == 2);
  CHECK(back[0].id == "a");
  CHECK(back[0].body == "one");  // the second add of a pending record was ignored
  CHECK(back[0].created_ms == 5);
  CHECK(back[0].attempts == 0);
  CHECK(back[1].id == "b");
  CHECK(back[1].destination == 1);
  CHECK(back[1].body == "\0\xff"s);
  CHECK(back[1].attempts == 4);
}

TEST_CASE("outbox: a bad line in the middle is skipped, the rest kept, and last_error() says so") {
  TempDir dir;
  Paths p(dir);
  dir.write("state.outbox",
            "{\"add\":{\"id\":\"a\",\"dest\":0,\"created\":5,\"attempts\":0,\"body\":\"one\"}}\n"
            "not json\n"
            "{\"add\":{\"id\":\"b\",\"dest\":0,\"created\":5}}\n"  // JSON, but not an entry
            "{\"add\":{\"id\":\"c\",\"dest\":0,\"created\":5,\"attempts\":0,\"body\":\"three\"}}\n");
  auto box = open_box(p);
  CHECK(ids_of(box->recovered()) == std::vector<std::string>{"a", "c"});
  CHECK(box->last_error() == p.journal + ": 2 line(s) that are not journal entries skipped, the first line 2");
}

// ---------------------------------------------------------------- torn tails

TEST_CASE("outbox: a torn last line is dropped, the file cut back, and appending goes on after it") {
  struct Case {
    const char* name;
    std::string tail;
  };
  const std::string whole = "{\"add\":{\"id\":\"torn\",\"dest\":0,\"created\":1,\"attempts\":0,\"body\":\"x\"}}";
  const std::vector<Case> cases = {
      {"garbage without a newline", "\x01garbage \xff"},
      {"half a JSON line", whole.substr(0, whole.size() / 2)},
      {"a whole entry without its newline", whole},
      {"a last line that is not JSON", "{\"add\":{\"id\":\"torn\",\n"},
      {"a last line that is JSON but no entry", "{\"done\":{\"id\":\"a\"}}\n"},
      {"two bad lines and a torn one", "oops\n{}\n{\"add\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    TempDir dir;
    Paths p(dir);
    {
      auto box = open_box(p);
      const std::vector<Delivery> two = {rec("a"), rec("b")};
      REQUIRE(box->add(two));
    }
    const uint64_t whole_size = size_of(p.journal);
    append_file(p.journal, c.tail);
    {
      auto box = open_box(p);
      CHECK(box->last_error() == "");  // a torn tail is what a crash leaves: no error
      CHECK(ids_of(box->recovered()) == std::vector<std::string>{"a", "b"});
      CHECK(size_of(p.journal) == whole_size);
      REQUIRE(add_one(*box, rec("c")));
    }
    auto box = open_box(p);
    CHECK(ids_of(box->recovered()) == std::vector<std::string>{"a", "b", "c"});
  }
}

TEST_CASE("outbox: a journal that is only a torn line opens empty and takes adds") {
  TempDir dir;
  Paths p(dir);
  dir.write("state.outbox", "{\"add\":{\"id\":\"x\",");
  check_appendable(p, {});
}

// ---------------------------------------------------------------- compaction

TEST_CASE("outbox: when most lines are done with, the journal is rewritten with the pending records only") {
  TempDir dir;
  Paths p(dir);
  const std::string big(8 * 1024, 'b');  // 20 of them: well over the 64 KiB threshold
  std::vector<Delivery> records;
  for (int i = 0; i < 20; ++i) records.push_back(rec("r" + std::to_string(i), 0, big + std::to_string(i), i));
  uint64_t largest = 0;
  int shrinks = 0;
  {
    auto box = open_box(p);
    REQUIRE(box->add(records));
    Delivery tried = records[19];
    tried.attempts = 5;
    box->tried(tried);
    uint64_t before = size_of(p.journal);
    largest = before;
    for (int i = 0; i < 16; ++i) {
      box->done(records[static_cast<std::size_t>(i)].id, 0);
      const uint64_t now = size_of(p.journal);
      if (now < before) ++shrinks;
      largest = std::max(largest, now);
      before = now;
    }
    CHECK(box->last_error() == "");
  }
  CHECK(shrinks >= 1);
  // Left: the 4 pending adds, and the records done since the last rewrite,
  // fewer than 8 adds in all (with 8 the journal is at 64 KiB and rewritten).
  CHECK(size_of(p.journal) < largest);
  CHECK(size_of(p.journal) < 8 * big.size());
  CHECK(names_in(dir.path()) == std::vector<std::string>{"state.dead", "state.outbox"});  // no temporary left

  auto box = open_box(p);
  const auto back = box->recovered();
  REQUIRE(back.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    Delivery want = records[16 + i];
    if (i == 3) want.attempts = 5;  // a try is folded into the rewritten add
    CHECK(same(back[i], want));
  }
  // And the rewritten journal goes on taking appends.
  REQUIRE(add_one(*box, rec("new")));
  box.reset();
  CHECK(open_box(p)->recovered().size() == 5);
}

TEST_CASE("outbox: a small journal is not rewritten, however many of its lines are done") {
  TempDir dir;
  Paths p(dir);
  auto box = open_box(p);
  for (int i = 0; i < 50; ++i) REQUIRE(add_one(*box, rec("r" + std::to_string(i))));
  uint64_t before = size_of(p.journal);
  for (int i = 0; i < 49; ++i) {
    box->done("r" + std::to_string(i), 0);
    const uint64_t now = size_of(p.journal);
    CHECK(now > before);  // only ever appended to
    before = now;
  }
  CHECK(complete_lines(read_file(p.journal)).size() == 99);
}

// ---------------------------------------------------------------- the bound

TEST_CASE("outbox: Block: add() waits while the outbox is full and goes on once done() makes room") {
  TempDir dir;
  Paths p(dir);
  OutboxOptions o;
  o.max_pending = 2;
  o.full = OutboxOptions::Full::Block;
  {
    auto box = open_box(p, o);
    const std::vector<Delivery> two = {rec("a"), rec("b")};
    REQUIRE(box->add(two));

    std::atomic<bool> returned{false};
    auto result = std::async(std::launch::async, [&] {
      const bool ok = add_one(*box, rec("c"));
      returned = true;
      return ok;
    });
    CloseOnExit guard{*box};
    // A bounded wait, not a sleep: an add() that does not block returns
    // within it and fails the test; one that blocks keeps waiting past it.
    CHECK(result.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout);
    CHECK(!returned);
    CHECK(box->stats().pending == 2);

    box->done("a", 0);
    REQUIRE(result.wait_for(swthrottle::test::kDefaultTimeout) == std::future_status::ready);
    CHECK(result.get());
    CHECK(returned);
    CHECK(box->stats().pending == 2);
    CHECK(box->stats().dropped == 0);
  }
  CHECK(ids_of(open_box(p)->recovered()) == std::vector<std::string>{"b", "c"});
}

TEST_CASE("outbox: Block: dead_letter() makes room too") {
  TempDir dir;
  Paths p(dir);
  OutboxOptions o;
  o.max_pending = 1;
  auto box = open_box(p, o);
  REQUIRE(add_one(*box, rec("a")));
  auto result = std::async(std::launch::async, [&] { return add_one(*box, rec("b")); });
  CloseOnExit guard{*box};
  CHECK(result.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout);
  box->dead_letter(rec("a"), "HTTP 400", 1000);
  REQUIRE(result.wait_for(swthrottle::test::kDefaultTimeout) == std::future_status::ready);
  CHECK(result.get());
}

TEST_CASE("outbox: close() wakes an add() blocked on a full outbox, which returns false and writes nothing") {
  TempDir dir;
  Paths p(dir);
  OutboxOptions o;
  o.max_pending = 1;
  {
    auto box = open_box(p, o);
    REQUIRE(add_one(*box, rec("a")));
    auto result = std::async(std::launch::async, [&] { return add_one(*box, rec("b")); });
    CloseOnExit guard{*box};
    CHECK(result.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout);
    box->close();
    REQUIRE(result.wait_for(swthrottle::test::kDefaultTimeout) == std::future_status::ready);
    CHECK(!result.get());
    CHECK(box->last_error() == "");      // closing is no error
    CHECK(!add_one(*box, rec("late")));  // nor is anything added after it
    box->done("a", 0);                   // done still works after close
    CHECK(box->stats().pending == 0);
  }
  CHECK(open_box(p)->recovered().empty());
}

TEST_CASE("outbox: a batch larger than max_pending goes in whole once nothing else is pending") {
  TempDir dir;
  Paths p(dir);
  OutboxOptions o;
  o.max_pending = 2;
  auto box = open_box(p, o);
  const std::vector<Delivery> three = {rec("a"), rec("b"), rec("c")};
  REQUIRE(box->add(three));  // would wait forever otherwise
  CHECK(box->stats().pending == 3);
}

TEST_CASE("outbox: DropOldest dead-letters the oldest as \"outbox full\", counts it, and adds the new one") {
  TempDir dir;
  Paths p(dir);
  OutboxOptions o;
  o.max_pending = 2;
  o.full = OutboxOptions::Full::DropOldest;
  {
    auto box = open_box(p, o);
    REQUIRE(add_one(*box, rec("a", 3, "body a", 1'000)));
    REQUIRE(add_one(*box, rec("b")));
    REQUIRE(add_one(*box, rec("c")));
    const std::vector<Delivery> two = {rec("d"), rec("e")};
    REQUIRE(box->add(two));
    const OutboxStats s = box->stats();
    CHECK(s.added == 5);
    CHECK(s.pending == 2);
    CHECK(s.dropped == 3);
    CHECK(s.dead_letters == 3);
  }
  const std::vector<std::string> dead = complete_lines(read_file(p.dead));
  REQUIRE(dead.size() == 3);
  std::vector<std::string> dropped;
  for (const std::string& line : dead) {
    auto j = parse_json(line);
    REQUIRE(j);
    CHECK((*j)["why"] == "outbox full");
    dropped.push_back((*j)["id"].get<std::string>());
  }
  CHECK(dropped == std::vector<std::string>{"a", "b", "c"});
  auto a = *parse_json(dead[0]);
  CHECK(a["dest"] == 3);
  CHECK(a["body"] == "body a");
  CHECK(a["created"] == "1970-01-01T00:00:01.000Z");
  CHECK(open_box(p, o)->recovered().size() == 2);
  CHECK(ids_of(open_box(p, o)->recovered()) == std::vector<std::string>{"d", "e"});
}

// ---------------------------------------------------------------- dead letters

TEST_CASE("outbox: dead-letter lines are JSON with every field, and the record leaves the journal") {
  TempDir dir;
  Paths p(dir);
  Delivery bad = rec("x1", 4, "ok \"quoted\"\nand \xff and \0 end"s, 1'700'000'000'123);
  Delivery good = rec("x2", 0, "{\"a\":1}", 0);
  {
    auto box = open_box(p);
    const std::vector<Delivery> two = {bad, good};
    REQUIRE(box->add(two));
    bad.attempts = 3;
    box->dead_letter(bad, "HTTP 400: \"bad request\"", 1'700'000'005'000);
    box->dead_letter(rec("never-added"), "too old", 0);  // written, though not pending
    const OutboxStats s = box->stats();
    CHECK(s.dead_letters == 2);
    CHECK(s.dropped == 0);
    CHECK(s.pending == 1);
  }
  const std::vector<std::string> dead = complete_lines(read_file(p.dead));
  REQUIRE(dead.size() == 2);
  auto j = parse_json(dead[0]);  // parse_json accepts only valid UTF-8
  REQUIRE(j);
  CHECK((*j)["id"] == "x1");
  CHECK((*j)["dest"] == 4);
  CHECK((*j)["created"] == "2023-11-14T22:13:20.123Z");
  CHECK((*j)["attempts"] == 3);
  CHECK((*j)["why"] == "HTTP 400: \"bad request\"");
  CHECK((*j)["time"] == "2023-11-14T22:13:25.000Z");
  CHECK((*j)["body"] == "ok \"quoted\"\nand \xef\xbf\xbd and \0 end"s);
  std::string exact;
  REQUIRE(swthrottle::decode_base64((*j)["body_base64"].get<std::string>(), exact));
  CHECK(exact == bad.body);
  auto k = parse_json(dead[1]);
  REQUIRE(k);
  CHECK((*k)["id"] == "never-added");
  CHECK((*k)["why"] == "too old");
  CHECK(!k->contains("body_base64"));  // only when the body is not UTF-8

  CHECK(ids_of(open_box(p)->recovered()) == std::vector<std::string>{"x2"});
}

TEST_CASE("outbox: open fails with the file's name when it cannot be opened") {
  TempDir dir;
  const std::string missing_dir = dir.file("no/such/dir/state.outbox");
  auto r = Outbox::open(missing_dir, dir.file("state.dead"), {});
  REQUIRE(!r.ok());
  CHECK(r.error().str() == missing_dir + ": cannot open: No such file or directory");
  auto r2 = Outbox::open(dir.file("state.outbox"), dir.file("no/state.dead"), {});
  REQUIRE(!r2.ok());
  CHECK(r2.error().str() == dir.file("no/state.dead") + ": cannot open: No such file or directory");
}

// ---------------------------------------------------------------- SIGKILL in every phase

// The child adds r1 and r2 alone (both return), records a try of r2, then
// adds r3, r4, r5 in one batch: that add()'s write is the third, where the
// hook kills it. Records of equal size, so half of the batch's bytes is one
// and a half lines.
TEST_CASE("outbox: killed in every phase of an add, the journal keeps every returned add and no partial record") {
  struct Case {
    CrashPhase phase;
    std::size_t min_batch;  // how many of r3..r5 must be recovered (those that fully reached the file)
    std::size_t max_batch;
  };
  // SIGKILL loses nothing written (the page cache survives the process), so
  // after-write keeps the batch too; only a power cut could lose it, and its
  // add() never returned.
  const std::vector<Case> cases = {
      {CrashPhase::BeforeWrite, 0, 0},
      {CrashPhase::MidWrite, 1, 1},
      {CrashPhase::AfterWrite, 3, 3},
      {CrashPhase::AfterFsync, 3, 3},
  };
  for (const Case& c : cases) {
    CAPTURE(static_cast<int>(c.phase));
    TempDir dir;
    Paths p(dir);
    const std::string body(300, 'x');
    std::vector<Delivery> records;
    for (int i = 1; i <= 5; ++i) records.push_back(rec("r" + std::to_string(i), 0, body, i));
    Child child = fork_child([&](int fd) {
      OutboxOptions o;
      o.crash = {c.phase, 3};
      auto r = Outbox::open(p.journal, p.dead, o);
      if (!r.ok()) return 10;
      Outbox& box = **r;
      for (int i = 0; i < 2; ++i) {
        if (!add_one(box, records[static_cast<std::size_t>(i)])) return 11;
        report(fd, records[static_cast<std::size_t>(i)].id);
      }
      Delivery d = records[1];
      d.attempts = 1;
      box.tried(d);
      const std::vector<Delivery> batch(records.begin() + 2, records.end());
      if (!box.add(batch)) return 12;
      report(fd, "batch");
      return 0;  // not killed: the parent fails the test
    });
    std::string reports;
    const int status = finish(child, reports);
    REQUIRE_MESSAGE(died_of_sigkill(status), "status " << status);
    CHECK(reports == "r1\nr2\n");

    auto box = open_box(p);
    CHECK(box->last_error() == "");
    const std::vector<Delivery> back = box->recovered();
    REQUIRE(back.size() >= 2);
    CHECK(same(back[0], records[0]));
    // The try was written (not fsync'd): SIGKILL keeps it, a power cut may not.
    CHECK(back[1].id == "r2");
    CHECK(back[1].attempts <= 1);
    // The batch: a prefix of it, every record whole.
    const std::size_t got = back.size() - 2;
    CHECK(got >= c.min_batch);
    CHECK(got <= c.max_batch);
    for (std::size_t i = 0; i < got && i < 3; ++i) CHECK(same(back[2 + i], records[2 + i]));
    box.reset();
    std::vector<std::string> expect = ids_of(back);
    check_appendable(p, expect);
  }
}

TEST_CASE("outbox: killed mid-compaction, the old journal is whole, the temporary is cleaned up at open") {
  TempDir dir;
  Paths p(dir);
  const std::string big(8 * 1024, 'c');
  std::vector<Delivery> records;
  for (int i = 0; i < 12; ++i) records.push_back(rec("r" + std::to_string(i), 0, big, i));
  Child child = fork_child([&](int fd) {
    OutboxOptions o;
    o.crash.phase = CrashPhase::MidCompaction;
    auto r = Outbox::open(p.journal, p.dead, o);
    if (!r.ok()) return 10;
    Outbox& box = **r;
    if (!box.add(records)) return 11;
    report(fd, "added");
    for (const Delivery& d : records) {
      box.done(d.id, d.destination);  // one of these compacts, and dies
      report(fd, d.id);
    }
    return 0;
  });
  std::string reports;
  const int status = finish(child, reports);
  REQUIRE_MESSAGE(died_of_sigkill(status), "status " << status);
  const std::vector<std::string> acked = complete_lines(reports);
  REQUIRE(acked.size() >= 1);
  CHECK(acked[0] == "added");
  const std::size_t done_returned = acked.size() - 1;
  REQUIRE(done_returned < records.size());

  // The temporary was written whole, and never renamed over the journal.
  const std::string tmp = p.journal + ".tmp." + std::to_string(child.pid);
  CHECK(std::filesystem::exists(tmp));

  std::vector<std::string> expect;
  {
    auto box = open_box(p);
    CHECK(!std::filesystem::exists(tmp));
    const std::vector<Delivery> back = box->recovered();
    // Everything not acknowledged as done is there; the done interrupted by
    // the crash may or may not have been written (it was, before compaction).
    const std::size_t first = records.size() - back.size();
    CHECK((first == done_returned || first == done_returned + 1));
    for (std::size_t i = 0; i < back.size(); ++i) CHECK(same(back[i], records[first + i]));
    expect = ids_of(back);
  }
  check_appendable(p, expect);
}

// A kill from outside, at whatever moment it lands: the child adds in a loop
// (two of every three records are done at once, so compactions happen too)
// and reports each add() that returned; every reported add not reported done
// must be recovered whole.
TEST_CASE("outbox: SIGKILL from outside at any moment loses no add that returned") {
  TempDir dir;
  Paths p(dir);
  const std::string body(3000, 'k');
  auto body_of = [&](int i) { return body + std::to_string(i); };
  Child child = fork_child([&](int fd) {
    auto r = Outbox::open(p.journal, p.dead, {});
    if (!r.ok()) return 10;
    Outbox& box = **r;
    for (int i = 0; i < 1'000'000; ++i) {
      const Delivery d = rec("k" + std::to_string(i), 0, body_of(i), i);
      if (!add_one(box, d)) return 11;
      report(fd, "a " + d.id);
      if (i % 3 != 0) {
        box.done(d.id, 0);
        report(fd, "d " + d.id);
      }
    }
    return 0;
  });
  std::string reports;
  const std::size_t n = 300;
  while (static_cast<std::size_t>(std::count(reports.begin(), reports.end(), '\n')) < n) {
    if (!read_some(child.fd, reports)) break;
  }
  REQUIRE(::kill(child.pid, SIGKILL) == 0);
  const int status = finish(child, reports);
  REQUIRE(died_of_sigkill(status));

  std::set<std::string> must_have;
  for (const std::string& line : complete_lines(reports)) {
    if (line.rfind("a ", 0) == 0) must_have.insert(line.substr(2));
    if (line.rfind("d ", 0) == 0) must_have.erase(line.substr(2));
  }
  REQUIRE(must_have.size() >= n / 5);

  auto box = open_box(p);
  CHECK(box->last_error() == "");
  std::set<std::string> got;
  for (const Delivery& d : box->recovered()) {
    got.insert(d.id);
    const int i = std::stoi(d.id.substr(1));
    CHECK(d.body == body_of(i));  // whole, never a part
    CHECK(d.created_ms == i);
  }
  for (const std::string& id : must_have) {
    CAPTURE(id);
    CHECK(got.count(id) == 1);
  }
  std::vector<std::string> expect = ids_of(box->recovered());
  box.reset();
  check_appendable(p, expect);
}

TEST_CASE("outbox: a journal removed while open takes no more adds, and last_error() says why") {
  TempDir dir;
  const std::string sub = dir.file("state");
  std::filesystem::create_directory(sub);
  const std::string journal = sub + "/state.outbox";
  auto r = Outbox::open(journal, sub + "/state.dead", {});
  REQUIRE(r.ok());
  Outbox& box = **r;
  CHECK(add_one(box, rec("a")));
  std::filesystem::remove_all(sub);  // the directory, while the run holds the journal open
  CHECK_FALSE(add_one(box, rec("b")));
  CHECK(box.last_error() == journal +
                                ": removed while in use (is its directory gone?): records are no longer kept "
                                "across a restart");
  const OutboxStats s = box.stats();
  CHECK(s.added == 1);
  CHECK(s.pending == 1);  // a: still delivered by this run, and done() still works
  box.done("a", 0);
  CHECK(box.stats().pending == 0);
}

// ---------------------------------------------------------------- earlier versions

TEST_CASE("outbox: a journal of an earlier version, whose \"to\" held the URL, is read and rewritten without it") {
  TempDir dir;
  Paths p(dir);
  // What versions before destination labels wrote: "to" = "PRESET URL", no "kind".
  append_file(p.journal,
              R"({"add":{"id":"a1","dest":7,"to":"webhook http://hooks.example:8080/T0K3N?k=SECRET","created":1,)"
              R"("attempts":2,"body":"{}"}})"
              "\n"
              R"({"add":{"id":"a2","dest":9,"to":"alertmanager https://am.example/","created":2,"attempts":0,)"
              R"("body":"[]"}})"
              "\n");
  auto box = open_box(p);
  const std::vector<Delivery> back = box->recovered();
  REQUIRE(back.size() == 2);
  CHECK(back[0].kind == swthrottle::delivery::Preset::Webhook);
  CHECK(back[0].label == "http://hooks.example:8080");
  CHECK(back[0].destination == 7);
  CHECK(back[0].attempts == 2);
  CHECK(back[1].kind == swthrottle::delivery::Preset::Alertmanager);
  CHECK(back[1].label == "https://am.example:443");
  // Rewritten at open: no secret of the URL stays on disk.
  const std::string journal = read_file(p.journal);
  CHECK(journal.find("T0K3N") == std::string::npos);
  CHECK(journal.find("SECRET") == std::string::npos);
  CHECK(journal.find(R"("to":"http://hooks.example:8080","kind":"webhook")") != std::string::npos);
  box.reset();
  CHECK(ids_of(open_box(p)->recovered()) == std::vector<std::string>{"a1", "a2"});
}

TEST_CASE("outbox: an add keeps its destination's label, preset and path, and a dead letter names the label") {
  TempDir dir;
  Paths p(dir);
  Delivery d = rec("c1", 3);
  d.kind = swthrottle::delivery::Preset::Opsgenie;
  d.label = "ops-genie";
  d.path = "/v2/alerts/abc/close?identifierType=alias";
  {
    auto box = open_box(p);
    REQUIRE(add_one(*box, d));
  }
  auto box = open_box(p);
  const std::vector<Delivery> back = box->recovered();
  REQUIRE(back.size() == 1);
  CHECK(back[0].kind == swthrottle::delivery::Preset::Opsgenie);
  CHECK(back[0].label == "ops-genie");
  CHECK(back[0].path == d.path);
  box->dead_letter(back[0], "HTTP 422", 0);
  const auto letter = parse_json(complete_lines(read_file(p.dead)).at(0));
  REQUIRE(letter.has_value());
  CHECK((*letter)["to"] == "ops-genie");
  CHECK((*letter)["kind"] == "opsgenie");
}
