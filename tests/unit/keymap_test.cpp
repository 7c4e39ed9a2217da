// KeyMap (SPEC §2): one window per key, least-recently-updated eviction at
// max_keys, and the list of slots that need boundary checks.
#include "engine/keymap.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace {

using swthrottle::engine::KeyMap;
using swthrottle::engine::Slot;
using swthrottle::window::Mode;
using swthrottle::window::WindowSpec;

const WindowSpec kSpec{1000, 10, 2};
const std::vector<Mode> kModes{Mode::Accurate, Mode::Efficient};

std::vector<std::string> keys_of(std::vector<std::shared_ptr<Slot>> slots) {
  std::vector<std::string> keys;
  for (const auto& s : slots) keys.push_back(s->key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Makes a slot's window non-quiet: a throttle with limit 0 suppresses, so a
// summary is pending.
void make_pending(const std::shared_ptr<Slot>& s) {
  const auto o = s->window->offer_throttle(0, 0, 0);
  REQUIRE_FALSE(o.passed);
  REQUIRE_FALSE(s->window->quiet());
}

TEST_CASE("keymap: get creates a slot once, then finds it") {
  for (Mode mode : kModes) {
    INFO("mode=" << (mode == Mode::Accurate ? "accurate" : "efficient"));
    KeyMap km(mode, kSpec, 3);
    CHECK(km.size() == 0);
    const KeyMap::Lookup a = km.get("a");
    CHECK(a.created);
    REQUIRE(a.slot != nullptr);
    CHECK(a.slot->key == "a");
    CHECK(a.evicted == nullptr);
    REQUIRE(a.slot->window != nullptr);
    CHECK(a.slot->window->spec().width_ms == 1000);  // the map's spec
    CHECK(a.slot->window->spec().buckets == 10);
    CHECK(a.slot->window->spec().events == 2);
    CHECK_FALSE(a.slot->active);

    const KeyMap::Lookup again = km.get(std::string("a"));
    CHECK_FALSE(again.created);
    CHECK(again.slot == a.slot);  // the same window
    CHECK(again.evicted == nullptr);
    CHECK(km.size() == 1);

    // Keys are compared as bytes: "" and "A" are other keys.
    CHECK(km.get("").created);
    CHECK(km.get("A").created);
    CHECK(km.size() == 3);
    CHECK(keys_of(km.all()) == std::vector<std::string>{"", "A", "a"});
  }
}

TEST_CASE("keymap: at max_keys, get evicts the least recently updated key and returns it") {
  for (Mode mode : kModes) {
    INFO("mode=" << (mode == Mode::Accurate ? "accurate" : "efficient"));
    KeyMap km(mode, kSpec, 3);
    const auto a = km.get("a").slot;
    const auto b = km.get("b").slot;
    km.get("c");
    // Recency, newest first: c b a. Touching a: a c b.
    CHECK_FALSE(km.get("a").created);
    // A 4th key pushes out b, the least recently updated: a d c... -> d a c.
    KeyMap::Lookup d = km.get("d");
    CHECK(d.created);
    REQUIRE(d.evicted != nullptr);
    CHECK(d.evicted == b);              // the victim itself, still alive for its holders
    CHECK(d.evicted->key == "b");
    CHECK(d.evicted->window != nullptr);
    CHECK(km.size() == 3);
    CHECK(keys_of(km.all()) == std::vector<std::string>{"a", "c", "d"});
    // b comes back as a new slot (a fresh window) and pushes out c: b d a.
    KeyMap::Lookup b2 = km.get("b");
    CHECK(b2.created);
    CHECK(b2.slot != b);
    REQUIRE(b2.evicted != nullptr);
    CHECK(b2.evicted->key == "c");
    // Finding a key is an update too: a b d, so e pushes out d.
    CHECK(km.get("a").slot == a);
    KeyMap::Lookup e = km.get("e");
    REQUIRE(e.evicted != nullptr);
    CHECK(e.evicted->key == "d");
    CHECK(keys_of(km.all()) == std::vector<std::string>{"a", "b", "e"});
  }
}

TEST_CASE("keymap: max_keys 0 keeps one key") {
  KeyMap km(Mode::Accurate, kSpec, 0);
  CHECK(km.get("a").evicted == nullptr);
  KeyMap::Lookup b = km.get("b");
  REQUIRE(b.evicted != nullptr);
  CHECK(b.evicted->key == "a");
  CHECK(km.size() == 1);
}

TEST_CASE("keymap: mark_active, active(prune) and all()") {
  for (Mode mode : kModes) {
    INFO("mode=" << (mode == Mode::Accurate ? "accurate" : "efficient"));
    KeyMap km(mode, kSpec, 3);
    const auto a = km.get("a").slot;
    const auto b = km.get("b").slot;
    const auto c = km.get("c").slot;
    CHECK(km.active(false).empty());
    CHECK(km.active(true).empty());

    km.mark_active(a);
    km.mark_active(a);  // once only
    km.mark_active(b);
    CHECK(a->active);
    CHECK(b->active);
    CHECK_FALSE(c->active);
    CHECK(keys_of(km.active(false)) == std::vector<std::string>{"a", "b"});
    CHECK(km.active(false).size() == 2);

    // b has a pending summary; a is quiet, so pruning drops it.
    make_pending(b);
    CHECK(a->window->quiet());
    CHECK(keys_of(km.active(true)) == std::vector<std::string>{"b"});
    CHECK_FALSE(a->active);
    CHECK(b->active);
    CHECK(keys_of(km.active(false)) == std::vector<std::string>{"b"});
    // Without prune nothing is dropped, quiet or not.
    km.mark_active(a);
    CHECK(keys_of(km.active(false)) == std::vector<std::string>{"a", "b"});

    // all(): every slot, active or not.
    CHECK(keys_of(km.all()) == std::vector<std::string>{"a", "b", "c"});
  }
}

TEST_CASE("keymap: an evicted slot leaves the active list and cannot come back to it") {
  for (Mode mode : kModes) {
    INFO("mode=" << (mode == Mode::Accurate ? "accurate" : "efficient"));
    KeyMap km(mode, kSpec, 2);
    const auto a = km.get("a").slot;
    const auto b = km.get("b").slot;
    make_pending(a);
    make_pending(b);
    km.mark_active(a);
    km.mark_active(b);
    // c pushes out a (least recently updated), although it is active.
    KeyMap::Lookup c = km.get("c");
    REQUIRE(c.evicted == a);
    CHECK_FALSE(a->active);
    CHECK(keys_of(km.active(false)) == std::vector<std::string>{"b"});
    // A decider still holding a must not put it back (it is out of the map).
    km.mark_active(a);
    CHECK_FALSE(a->active);
    CHECK(keys_of(km.active(true)) == std::vector<std::string>{"b"});
    // Nor after a new slot took the name "a" (which pushes out b).
    const auto a2 = km.get("a").slot;
    CHECK(a2 != a);
    km.mark_active(a);
    CHECK(km.active(false).empty());
    km.mark_active(a2);
    CHECK(km.active(false) == std::vector<std::shared_ptr<Slot>>{a2});
    CHECK(keys_of(km.all()) == std::vector<std::string>{"a", "c"});
  }
}

}  // namespace
