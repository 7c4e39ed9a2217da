// DueKeys (engine/due_keys.h): the timer wheel of a watched rule's keys.
#include "engine/due_keys.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/keymap.h"

namespace {

using swthrottle::engine::DueKeys;
using swthrottle::engine::KeyMap;
using swthrottle::engine::SlotRef;

std::vector<std::string> keys_of(const std::vector<SlotRef>& v) {
  std::vector<std::string> out;
  for (const SlotRef& s : v) out.emplace_back(s ? std::string(s->key()) : "(rule)");
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("due keys: entries come back at their bucket, in bucket order, each bucket once") {
  KeyMap map(swthrottle::window::Mode::Efficient, {1000, 10, 1}, 100);
  DueKeys due(10);  // a ring of 64
  due.add(map.get("a").slot, 5);
  due.add(map.get("b").slot, 3);
  due.add(map.get("c").slot, 5);
  due.add(SlotRef(), 4);                  // the rule's one window
  due.add(map.get("d").slot, 5 + 64);     // the same list, a turn of the ring later
  due.add(map.get("e").slot, 1'000'000);  // far away
  CHECK(due.size() == 6);
  std::vector<SlotRef> out;
  CHECK(due.take_next(2, out) == DueKeys::kNone);  // nothing up to 2
  CHECK(out.empty());
  CHECK(due.take_next(10, out) == 3);
  CHECK(keys_of(out) == std::vector<std::string>{"b"});
  CHECK(due.take_next(10, out) == 4);
  CHECK(keys_of(out) == std::vector<std::string>{"(rule)"});
  CHECK(due.take_next(10, out) == 5);
  CHECK(keys_of(out) == std::vector<std::string>{"a", "c"});
  CHECK(due.take_next(10, out) == DueKeys::kNone);
  CHECK(due.size() == 2);
  // Entries added for a bucket already taken come at the next one.
  due.add(map.get("f").slot, 7);
  CHECK(due.take_next(11, out) == 11);
  CHECK(keys_of(out) == std::vector<std::string>{"f"});
  // A long walk jumps to the earliest entry, however far.
  CHECK(due.take_next(5'000'000, out) == 69);
  CHECK(keys_of(out) == std::vector<std::string>{"d"});
  CHECK(due.take_next(5'000'000, out) == 1'000'000);
  CHECK(keys_of(out) == std::vector<std::string>{"e"});
  CHECK(due.take_next(5'000'000, out) == DueKeys::kNone);
  CHECK(due.size() == 0);
}

TEST_CASE("due keys: an entry keeps its key's slot alive after the map lets it go") {
  KeyMap map(swthrottle::window::Mode::Accurate, {1000, 10, 1}, 1);
  DueKeys due(10);
  const SlotRef a = map.get("a").slot;
  due.add(a, 3);
  CHECK(map.holds(a));
  auto l = map.get("b");  // max_keys 1: a is evicted
  REQUIRE(l.evicted == a);
  CHECK_FALSE(map.holds(a));
  CHECK(map.forget(l.slot));
  CHECK_FALSE(map.forget(l.slot));  // once
  CHECK(map.size() == 0);
  std::vector<SlotRef> out;
  CHECK(due.take_next(3, out) == 3);
  REQUIRE(out.size() == 1);
  CHECK(out[0]->key() == "a");  // still readable
}
