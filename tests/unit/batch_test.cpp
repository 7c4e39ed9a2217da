// Batch built line by line (a followed file's backlog): a container
// runtime's lines keep their stream and time, whichever line comes first.
#include "pipeline/batch.h"

#include <doctest/doctest.h>

namespace {

namespace sw = swthrottle;
using sw::match::Stream;

TEST_CASE("batch: add() keeps each line's stream and envelope time, plain lines before and after as 0") {
  for (const bool plain_first : {false, true}) {
    CAPTURE(plain_first);
    sw::pipeline::Batch b;
    b.clear();
    if (plain_first) b.add(sw::input::Line{"plain"});
    b.add(sw::input::Line{"one", false, Stream::Stdout, 1000});
    b.add(sw::input::Line{"not a record"});
    b.add(sw::input::Line{"two", false, Stream::Stderr, 2000});
    b.done();
    const std::size_t first = plain_first ? 1 : 0;
    REQUIRE(b.size() == first + 3);
    REQUIRE(b.streams.size() == b.size());
    REQUIRE(b.origin_ms.size() == b.size());
    CHECK(b.line(first) == "one");
    CHECK(b.streams[first] == static_cast<uint8_t>(Stream::Stdout));
    CHECK(b.origin_ms[first] == 1000);
    CHECK(b.streams[first + 1] == 0);
    CHECK(b.streams[first + 2] == static_cast<uint8_t>(Stream::Stderr));
    CHECK(b.input_line(first + 2).origin_ms == 2000);
    if (plain_first) CHECK(b.streams[0] == 0);
    b.clear();
    b.add(sw::input::Line{"plain only"});
    b.done();
    CHECK(b.streams.empty());  // a plain batch carries none
  }
}

}  // namespace
