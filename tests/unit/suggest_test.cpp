#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "util/suggest.h"

using swthrottle::did_you_mean;
using swthrottle::edit_distance;

TEST_CASE("suggest: edit distance") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("treshold", "threshold") == 1);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("whne", "when") == 1);  // a swap of neighbours is one typo
  CHECK(edit_distance("ab", "ba") == 1);
}

TEST_CASE("suggest: did you mean only for close names") {
  std::vector<std::string> keys{"name", "kind", "threshold", "window", "when"};
  CHECK(did_you_mean("treshold", keys) == " (did you mean \"threshold\"?)");
  CHECK(did_you_mean("windw", keys) == " (did you mean \"window\"?)");
  CHECK(did_you_mean("colour", keys) == "");
  CHECK(did_you_mean("whne", keys) == " (did you mean \"when\"?)");
  CHECK(did_you_mean("x", std::vector<std::string>{}) == "");
}
