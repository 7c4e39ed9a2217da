// ValueMemory (engine/value_memory.h) against a naive model of what the man
// page says a `new` rule remembers: a list of values in the order they were
// last seen, searched from the front; forgotten from the back, while the
// least recently seen one was last seen `remember` ago or more, or to make
// room at max_values; nothing new while learning. Seeded random values and
// times (steps back included), restarts through save/load.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <list>
#include <memory>
#include <random>
#include <vector>

#include "engine/value_memory.h"
#include "support/seed.h"

using swthrottle::engine::SeenValues;
using swthrottle::engine::ValueMemory;

namespace {

class MemoryModel {
 public:
  MemoryModel(int64_t remember, int64_t learn, std::size_t cap) : remember_(remember), learn_(learn), cap_(cap) {}

  ValueMemory::Outcome see(uint64_t h, int64_t t) {
    if (learn_until_ < 0) learn_until_ = t + learn_;
    const bool learning = t < learn_until_;
    while (!list_.empty() && list_.back().last <= t - remember_) list_.pop_back();
    ValueMemory::Outcome o;
    auto it = std::find_if(list_.begin(), list_.end(), [&](const V& v) { return v.hash == h; });
    if (it != list_.end()) {
      const int64_t before = it->last;
      V v{h, std::max(before, t)};
      list_.erase(it);
      list_.push_front(v);
      o.seen = learning                  ? ValueMemory::Seen::Learning
               : t - before >= remember_ ? ValueMemory::Seen::New
                                         : ValueMemory::Seen::Again;
      return o;
    }
    if (list_.size() >= cap_) {
      list_.pop_back();
      o.forgot = true;
    }
    list_.push_front(V{h, t});
    o.seen = learning ? ValueMemory::Seen::Learning : ValueMemory::Seen::New;
    return o;
  }
  std::size_t size() const { return list_.size(); }
  // Least recently seen first, as save() writes them.
  std::vector<SeenValues::Value> values() const {
    std::vector<SeenValues::Value> out;
    for (auto it = list_.rbegin(); it != list_.rend(); ++it) out.push_back({it->hash, it->last});
    return out;
  }

 private:
  struct V {
    uint64_t hash;
    int64_t last;
  };
  int64_t remember_, learn_;
  std::size_t cap_;
  int64_t learn_until_ = -1;
  std::list<V> list_;
};

}  // namespace

TEST_CASE("new values: the memory against the model, over random values and times, with restarts") {
  const uint64_t base = swthrottle::test::base_seed(30);
  MESSAGE("value memory base seed " << base << " (replay: SWTHROTTLE_SEED=" << base << ")");
  int news = 0, agains = 0, learnings = 0, forgotten = 0;
  for (uint64_t i = 0; i < 120; ++i) {
    const uint64_t seed = base + i;
    INFO("seed " << seed);
    std::mt19937_64 rng(seed);
    auto r = [&](uint64_t n) { return rng() % n; };
    const int64_t remember = std::array<int64_t, 3>{10, 1000, 100000}[r(3)];
    const int64_t learn = std::array<int64_t, 3>{0, 500, 5000}[r(3)];
    const std::size_t cap = std::array<std::size_t, 4>{1, 7, 100, 100000}[r(4)];
    const uint64_t pool = std::array<uint64_t, 4>{3, 50, 400, 100000}[r(4)];
    MemoryModel model(remember, learn, cap);
    auto mem = std::make_unique<ValueMemory>(remember, learn, cap);
    int64_t now = static_cast<int64_t>(r(1u << 20));
    for (int op = 0; op < 1500; ++op) {
      INFO("op " << op);
      if (op % 400 == 399) {  // a restart through --state
        const SeenValues st = mem->save();
        CHECK(st.values.size() == model.size());
        mem = std::make_unique<ValueMemory>(remember, learn, cap);
        mem->load(st);
      }
      const uint64_t k = r(100);
      int64_t t = now + static_cast<int64_t>(r(static_cast<uint64_t>(remember / 4 + 1)));
      if (k < 10) t = now - static_cast<int64_t>(r(static_cast<uint64_t>(remember)));  // a step back
      if (k >= 97) t = now + 3 * remember;                                             // a gap
      t = std::max<int64_t>(t, 0);
      now = std::max(now, t);
      // Well mixed hashes, as util/value_hash.h gives.
      const uint64_t h = (r(pool) + 1) * 0x9E3779B97F4A7C15u;
      const ValueMemory::Outcome want = model.see(h, t);
      const ValueMemory::Outcome got = mem->see(h, t);
      CHECK(got.seen == want.seen);
      CHECK(got.forgot == want.forgot);
      CHECK(mem->size() == model.size());
      news += want.seen == ValueMemory::Seen::New;
      agains += want.seen == ValueMemory::Seen::Again;
      learnings += want.seen == ValueMemory::Seen::Learning;
      forgotten += want.forgot;
    }
    const SeenValues st = mem->save();
    const std::vector<SeenValues::Value> mv = model.values();
    REQUIRE(st.values.size() == mv.size());
    for (std::size_t v = 0; v < mv.size(); ++v) {
      CHECK(st.values[v].hash == mv[v].hash);
      CHECK(st.values[v].last_ms == mv[v].last_ms);
    }
  }
  MESSAGE("new " << news << ", again " << agains << ", learning " << learnings << ", forgotten " << forgotten);
  CHECK(news > 0);
  CHECK(agains > 0);
  CHECK(learnings > 0);
  CHECK(forgotten > 0);
}

TEST_CASE("new values: learning, remember and the cap, step by step") {
  ValueMemory m(/*remember=*/1000, /*learn=*/100, /*max_values=*/2);
  using S = ValueMemory::Seen;
  CHECK(m.see(1, 5000).seen == S::Learning);  // learning until 5100
  CHECK(m.see(2, 5099).seen == S::Learning);
  CHECK(m.see(1, 5100).seen == S::Again);  // learned, not new
  CHECK(m.see(3, 5100).seen == S::New);    // new; 2 (least recently seen) forgotten to make room
  CHECK(m.size() == 2);
  const ValueMemory::Outcome o = m.see(2, 5200);
  CHECK(o.seen == S::New);  // forgotten at the cap: new again
  CHECK(o.forgot);
  CHECK(m.see(2, 6199).seen == S::Again);  // 999 ms after: still within remember
  CHECK(m.see(2, 7199).seen == S::New);    // 1000 ms after: not within remember
  CHECK(m.size() == 1);                    // 3 was last seen a remember ago: forgotten
  // Saved and loaded: the same values, the same learning.
  ValueMemory back(1000, 100, 2);
  back.load(m.save());
  CHECK(back.size() == 1);
  CHECK(back.see(2, 7300).seen == S::Again);
  CHECK(back.see(1, 7300).seen == S::New);
}
