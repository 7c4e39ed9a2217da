// EventGrouper (input/event_grouper.h): exact events for each `multiline`
// rule, the same whether the lines come in batches of any size (events are
// carried across fills) or one by one (a followed file), and the caps.
#include "input/event_grouper.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/memory_file.h"

namespace {

namespace sw = swthrottle;
using sw::config::MultilineSpec;
using sw::input::EventGrouper;
using sw::input::LineReader;

MultilineSpec spec(MultilineSpec::Kind kind, std::string pattern = {}) {
  MultilineSpec s;
  s.kind = kind;
  s.pattern = std::move(pattern);
  return s;
}

struct Grouped {
  std::vector<std::string> events;
  uint64_t cut = 0;
};

// Batch form, `per_fill` lines read per fill (1: every event crosses fills).
Grouped by_batches(const MultilineSpec& s, const std::string& text, std::size_t per_fill) {
  const int fd = sw::test::memory_file(text);
  LineReader reader(fd);
  EventGrouper g(s);
  LineReader::Block block;
  std::string storage;
  Grouped out;
  while (g.fill(reader, block, storage, per_fill, 1 << 20)) {
    REQUIRE(block.text.size() == storage.size());
    for (const auto& [at, len] : block.spans) {
      out.events.emplace_back(block.text.substr(at, len));
      CHECK(block.text[at + len] == '\n');  // as LineReader's blocks: each followed by "\n"
    }
    out.cut += g.take_cut();
  }
  ::close(fd);
  return out;
}

// Line form, as a followed file gives them; the last event flushed at the end.
Grouped by_lines(const MultilineSpec& s, const std::string& text) {
  const int fd = sw::test::memory_file(text);
  LineReader reader(fd);
  EventGrouper g(s);
  Grouped out;
  int64_t t = 0;
  while (auto line = reader.next())
    if (auto e = g.add(*line, ++t)) out.events.emplace_back(e->text);
  if (auto e = g.flush()) out.events.emplace_back(e->text);
  out.cut = g.take_cut();
  ::close(fd);
  return out;
}

// Every form gives `want`.
void check_events(const MultilineSpec& s, const std::string& text, const std::vector<std::string>& want,
                  uint64_t cut = 0) {
  for (std::size_t per_fill : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{2048}}) {
    CAPTURE(per_fill);
    const Grouped b = by_batches(s, text, per_fill);
    CHECK(b.events == want);
    CHECK(b.cut == cut);
  }
  const Grouped l = by_lines(s, text);
  CHECK(l.events == want);
  CHECK(l.cut == cut);
}

const std::string kJavaLog =
    "2024-05-01 10:00:00,001 INFO [main] started\n"
    "2024-05-01 10:00:01,002 ERROR [worker-1] request failed\n"
    "java.lang.IllegalStateException: pool closed\n"
    "\tat com.example.Pool.get(Pool.java:42)\n"
    "\tat com.example.Handler.run(Handler.java:7)\n"
    "Caused by: java.io.IOException: broken pipe\n"
    "    at java.base/sun.nio.ch.IOUtil.write(IOUtil.java:62)\n"
    "\t... 12 more\n"
    "\tSuppressed: java.lang.RuntimeException: close\n"
    "\t\t... 3 common frames omitted\n"
    "2024-05-01 10:00:02,003 WARN [main] slow: java.io.IOException in the message stays on its line\n"
    "\n"
    "2024-05-01 10:00:03,004 INFO [main] done\n";

}  // namespace

TEST_CASE("event grouper: the java preset joins exception, frames, causes and elisions to the logger's line") {
  check_events(spec(MultilineSpec::Kind::Java), kJavaLog,
               {"2024-05-01 10:00:00,001 INFO [main] started",
                "2024-05-01 10:00:01,002 ERROR [worker-1] request failed\n"
                "java.lang.IllegalStateException: pool closed\n"
                "\tat com.example.Pool.get(Pool.java:42)\n"
                "\tat com.example.Handler.run(Handler.java:7)\n"
                "Caused by: java.io.IOException: broken pipe\n"
                "    at java.base/sun.nio.ch.IOUtil.write(IOUtil.java:62)\n"
                "\t... 12 more\n"
                "\tSuppressed: java.lang.RuntimeException: close\n"
                "\t\t... 3 common frames omitted",
                "2024-05-01 10:00:02,003 WARN [main] slow: java.io.IOException in the message stays on its line",
                // An empty line continues nothing under a continue rule: an event of its own.
                "", "2024-05-01 10:00:03,004 INFO [main] done"});
}

TEST_CASE("event grouper: a start pattern starts events, every other line continues, an empty one too") {
  const std::string log = "[1] a\n  b\n\nc\n[2] d\n[3] e\nf";  // no final "\n": still the end of an event
  check_events(spec(MultilineSpec::Kind::Start, R"(^\[\d+\])"), log, {"[1] a\n  b\n\nc", "[2] d", "[3] e\nf"});
  // Lines before the first start form an event of their own.
  check_events(spec(MultilineSpec::Kind::Start, R"(^\[\d+\])"), "x\ny\n[1] a\n", {"x\ny", "[1] a"});
}

TEST_CASE("event grouper: a continue pattern joins the lines it finds to the event before them") {
  check_events(spec(MultilineSpec::Kind::Continue, R"(^\s)"), "a\n b\n\tc\nd\n\ne\n f\n",
               {"a\n b\n\tc", "d", "", "e\n f"});
  // A continuation line with nothing before it starts an event.
  check_events(spec(MultilineSpec::Kind::Continue, R"(^\s)"), " x\ny\n", {" x", "y"});
}

TEST_CASE("event grouper: off groups nothing") {
  check_events(spec(MultilineSpec::Kind::Off), "a\n\tat b\n\n", {"a", "\tat b", ""});
}

TEST_CASE("event grouper: the python preset keeps a traceback, its exception line and chained tracebacks whole") {
  const std::string log =
      "2024-05-01 10:00:00 ERROR app: handler failed\n"
      "Traceback (most recent call last):\n"
      "  File \"/srv/app.py\", line 10, in handle\n"
      "    return table[key]\n"
      "KeyError: 'user'\n"
      "\n"
      "During handling of the above exception, another exception occurred:\n"
      "\n"
      "Traceback (most recent call last):\n"
      "  File \"/srv/app.py\", line 12, in handle\n"
      "    raise LookupError(key)\n"
      "LookupError: user\n"
      "2024-05-01 10:00:01 INFO app: next request\n"
      "Traceback (most recent call last):\n"
      "  File \"x.py\", line 1, in <module>\n"
      "ValueError: bad\n"
      "ValueError: a line like an exception, after one, starts an event\n"
      "2024-05-01 10:00:02 INFO app: bye\n";
  check_events(
      spec(MultilineSpec::Kind::Python), log,
      {"2024-05-01 10:00:00 ERROR app: handler failed\n"
       "Traceback (most recent call last):\n"
       "  File \"/srv/app.py\", line 10, in handle\n"
       "    return table[key]\n"
       "KeyError: 'user'\n"
       "\n"
       "During handling of the above exception, another exception occurred:\n"
       "\n"
       "Traceback (most recent call last):\n"
       "  File \"/srv/app.py\", line 12, in handle\n"
       "    raise LookupError(key)\n"
       "LookupError: user",
       "2024-05-01 10:00:01 INFO app: next request\n"
       "Traceback (most recent call last):\n"
       "  File \"x.py\", line 1, in <module>\n"
       "ValueError: bad",
       "ValueError: a line like an exception, after one, starts an event", "2024-05-01 10:00:02 INFO app: bye"});
}

TEST_CASE("event grouper: an event is cut at 500 lines and at 64 KiB, the rest starts new events, cuts are counted") {
  std::string log = "head\n";
  std::vector<std::string> want{"head"};
  for (int i = 1; i < 1100; ++i) {
    log += "\tat f" + std::to_string(i) + "\n";
    if (i == 500 || i == 1000) want.emplace_back();
    want.back() += (i % 500 == 0 ? "" : "\n") + std::string("\tat f") + std::to_string(i);
  }
  log += "next\n";
  want.emplace_back("next");
  check_events(spec(MultilineSpec::Kind::Java), log, want, 2);

  // Bytes: 1000-byte frames; 65 of them (plus the head and the "\n"s) pass 64 KiB.
  const std::string frame = "\tat " + std::string(996, 'x');
  std::string big = "head\n";
  for (int i = 0; i < 70; ++i) big += frame + "\n";
  const Grouped g = by_lines(spec(MultilineSpec::Kind::Java), big);
  REQUIRE(g.events.size() == 2);
  CHECK(g.cut == 1);
  CHECK(g.events[0].size() <= MultilineSpec::kDefaultMaxBytes);
  CHECK(g.events[0].size() + 1 + frame.size() > MultilineSpec::kDefaultMaxBytes);
  CHECK(g.events[0] + "\n" + g.events[1] + "\n" == big);
  CHECK(by_batches(spec(MultilineSpec::Kind::Java), big, 7).events == g.events);
}

TEST_CASE("event grouper: the idle deadline is a second after the last line, flush hands the event over once") {
  EventGrouper g(spec(MultilineSpec::Kind::Java));
  CHECK_FALSE(g.pending());
  CHECK_FALSE(g.add({"2024 ERROR x", false}, 100));
  CHECK_FALSE(g.add({"\tat a", false}, 700));
  CHECK(g.pending());
  CHECK(g.idle_deadline() == 1700);
  auto e = g.flush();
  REQUIRE(e);
  CHECK(e->text == "2024 ERROR x\n\tat a");
  CHECK_FALSE(g.pending());
  CHECK_FALSE(g.flush());
  // A frame after the flush has nothing to continue: it starts an event.
  CHECK_FALSE(g.add({"\tat b", false}, 2000));
  e = g.add({"next", false}, 2001);
  REQUIRE(e);
  CHECK(e->text == "\tat b");
}

TEST_CASE("event grouper: a truncated line makes its event truncated") {
  const int fd = sw::test::memory_file("head\n\tat " + std::string(100, 'y') + "\nnext\n");
  LineReader reader(fd, /*max_line=*/20);
  EventGrouper g(spec(MultilineSpec::Kind::Java));
  LineReader::Block block;
  std::string storage;
  std::vector<uint8_t> truncated;
  while (g.fill(reader, block, storage, 2048, 1 << 20))
    truncated.insert(truncated.end(), block.truncated.begin(), block.truncated.end());
  CHECK(truncated == std::vector<uint8_t>{1, 0});
  ::close(fd);
}

// The loghub samples of three Java services (Hadoop, Spark, Zookeeper) hold
// no stack trace: every line begins with its date. The independent model:
// an event starts at every line that begins with a digit. With a trace
// spliced in after line 1000, it is one event more, holding the trace whole.
TEST_CASE("event grouper: loghub Java service logs group into their dated lines, a spliced trace joins its line") {
  for (const char* name : {"Hadoop_2k.log", "Spark_2k.log", "Zookeeper_2k.log"}) {
    CAPTURE(name);
    std::ifstream f(std::string(SWTHROTTLE_SOURCE_DIR) + "/tests/data/loghub/" + name, std::ios::binary);
    REQUIRE(f);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string log = ss.str();
    std::size_t starts = 0;
    std::size_t at_1000 = 0;
    for (std::size_t i = 0, n = 0; i < log.size(); i = log.find('\n', i) + 1, ++n) {
      if (log[i] >= '0' && log[i] <= '9') ++starts;
      if (n == 1000) at_1000 = i;
      if (log.find('\n', i) == std::string::npos) break;
    }
    CHECK(starts == 2000);
    CHECK(by_batches(spec(MultilineSpec::Kind::Java), log, 2048).events.size() == starts);
    const std::string trace =
        "java.net.NoRouteToHostException: No Route to Host\r\n"
        "\tat sun.nio.ch.SocketChannelImpl.checkConnect(Native Method)\r\n"
        "\tat org.apache.hadoop.ipc.Client.call(Client.java:1476)\r\n"
        "\t... 9 more\r\n";
    const std::string spliced = log.substr(0, at_1000) + trace + log.substr(at_1000);
    const Grouped g = by_batches(spec(MultilineSpec::Kind::Java), spliced, 64);
    REQUIRE(g.events.size() == starts);
    const std::string& joined = g.events[999];
    CHECK(joined.find("\nsun.nio") == std::string::npos);
    CHECK(joined.find("\njava.net.NoRouteToHostException: No Route to Host\n\tat sun.nio.ch") != std::string::npos);
    CHECK(joined.ends_with("\n\t... 9 more"));
    CHECK(by_lines(spec(MultilineSpec::Kind::Java), spliced).events == g.events);
  }
}

TEST_CASE("event grouper: the caps of the spec (max_lines, max_bytes) are the ones applied") {
  MultilineSpec s = spec(MultilineSpec::Kind::Continue, R"(^\s)");
  s.max_lines = 3;
  check_events(s, "a\n 1\n 2\n 3\n 4\nb\n", {"a\n 1\n 2", " 3\n 4", "b"}, 1);
  s.max_lines = MultilineSpec::kDefaultMaxLines;
  s.max_bytes = 7;  // "a\n 1\n 2" is 7 bytes; " 3" would make it 10
  check_events(s, "a\n 1\n 2\n 3\n 4\nb\n", {"a\n 1\n 2", " 3\n 4", "b"}, 1);
}
