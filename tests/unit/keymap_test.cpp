// KeyMap (DESIGN.md §2): one window per key, least-recently-updated eviction at
// max_keys, and the list of slots that need boundary checks.
#include "engine/keymap.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <latch>
#include <list>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "support/seed.h"

namespace {

using swthrottle::engine::KeyMap;
using swthrottle::engine::Slot;
using swthrottle::engine::SlotRef;
using swthrottle::window::Mode;
using swthrottle::window::Summary;
using swthrottle::window::ThrottleOutcome;
using swthrottle::window::WindowSpec;

const WindowSpec kSpec{1000, 10, 2};
const std::vector<Mode> kModes{Mode::Accurate, Mode::Efficient};

std::string mode_name(Mode m) { return m == Mode::Accurate ? "accurate" : "efficient"; }

std::vector<std::string> keys_of_in_order(const std::vector<SlotRef>& slots) {
  std::vector<std::string> keys;
  for (const auto& s : slots) keys.push_back(std::string(s->key()));
  return keys;
}

std::vector<std::string> keys_of(const std::vector<SlotRef>& slots) {
  std::vector<std::string> keys;
  for (const auto& s : slots) keys.push_back(std::string(s->key()));
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Makes a slot's window non-quiet: a throttle with limit 0 suppresses, so a
// summary is pending.
void make_pending(const SlotRef& s) {
  const auto o = s->window().offer_throttle(0, 0, 0);
  REQUIRE_FALSE(o.passed);
  REQUIRE_FALSE(s->window().quiet());
}

TEST_CASE("keymap: get creates a slot once, then finds it") {
  for (Mode mode : kModes) {
    INFO("mode=" << mode_name(mode));
    KeyMap km(mode, kSpec, 3);
    CHECK(km.size() == 0);
    const KeyMap::Lookup a = km.get("a");
    CHECK(a.created);
    REQUIRE(a.slot != nullptr);
    CHECK(a.slot->key() == "a");
    CHECK(a.evicted == nullptr);
    CHECK(a.slot->window().spec().width_ms == 1000);  // the map's spec
    CHECK(a.slot->window().spec().buckets == 10);
    CHECK(a.slot->window().spec().events == 2);
    CHECK_FALSE(a.slot->active());

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
    INFO("mode=" << mode_name(mode));
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
    CHECK(d.evicted == b);  // the victim itself, still alive for its holders
    CHECK(d.evicted->key() == "b");
    CHECK(km.size() == 3);
    CHECK(keys_of(km.all()) == std::vector<std::string>{"a", "c", "d"});
    // b comes back as a new slot (a fresh window) and pushes out c: b d a.
    KeyMap::Lookup b2 = km.get("b");
    CHECK(b2.created);
    CHECK(b2.slot != b);
    REQUIRE(b2.evicted != nullptr);
    CHECK(b2.evicted->key() == "c");
    // Finding a key is an update too: a b d, so e pushes out d.
    CHECK(km.get("a").slot == a);
    KeyMap::Lookup e = km.get("e");
    REQUIRE(e.evicted != nullptr);
    CHECK(e.evicted->key() == "d");
    CHECK(keys_of(km.all()) == std::vector<std::string>{"a", "b", "e"});
  }
}

TEST_CASE("keymap: max_keys 0 keeps one key") {
  KeyMap km(Mode::Accurate, kSpec, 0);
  CHECK(km.get("a").evicted == nullptr);
  KeyMap::Lookup b = km.get("b");
  REQUIRE(b.evicted != nullptr);
  CHECK(b.evicted->key() == "a");
  CHECK(km.size() == 1);
}

TEST_CASE("keymap: mark_active, active(prune) and all()") {
  for (Mode mode : kModes) {
    INFO("mode=" << mode_name(mode));
    KeyMap km(mode, kSpec, 3);
    const auto a = km.get("a").slot;
    const auto b = km.get("b").slot;
    const auto c = km.get("c").slot;
    CHECK(km.active(false).empty());
    CHECK(km.active(true).empty());

    km.mark_active(a);
    km.mark_active(a);  // once only
    km.mark_active(b);
    CHECK(a->active());
    CHECK(b->active());
    CHECK_FALSE(c->active());
    CHECK(keys_of(km.active(false)) == std::vector<std::string>{"a", "b"});
    CHECK(km.active(false).size() == 2);

    // b has a pending summary; a is quiet, so pruning drops it.
    make_pending(b);
    CHECK(a->window().quiet());
    CHECK(keys_of(km.active(true)) == std::vector<std::string>{"b"});
    CHECK_FALSE(a->active());
    CHECK(b->active());
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
    INFO("mode=" << mode_name(mode));
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
    CHECK_FALSE(a->active());
    CHECK(keys_of(km.active(false)) == std::vector<std::string>{"b"});
    // A decider still holding a must not put it back (it is out of the map).
    km.mark_active(a);
    CHECK_FALSE(a->active());
    CHECK(keys_of(km.active(true)) == std::vector<std::string>{"b"});
    // Nor after a new slot took the name "a" (which pushes out b).
    const auto a2 = km.get("a").slot;
    CHECK(a2 != a);
    km.mark_active(a);
    CHECK(km.active(false).empty());
    km.mark_active(a2);
    CHECK(km.active(false) == std::vector<SlotRef>{a2});
    CHECK(keys_of(km.all()) == std::vector<std::string>{"a", "c"});
  }
}

TEST_CASE("keymap: by_age lists the least recently updated key first, finding a key updates it") {
  for (Mode mode : kModes) {
    INFO("mode=" << mode_name(mode));
    KeyMap km(mode, kSpec, 5);
    CHECK(km.by_age().empty());
    km.get("a");
    km.get("b");
    km.get("c");
    CHECK(keys_of_in_order(km.by_age()) == std::vector<std::string>{"a", "b", "c"});
    km.get("a");  // found: now the most recent
    km.get("d");
    CHECK(keys_of_in_order(km.by_age()) == std::vector<std::string>{"b", "c", "a", "d"});
    km.get("d");  // already the most recent: no change
    km.get("b");
    CHECK(keys_of_in_order(km.by_age()) == std::vector<std::string>{"c", "a", "d", "b"});
    // Full at 5: f pushes out the front of by_age, c.
    km.get("e");
    const KeyMap::Lookup f = km.get("f");
    REQUIRE(f.evicted != nullptr);
    CHECK(f.evicted->key() == "c");
    CHECK(keys_of_in_order(km.by_age()) == std::vector<std::string>{"a", "d", "b", "e", "f"});
  }
}

TEST_CASE("keymap: keys are bytes: empty, embedded NUL, long") {
  for (Mode mode : kModes) {
    INFO("mode=" << mode_name(mode));
    KeyMap km(mode, kSpec, 10);
    const std::string nul("a\0b", 3);
    const std::string nul2("a\0c", 3);
    const std::string long_key(1000, 'x');
    const SlotRef s1 = km.get(nul).slot;
    const SlotRef s2 = km.get(nul2).slot;
    const SlotRef s3 = km.get(long_key).slot;
    const SlotRef s4 = km.get("a").slot;
    CHECK(km.size() == 4);
    CHECK(s1->key() == nul);
    CHECK(s1->key().size() == 3);
    CHECK(s2->key() == nul2);
    CHECK(s3->key() == long_key);
    CHECK(s4->key() == "a");
    CHECK(km.get(nul).slot == s1);
    CHECK(km.get(long_key).slot == s3);
    // Every window is a working window of its own.
    s3->window().add(5, 0, 7);
    s1->window().add(5, 1, 2);
    std::vector<uint64_t> c(2);
    s3->window().read(c);
    CHECK(c == std::vector<uint64_t>{7, 0});
    s1->window().read(c);
    CHECK(c == std::vector<uint64_t>{0, 2});
    s4->window().read(c);
    CHECK(c == std::vector<uint64_t>{0, 0});
  }
}

TEST_CASE("keymap: an evicted slot keeps working for its holders, also after the map is gone") {
  for (Mode mode : kModes) {
    INFO("mode=" << mode_name(mode));
    SlotRef held;
    SlotRef b;
    {
      KeyMap km(mode, kSpec, 1);
      held = km.get("a").slot;
      // A throttle of 1: the first line passes, the second is suppressed.
      CHECK(held->window().offer_throttle(1000, 1000, 1).passed);
      KeyMap::Lookup lb = km.get("b");  // pushes out a, which a decider still holds
      REQUIRE(lb.evicted == held);
      CHECK_FALSE(held->window().offer_throttle(1001, 1001, 1).passed);
      const Summary s = held->window().take_pending();
      CHECK(s.suppressed == 1);
      CHECK(s.first_ms == 1001);
      // The name comes back as a new, empty window.
      const SlotRef a2 = km.get("a").slot;
      CHECK(a2 != held);
      std::vector<uint64_t> c(2);
      a2->window().read(c);
      CHECK(c == std::vector<uint64_t>{0, 0});
      held->window().read(c);
      CHECK(c == std::vector<uint64_t>{1, 0});
      b = std::move(lb.slot);
    }
    // The map is gone; the slots held are not (AddressSanitizer would object).
    CHECK(held->key() == "a");
    CHECK(b->key() == "b");
    CHECK(b->window().offer_throttle(1002, 1002, 1).passed);
    CHECK_FALSE(b->active());
  }
}

TEST_CASE("keymap: agrees with a model LRU through table growth and many evictions") {
  const uint64_t seed = swthrottle::test::base_seed(5);
  CAPTURE(seed);
  for (Mode mode : kModes) {
    for (std::size_t max_keys : {std::size_t{1}, std::size_t{7}, std::size_t{300}, std::size_t{5000}}) {
      INFO("mode=" << mode_name(mode) << " max_keys=" << max_keys);
      std::mt19937_64 rng(seed + max_keys);
      // A pool larger than max_keys, keys of 0 to 40 bytes.
      std::vector<std::string> pool;
      for (std::size_t i = 0; i < max_keys * 2 + 10; ++i) {
        std::string k = std::to_string(i);
        k.resize(k.size() + rng() % 32, static_cast<char>('a' + i % 26));
        pool.push_back(k);
      }
      pool.push_back("");
      KeyMap km(mode, kSpec, max_keys);
      std::list<std::string> lru;  // front: most recent
      std::unordered_map<std::string, std::pair<std::list<std::string>::iterator, SlotRef>> model;
      for (int op = 0; op < 30000; ++op) {
        // Mostly a hot subset (hits), sometimes anything (misses, evictions).
        const std::size_t n = rng() % 4 == 0 ? pool.size() : std::min(pool.size(), max_keys + 1);
        const std::string& key = pool[rng() % n];
        KeyMap::Lookup l = km.get(key);
        REQUIRE(l.slot != nullptr);
        REQUIRE(l.slot->key() == key);
        auto it = model.find(key);
        if (it != model.end()) {
          REQUIRE_FALSE(l.created);
          REQUIRE(l.evicted == nullptr);
          REQUIRE(l.slot == it->second.second);
          lru.splice(lru.begin(), lru, it->second.first);
          continue;
        }
        REQUIRE(l.created);
        if (model.size() == max_keys) {
          const std::string victim = lru.back();
          REQUIRE(l.evicted != nullptr);
          REQUIRE(l.evicted->key() == victim);
          REQUIRE(l.evicted == model.at(victim).second);
          model.erase(victim);
          lru.pop_back();
        } else {
          REQUIRE(l.evicted == nullptr);
        }
        lru.push_front(key);
        model.emplace(key, std::make_pair(lru.begin(), l.slot));
        REQUIRE(km.size() == model.size());
      }
      std::vector<std::string> want(lru.rbegin(), lru.rend());
      CHECK(keys_of_in_order(km.by_age()) == want);
      std::vector<std::string> all = keys_of(km.all());
      std::sort(want.begin(), want.end());
      CHECK(all == want);
    }
  }
}

// For ThreadSanitizer: deciders on several threads look keys up, decide on
// their windows, mark them active and hold on to some while other threads
// evict them; a checker lists and prunes meanwhile.
TEST_CASE("keymap: concurrent get, evict, decide and mark_active") {
  constexpr int kThreads = 4;
  constexpr int kOps = 4000;
  constexpr std::size_t kMax = 16;
  const uint64_t seed = swthrottle::test::base_seed(11);
  CAPTURE(seed);
  for (Mode mode : kModes) {
    INFO("mode=" << mode_name(mode));
    KeyMap km(mode, kSpec, kMax);
    std::atomic<uint64_t> created{0}, evicted{0}, suppressed{0}, reported{0};
    std::atomic<bool> too_many{false};
    std::latch start(kThreads + 1);
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t) {
      pool.emplace_back([&, t] {
        std::mt19937_64 rng(seed * 31 + static_cast<uint64_t>(t));
        std::vector<SlotRef> held(3);  // slots kept across lookups, evicted or not
        start.arrive_and_wait();
        for (int i = 0; i < kOps; ++i) {
          KeyMap::Lookup l = km.get("key" + std::to_string(rng() % 40));
          if (l.created) created.fetch_add(1);
          if (l.evicted) {
            evicted.fetch_add(1);
            // What an evicted throttle key held back is reported once (Engine::flush_evicted).
            reported.fetch_add(l.evicted->window().take_pending().suppressed);
          }
          // A throttle of 2 per 10 s over 150 s: lines pass, are suppressed,
          // and passes carry summaries.
          const int64_t now = i * 37;
          auto decide = [&](const SlotRef& s) {
            const ThrottleOutcome o = s->window().offer_throttle(now, now, 2);
            reported.fetch_add(o.summary.suppressed);
            if (o.passed) return;
            suppressed.fetch_add(1);
            km.mark_active(s);
          };
          decide(l.slot);
          SlotRef& slot = held[static_cast<std::size_t>(i) % held.size()];
          if (slot) reported.fetch_add(slot->window().take_pending().suppressed);  // before letting go
          slot = std::move(l.slot);
          // A held slot may have been evicted meanwhile: it still decides.
          if (const SlotRef& old = held[rng() % held.size()]) decide(old);
        }
        for (const SlotRef& h : held)
          if (h) reported.fetch_add(h->window().take_pending().suppressed);
      });
    }
    std::thread checker([&] {
      start.arrive_and_wait();
      for (int i = 0; i < 300; ++i) {
        if (km.size() > kMax || km.all().size() > kMax || km.by_age().size() > kMax) too_many = true;
        for (const SlotRef& s : km.active(i % 2 == 0))
          reported.fetch_add(s->window().tick_throttle(i * 500, 2).suppressed);
      }
    });
    for (auto& th : pool) th.join();
    checker.join();
    CHECK_FALSE(too_many.load());
    // Every slot created is in the map or was handed out as evicted exactly once.
    CHECK(created.load() - evicted.load() == km.size());
    CHECK(km.size() == kMax);
    CHECK(evicted.load() > 0);
    // No suppressed line is lost or reported twice, whichever thread reports
    // it and whether its slot was evicted meanwhile.
    for (const SlotRef& s : km.all()) reported.fetch_add(s->window().take_pending().suppressed);
    CHECK(reported.load() == suppressed.load());
    CHECK(suppressed.load() > 0);
  }
}

}  // namespace
