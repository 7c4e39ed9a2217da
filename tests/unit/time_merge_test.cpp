// merge_by_time (pipeline/time_merge.h): inputs given as batches of stamped
// lines, decided into a recorder that keeps the merged order and the runs
// it was handed in. No reading, matching or engine: only the order.
#include "pipeline/time_merge.h"

#include <doctest/doctest.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace sw = swthrottle;
using sw::pipeline::Batch;
using sw::pipeline::kNoStamp;

// A line of a fake input: its text and its stamp (kNoStamp: none).
struct L {
  std::string text;
  int64_t stamp;
};

// An input made of batches given up front; decided lines go to `out`, each
// run as "[first..last]" to `runs`.
class FakeInput final : public sw::pipeline::MergeInput {
 public:
  FakeInput(const std::vector<std::vector<L>>& batches, std::vector<std::string>& out, std::vector<std::string>& runs)
      : out_(out), runs_(runs) {
    for (const auto& lines : batches) {
      auto b = std::make_unique<Batch>();
      for (const L& l : lines) {
        b->storage += l.text + "\n";
        b->stamps.push_back(l.stamp);
      }
      std::size_t at = 0;
      for (const L& l : lines) {
        b->lines.spans.emplace_back(at, l.text.size());
        b->lines.truncated.push_back(0);
        at += l.text.size() + 1;
      }
      b->lines.text = b->storage;
      batches_.push_back(std::move(b));
    }
    auto last = std::make_unique<Batch>();  // as a reader ends: a last batch without lines
    last->last = true;
    batches_.push_back(std::move(last));
  }

  Batch* next() override {
    if (next_ == batches_.size()) return nullptr;
    ++held;
    return batches_[next_++].get();
  }
  void release(Batch*) override { --held; }
  bool decide(Batch& b, std::size_t begin, std::size_t end) override {
    REQUIRE(begin < end);
    for (std::size_t i = begin; i < end; ++i) out_.emplace_back(b.line(i));
    runs_.push_back("[" + std::string(b.line(begin)) + ".." + std::string(b.line(end - 1)) + "]");
    return --stop_after != 0;
  }

  int held = 0;         // batches taken and not released
  int stop_after = -1;  // decide() returns false on this call (-1: never)

 private:
  std::vector<std::string>& out_;
  std::vector<std::string>& runs_;
  std::vector<std::unique_ptr<Batch>> batches_;
  std::size_t next_ = 0;
};

struct Merge {
  std::vector<std::string> out;
  std::vector<std::string> runs;
  std::deque<FakeInput> inputs;
  FakeInput& add(const std::vector<std::vector<L>>& batches) { return inputs.emplace_back(batches, out, runs); }
  bool run() {
    std::vector<sw::pipeline::MergeInput*> in;
    for (auto& i : inputs) in.push_back(&i);
    return sw::pipeline::merge_by_time(in, trust);
  }
  sw::pipeline::MergeTrust trust;
};

using Lines = std::vector<std::string>;

TEST_CASE("merge_by_time: lines in stamp order, and a run of one input is handed over at once") {
  Merge m;
  m.add({{{"a1", 1}, {"a2", 2}, {"a3", 7}, {"a4", 8}}});
  m.add({{{"b1", 3}, {"b2", 4}, {"b3", 5}}, {{"b4", 9}}});
  CHECK(m.run());
  CHECK(m.out == Lines{"a1", "a2", "b1", "b2", "b3", "a3", "a4", "b4"});
  CHECK(m.runs == Lines{"[a1..a2]", "[b1..b3]", "[a3..a4]", "[b4..b4]"});
  for (auto& i : m.inputs) CHECK(i.held == 0);
}

TEST_CASE("merge_by_time: equal stamps go in input order, whichever input leads") {
  Merge m;
  m.add({{{"a1", 5}, {"a2", 6}}});
  m.add({{{"b1", 5}, {"b2", 5}, {"b3", 6}}});
  m.add({{{"c1", 1}, {"c2", 5}}});
  CHECK(m.run());
  CHECK(m.out == Lines{"c1", "a1", "b1", "b2", "c2", "a2", "b3"});
}

TEST_CASE("merge_by_time: a line without a stamp, or with one older than its input's, stays behind its predecessor") {
  Merge m;
  // a2 has no stamp, a4 is late (2 after 5), a5 has none: keys 1 1 5 5 5.
  m.add({{{"a1", 1}, {"a2", kNoStamp}, {"a3", 5}, {"a4", 2}, {"a5", kNoStamp}}});
  // b0 comes before any stamp of b: it goes first.
  m.add({{{"b0", kNoStamp}, {"b1", 2}, {"b2", 3}, {"b3", 6}}});
  CHECK(m.run());
  CHECK(m.out == Lines{"b0", "a1", "a2", "b1", "b2", "a3", "a4", "a5", "b3"});
}

TEST_CASE("merge_by_time: an empty input, inputs without any stamp, and batch ends inside a run") {
  Merge m;
  m.add({});  // empty: only the last batch, without lines
  m.add({{{"b1", kNoStamp}, {"b2", kNoStamp}}, {{"b3", kNoStamp}}});
  m.add({{{"c1", kNoStamp}}, {}, {{"c2", 4}}});
  CHECK(m.run());
  // Before any stamp every key is equal: input order, each input whole.
  CHECK(m.out == Lines{"b1", "b2", "b3", "c1", "c2"});
  CHECK(m.runs == Lines{"[b1..b2]", "[b3..b3]", "[c1..c1]", "[c2..c2]"});
  for (auto& i : m.inputs) CHECK(i.held == 0);
}

TEST_CASE("merge_by_time: a decider that says stop ends the merge, and every batch held is handed back") {
  Merge m;
  m.add({{{"a1", 1}, {"a2", 3}}});
  FakeInput& b = m.add({{{"b1", 2}, {"b2", 4}}});
  b.stop_after = 1;
  CHECK_FALSE(m.run());
  CHECK(m.out == Lines{"a1", "b1"});
  for (auto& i : m.inputs) CHECK(i.held == 0);
}

TEST_CASE("merge_by_time: no inputs, one input") {
  Merge none;
  CHECK(none.run());
  CHECK(none.out.empty());
  Merge one;
  one.add({{{"a1", 9}, {"a2", 1}}, {{"a3", kNoStamp}}});
  CHECK(one.run());
  CHECK(one.out == Lines{"a1", "a2", "a3"});
  CHECK(one.runs == Lines{"[a1..a2]", "[a3..a3]"});
}

TEST_CASE("merge_by_time: a stamp its decider does not trust holds nothing back") {
  // a2 is far ahead of the wall clock (100): with max_future = 10 it does
  // not raise a's key, so a3 and a4 still go in time order with b's lines.
  for (bool bounded : {false, true}) {
    CAPTURE(bounded);
    Merge m;
    if (bounded) m.trust = {{/*max_future_ms=*/10, /*max_jump_ms=*/-1}, /*wall_ms=*/100};
    m.add({{{"a1", 1}, {"a2", 5000}, {"a3", 4}, {"a4", 6}}});
    m.add({{{"b1", 2}, {"b2", 3}, {"b3", 5}}});
    CHECK(m.run());
    if (bounded) CHECK(m.out == Lines{"a1", "a2", "b1", "b2", "a3", "b3", "a4"});
    else CHECK(m.out == Lines{"a1", "b1", "b2", "b3", "a2", "a3", "a4"});
  }
}

}  // namespace
