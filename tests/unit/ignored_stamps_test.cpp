// IgnoredStamps (pipeline/ignored_stamps.h): the one notice for an input
// whose lines carry timestamps while arrival time, the default here,
// ignores them; and when it comes.
#include "pipeline/ignored_stamps.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

namespace sw = swthrottle;
using sw::pipeline::IgnoredStamps;

constexpr int64_t kWallMs = 1'795'255'200'000;  // 2026-11-21T10:00:00Z
const std::string kStamped = "2026-11-21T09:00:00Z ERROR disk full";
const std::string kPlain = "ERROR disk full";

struct Notices {
  std::vector<std::string> got;
  IgnoredStamps probe(const std::string& name, const std::string& why = "standard input is read as it comes") {
    auto lt = sw::match::LogTime::make(sw::config::TimestampSpec{}, sw::config::TimezoneSpec{}, 0);
    REQUIRE(lt.ok());
    return IgnoredStamps(name, std::move(*lt), why, [this](const std::string& m) { got.push_back(m); });
  }
};

TEST_CASE("ignored stamps: the notice names the input, why arrival time is the default, and what to set") {
  Notices n;
  IgnoredStamps p = n.probe("-");
  for (int i = 0; i < 4; ++i) p.line(kStamped, false, kWallMs);
  CHECK(n.got.empty());
  p.line(kStamped, false, kWallMs);  // the 5th: at least half of 10, whatever comes next
  REQUIRE(n.got.size() == 1);
  CHECK(n.got[0] ==
        "(standard input): its lines carry timestamps (5 of 5 read), but time is \"arrival\" by default here "
        "(standard input is read as it comes): lines are counted when they are read; set time = \"log\" in "
        "[settings] or pass --time log to decide by their timestamps, or set time = \"arrival\" to keep arrival "
        "time without this notice");
  CHECK(p.done());
  for (int i = 0; i < 20; ++i) p.line(kStamped, false, kWallMs);
  p.end();
  CHECK(n.got.size() == 1);  // exactly once
}

TEST_CASE("ignored stamps: lines without timestamps, or only a few with one, are not reported") {
  Notices n;
  IgnoredStamps none = n.probe("a.log", "a.log is followed");
  for (int i = 0; i < 6; ++i) none.line(kPlain, false, kWallMs);
  CHECK(none.done());  // 6 of 10 without: settled
  none.end();
  IgnoredStamps few = n.probe("b.log", "b.log is followed");
  for (int i = 0; i < 10; ++i) few.line(i < 4 ? kStamped : kPlain, false, kWallMs);
  few.end();
  CHECK(n.got.empty());
}

TEST_CASE("ignored stamps: a short input is reported at its end, blank lines do not count") {
  Notices n;
  IgnoredStamps p = n.probe("c.log", "c.log is followed");
  p.line("", false, kWallMs);
  p.line(" \t", false, kWallMs);
  p.line(kStamped, false, kWallMs);
  p.line(kPlain, false, kWallMs);
  CHECK(n.got.empty());
  p.end();
  REQUIRE(n.got.size() == 1);
  CHECK(n.got[0].rfind("c.log: its lines carry timestamps (1 of 2 read), but time is \"arrival\" by default here "
                       "(c.log is followed): ",
                       0) == 0);
  p.end();
  CHECK(n.got.size() == 1);
}

TEST_CASE("ignored stamps: a container runtime's line has its envelope's time, an event, its first line's") {
  Notices n;
  IgnoredStamps envelope = n.probe("0.log");
  for (int i = 0; i < 5; ++i) envelope.line(kPlain, /*enveloped=*/true, kWallMs);
  CHECK(n.got.size() == 1);
  IgnoredStamps events = n.probe("d.log");
  // The stamp of a multi-line event is on its first line; one further down
  // (a date in a trace) is no stamp of the event.
  for (int i = 0; i < 5; ++i) events.line(kPlain + "\n" + kStamped, false, kWallMs);
  for (int i = 0; i < 5; ++i) events.line(kStamped + "\n\tat x", false, kWallMs);
  events.end();
  REQUIRE(n.got.size() == 2);
  CHECK(n.got[1].rfind("d.log: its lines carry timestamps (5 of 10 read)", 0) == 0);
}

}  // namespace
