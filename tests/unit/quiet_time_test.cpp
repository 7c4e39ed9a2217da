// QuietTime (pipeline/quiet_time.h): the log time a quiet followed input has
// reached, from its last stamp and the steady clock.
#include "pipeline/quiet_time.h"

#include <doctest/doctest.h>

namespace {

using swthrottle::pipeline::kNoStamp;
using swthrottle::pipeline::QuietTime;

TEST_CASE("quiet time: moves on with the steady clock from the last stamp, quiet_after behind") {
  QuietTime q;
  CHECK(q.reached(50'000, 5'000) == kNoStamp);  // never caught up: reading
  q.caught_up(1'000'000, 20'000);               // stamp 1 000 000 ms, caught up at steady 20 s
  CHECK(q.reached(20'000, 5'000) == 995'000);   // before the last stamp: moves nothing
  CHECK(q.reached(25'000, 5'000) == 1'000'000);
  CHECK(q.reached(37'500, 5'000) == 1'012'500);
  CHECK(q.reached(37'500, 0) == 1'017'500);
}

TEST_CASE("quiet time: nothing while reading, before any stamp, or with quiet_after off") {
  QuietTime q;
  q.caught_up(kNoStamp, 20'000);  // no stamp seen yet: nothing to move on from
  CHECK(q.reached(90'000, 5'000) == kNoStamp);
  q.caught_up(1'000'000, 20'000);
  CHECK(q.reached(90'000, -1) == kNoStamp);  // quiet_after = "off"
  q.reading();
  CHECK(q.reached(90'000, 5'000) == kNoStamp);
  q.caught_up(1'100'000, 95'000);  // caught up again: from the new stamp and moment
  CHECK(q.reached(100'000, 5'000) == 1'100'000);
}

}  // namespace
