// LineTime (pipeline/line_time.h): the time each line of one input is
// decided at, as a table of lines in input order.
#include "pipeline/line_time.h"

#include <doctest/doctest.h>

#include <vector>

namespace {

using swthrottle::pipeline::kNoStamp;
using swthrottle::pipeline::LineTime;

struct Row {
  int64_t stamp;  // the line's own, or kNoStamp
  bool timed;     // expected
  int64_t t_ms;   // expected, when timed
};

void check_rows(LineTime& lt, const std::vector<Row>& rows) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    const LineTime::Stamp s = lt.log(rows[i].stamp);
    CHECK(s.timed == rows[i].timed);
    if (rows[i].timed) CHECK(s.t_ms == rows[i].t_ms);
  }
}

TEST_CASE("line time: log time takes the line's stamp, else the input's last one, before any, untimed") {
  LineTime lt;
  check_rows(lt, {
                     {kNoStamp, false, 0},  // no stamp yet: untimed
                     {kNoStamp, false, 0},
                     {5000, true, 5000},
                     {kNoStamp, true, 5000},  // a trace line: its first line's time
                     {4000, true, 4000},      // older: taken as it is (the engine counts it late)
                     {kNoStamp, true, 4000},  // the last stamp, not the newest
                     {9000, true, 9000},
                 });
  const LineTime::Counts c = lt.take_counts();
  CHECK(c.untimed == 2);
  CHECK(c.no_timestamp == 2);
  CHECK(c.newest == 9000);
  // Taken: counted afresh.
  const LineTime::Counts again = lt.take_counts();
  CHECK(again.untimed == 0);
  CHECK(again.no_timestamp == 0);
  CHECK(again.newest == kNoStamp);
  check_rows(lt, {{kNoStamp, true, 9000}});
}

TEST_CASE("line time: a time resumed from --state dates lines before the first stamp") {
  LineTime lt(7000);
  check_rows(lt, {{kNoStamp, true, 7000}, {8000, true, 8000}});
  const LineTime::Counts c = lt.take_counts();
  CHECK(c.untimed == 0);
  CHECK(c.no_timestamp == 1);
  CHECK(c.newest == 8000);  // only the input's own stamps
}

// Trusted time: rows with the wall clock and why a stamp was not trusted.
struct TrustRow {
  int64_t stamp;
  bool timed;
  int64_t t_ms;
  LineTime::Untrusted why = LineTime::Untrusted::None;
};

void check_trust(LineTime& lt, int64_t wall_ms, const std::vector<TrustRow>& rows) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    const LineTime::Stamp s = lt.log(rows[i].stamp, wall_ms);
    CHECK(s.timed == rows[i].timed);
    if (rows[i].timed) CHECK(s.t_ms == rows[i].t_ms);
    CHECK(lt.untrusted() == rows[i].why);
  }
}

constexpr int64_t kMin = 60'000;
constexpr int64_t kHour = 3'600'000;
constexpr int64_t kDay = 86'400'000;
constexpr int64_t kWall = 1'795'255'200'000;  // 2026-11-21T10:00:00Z
constexpr int64_t k2099 = 4'070'908'800'000;  // 2099-01-01T00:00:00Z
using Why = LineTime::Untrusted;

TEST_CASE("line time: a stamp beyond max_future is not trusted, the line takes the input's last trusted time") {
  LineTime lt;
  lt.set_trust({kMin, -1});
  check_trust(lt, kWall,
              {
                  {k2099, false, 0, Why::Future},            // none trusted yet: untimed
                  {kWall - 5000, true, kWall - 5000},        //
                  {k2099, true, kWall - 5000, Why::Future},  // does not move now
                  {kNoStamp, true, kWall - 5000},            // a trace line: the last trusted stamp
                  {kWall + kMin, true, kWall + kMin},        // at the bound: trusted
                  {kWall + kMin + 1, true, kWall + kMin, Why::Future},
                  {kWall - 1000, true, kWall - 1000},
              });
  const LineTime::Counts c = lt.take_counts();
  CHECK(c.untrusted == 3);
  CHECK(c.untimed == 1);
  CHECK(c.no_timestamp == 1);
  CHECK(c.newest == kWall + kMin);  // only trusted stamps: --state never saves 2099
  // Off: taken as it is.
  lt.set_trust({-1, -1});
  check_trust(lt, kWall, {{k2099, true, k2099}});
}

TEST_CASE("line time: in a replay, a lone stamp far ahead of its neighbours is dropped when the next goes back") {
  const int64_t t = kWall - 400 * kDay;  // a replay of last year's log
  LineTime lt;
  lt.set_trust({kMin, kDay});
  check_trust(lt, kWall,
              {
                  {t, true, t},
                  {t + 1000, true, t + 1000},
                  {t + 9 * kDay, true, t + 1000, Why::Jump},  // held: decided at the last trusted time
                  {kNoStamp, true, t + 1000},
                  {t + 2000, true, t + 2000},  // back: the jump was a lone outlier
                  {t + 3000, true, t + 3000},
                  {t + 9 * kDay + 500, true, t + 3000, Why::Jump},  // judged afresh: held again
                  {t + 4000, true, t + 4000},
              });
  const LineTime::Counts c = lt.take_counts();
  CHECK(c.untrusted == 2);
  CHECK(c.newest == t + 4000);
}

TEST_CASE("line time: a jump is confirmed by the next stamp, up to a minute before it") {
  const int64_t t = kWall - 400 * kDay;
  const int64_t j = t + 3 * kDay;
  LineTime lt;
  lt.set_trust({kMin, kDay});
  check_trust(lt, kWall,
              {
                  {t, true, t},
                  {j, true, t, Why::Jump},
                  {j - LineTime::kJumpSlackMs, true, j - LineTime::kJumpSlackMs},  // confirms it
                  {j + 1000, true, j + 1000},
                  {j - 5000, true, j - 5000},  // older than the newest: late, but trusted
              });
  const LineTime::Counts c = lt.take_counts();
  CHECK(c.untrusted == 1);
  CHECK(c.newest == j + 1000);
  // A stamp beyond max_future says nothing about a held jump.
  check_trust(lt, kWall,
              {
                  {j + 5 * kDay, true, j - 5000, Why::Jump},
                  {k2099, true, j - 5000, Why::Future},
                  {j + 5 * kDay + 1, true, j + 5 * kDay + 1},  // still confirms the held jump
              });
  // Just too far back: the jump is dropped, and this line is judged against
  // the newest trusted time (j + 5 d + 1): a jump too, held in its turn.
  check_trust(lt, kWall,
              {
                  {j + 20 * kDay, true, j + 5 * kDay + 1, Why::Jump},
                  {j + 20 * kDay - LineTime::kJumpSlackMs - 1, true, j + 5 * kDay + 1, Why::Jump},
              });
}

TEST_CASE("line time: sparse logs are not outliers: lines hours apart, and a gap of days costs one line") {
  const int64_t t = kWall - 400 * kDay;
  LineTime lt;
  lt.set_trust({kMin, kDay});
  std::vector<TrustRow> rows;
  for (int i = 0; i < 24; ++i) rows.push_back({t + i * 2 * kHour, true, t + i * 2 * kHour});  // every 2 h
  const int64_t after = t + 48 * kHour + 5 * kDay;                                            // a gap of days
  rows.push_back({after, true, t + 46 * kHour, Why::Jump});  // only the first line after it
  for (int i = 1; i < 10; ++i) rows.push_back({after + i * 1000, true, after + i * 1000});
  check_trust(lt, kWall, rows);
  CHECK(lt.take_counts().untrusted == 1);
}

TEST_CASE(
    "line time: a jump to within max_jump of the wall clock needs no confirmation (a live log after a quiet "
    "weekend)") {
  LineTime lt(kWall - 3 * kDay);  // resumed from --state
  lt.set_trust({kMin, kDay});
  check_trust(lt, kWall,
              {
                  {kWall - 1000, true, kWall - 1000},
                  {kWall, true, kWall},
              });
  // The resumed time is the reference of a jump too.
  LineTime replay(kWall - 30 * kDay);
  replay.set_trust({kMin, kDay});
  check_trust(replay, kWall, {{kWall - 10 * kDay, true, kWall - 30 * kDay, Why::Jump}});
}

// Issue 32: one line stamped "now" in last year's log, replayed, was taken
// because it was near the wall clock: every later line was late. In a
// replay the wall clock excuses no jump; the lone "now" is an outlier.
TEST_CASE("line time: in a replay, a jump to the wall clock still waits for the next stamp") {
  const int64_t t = kWall - 400 * kDay;
  LineTime replay;
  replay.set_trust({kMin, kDay, /*replay=*/true});
  check_trust(replay, kWall,
              {
                  {t, true, t},
                  {kWall - 1000, true, t, Why::Jump},  // live input would take it (above)
                  {t + 1000, true, t + 1000},          // not confirmed: it was a lone outlier
                  {t + 2000, true, t + 2000},
              });
  const LineTime::Counts c = replay.take_counts();
  CHECK(c.untrusted == 1);
  CHECK(c.newest == t + 2000);  // what --state saves: never the outlier
  // A real jump in a replay is confirmed as ever.
  check_trust(replay, kWall,
              {
                  {kWall - 1000, true, t + 2000, Why::Jump},
                  {kWall - 500, true, kWall - 500},
              });
  // The same lines as live input: the wall clock corroborates the jump.
  LineTime live;
  live.set_trust({kMin, kDay});
  check_trust(live, kWall, {{t, true, t}, {kWall - 1000, true, kWall - 1000}});
}

TEST_CASE("line time: arrival time is when the line is read, never before the engine's now") {
  CHECK(LineTime::arrival(1000, 500).t_ms == 1000);
  CHECK(LineTime::arrival(1000, 1500).t_ms == 1500);
  CHECK(LineTime::arrival(1000, -1).timed);
}

}  // namespace
