// StampWatch (pipeline/stamp_watch.h): one report, and when, for an input
// whose lines give no timestamp under time = "log".
#include "pipeline/stamp_watch.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

using swthrottle::pipeline::StampWatch;

struct Reports {
  std::vector<std::string> got;
  StampWatch watch(const std::string& name, uint64_t lines) {
    return StampWatch(
        name, [this](const std::string& m) { got.push_back(m); }, lines);
  }
};

TEST_CASE("stamp watch: K lines without a timestamp are reported once, with the first non-blank line") {
  Reports r;
  StampWatch w = r.watch("app.log", 3);
  w.line("", false);
  w.line("GET / 200", false);
  CHECK(r.got.empty());
  w.line("GET /b 200", false);  // the third: reported now, not at the end
  REQUIRE(r.got.size() == 1);
  CHECK(r.got[0] ==
        "app.log: no timestamp in the first 3 lines under time = \"log\": e.g. \"GET / 200\"; set timestamp in "
        "[settings] or a [[settings.input]] (swthrottle -r RULES --check app.log shows the forms that read it)");
  w.line("GET /c 200", false);
  w.end();
  CHECK(r.got.size() == 1);
}

TEST_CASE("stamp watch: a short input without a timestamp is reported at its end") {
  Reports r;
  StampWatch w = r.watch("-", 1000);
  w.line("one", false);
  w.line("two", false);
  CHECK(r.got.empty());
  w.end();
  REQUIRE(r.got.size() == 1);
  CHECK(r.got[0] ==
        "(standard input): no timestamp in its 2 lines under time = \"log\": e.g. \"one\"; set timestamp in "
        "[settings] or a [[settings.input]] (swthrottle -r RULES --check - shows the forms that read it)");
}

TEST_CASE("stamp watch: one timestamp ends the watch, no lines, no report") {
  Reports r;
  StampWatch a = r.watch("a.log", 2);
  a.line("no stamp", false);
  a.line("2026-01-01T00:00:00Z stamp", true);
  for (int i = 0; i < 5; ++i) a.line("trace", false);
  a.end();
  StampWatch b = r.watch("b.log", 2);
  b.end();
  CHECK(r.got.empty());
}

TEST_CASE("stamp watch: the sample is escaped and cut on a character boundary") {
  Reports r;
  StampWatch w = r.watch("x.log", 1);
  // 78 ASCII bytes, then "é" (2 bytes) ends at byte 80; the next "é" would cross it.
  const std::string line = "\x1b[31m" + std::string(73, 'a') + "\xc3\xa9\xc3\xa9tail";
  w.line(line, false);
  REQUIRE(r.got.size() == 1);
  CHECK(r.got[0] == "x.log: no timestamp in the first 1 lines under time = \"log\": e.g. \"\\u001b[31m" +
                        std::string(73, 'a') +
                        "\xc3\xa9...\"; set timestamp in [settings] or a [[settings.input]] (swthrottle -r RULES "
                        "--check x.log shows the "
                        "forms that read it)");
}

}  // namespace
