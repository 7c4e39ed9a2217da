#include "pipeline/time_merge.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace swthrottle::pipeline {

namespace {

// Where one input stands: its current batch and the first line not decided.
struct Cursor {
  MergeInput* input = nullptr;
  std::size_t index = 0;   // the input's place on the command line: breaks ties
  Batch* batch = nullptr;  // never empty while the input is live
  std::size_t pos = 0;     // the head line
  LineTime time;           // the stamps of the lines before the head, as the input's decider trusts them
  int64_t wall_ms = 0;     // for the trust bounds

  // The key of line i of the batch if it came after the lines `t` has seen.
  int64_t key_after(LineTime t, std::size_t i) const {
    t.log(batch->stamps[i], wall_ms);
    return t.newest_trusted();
  }
  int64_t head_key() const { return key_after(time, pos); }

  // The next batch with lines (the last one of an input has none). False at
  // the end of the input.
  bool next_batch() {
    for (;;) {
      batch = input->next();
      pos = 0;
      if (batch == nullptr) return false;
      if (batch->size() > 0) return true;
      input->release(batch);
    }
  }
};

// (key, index) order: the merged order of two heads.
bool before(int64_t key, std::size_t index, int64_t other_key, std::size_t other_index) {
  return key < other_key || (key == other_key && index < other_index);
}

}  // namespace

bool merge_by_time(std::span<MergeInput* const> inputs, const MergeTrust& trust) {
  // Live inputs in command-line order (an ended one is erased, the order kept).
  std::vector<Cursor> live;
  live.reserve(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Cursor c;
    c.input = inputs[i];
    c.index = i;
    c.time.set_trust(trust.bounds);
    c.wall_ms = trust.wall_ms;
    if (c.next_batch()) live.push_back(c);
  }
  while (!live.empty()) {
    // The smallest head, and the smallest of the others: the run of the
    // first goes up to (not including) the key of the second.
    std::size_t m = 0;
    for (std::size_t k = 1; k < live.size(); ++k)
      if (before(live[k].head_key(), live[k].index, live[m].head_key(), live[m].index)) m = k;
    bool bounded = false;
    int64_t bound_key = 0;
    std::size_t bound_index = 0;
    for (std::size_t k = 0; k < live.size(); ++k) {
      if (k == m) continue;
      const int64_t key = live[k].head_key();
      if (!bounded || before(key, live[k].index, bound_key, bound_index)) {
        bounded = true;
        bound_key = key;
        bound_index = live[k].index;
      }
    }
    Cursor& c = live[m];
    const std::size_t size = c.batch->size();
    std::size_t end = c.pos;
    LineTime time = c.time;
    do {  // the head is the smallest: it goes first
      time.log(c.batch->stamps[end], c.wall_ms);
      ++end;
    } while (end < size && (!bounded || before(c.key_after(time, end), c.index, bound_key, bound_index)));
    if (!c.input->decide(*c.batch, c.pos, end)) {
      for (Cursor& held : live) held.input->release(held.batch);
      return false;
    }
    c.pos = end;
    c.time = time;
    if (end == size) {
      c.input->release(c.batch);
      if (!c.next_batch()) live.erase(live.begin() + static_cast<std::ptrdiff_t>(m));
    }
  }
  return true;
}

}  // namespace swthrottle::pipeline
