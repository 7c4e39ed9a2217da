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

TEST_CASE("line time: log time takes the line's stamp, else the input's last one; before any, untimed") {
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

TEST_CASE("line time: arrival time is when the line is read, never before the engine's now") {
  CHECK(LineTime::arrival(1000, 500).t_ms == 1000);
  CHECK(LineTime::arrival(1000, 1500).t_ms == 1500);
  CHECK(LineTime::arrival(1000, -1).timed);
}

}  // namespace
