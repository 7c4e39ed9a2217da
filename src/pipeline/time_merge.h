// merge_by_time: several inputs decided in one order, merged by their log
// time (DESIGN.md §3: inputs that are not followed, under time = "log"), so a
// replay of several files gives the same records on every run, equal to one
// run over the files merged by the same rule into one.
//
// The rule. A line's merge key is the newest stamp its input has shown up to
// and including that line (kNoStamp, which sorts first, before any), of the
// stamps its decider trusts (pipeline/line_time.h: a lone 2099 line must not
// hold the rest of its input back until every other input has ended). Lines
// go in order of (key, input index); equal keys go in input order (the
// command line's). Because a key never goes down within an input:
//   - each input's own order is kept;
//   - a line without a stamp (a stack trace's next line) stays right behind
//     the line before it in its input: it has that line's key;
//   - a late line (a stamp older than one before it in its input) stays
//     behind its predecessor too, for the same reason;
//   - lines before any stamp of their input go first.
//
// The merged order is therefore a sequence of runs, each of consecutive
// lines of one input: the input with the smallest head, up to the head of
// the next one. A run is handed over in one call (its decider takes the
// order lock once per run, not per line). Only stamps are compared here:
// reading and matching happen on the inputs' own threads (ParallelMatch).
//
// An input's next batch is waited for when its head is needed: a pipe among
// the inputs holds the others back until it gives a line or ends, as a
// merge must. Inputs are few (a rotation set, a handful of hosts), so the
// smallest head is found by a scan, not a heap.
#pragma once

#include <cstddef>
#include <span>

#include "pipeline/batch.h"
#include "pipeline/line_time.h"

namespace swthrottle::pipeline {

// One input of a merge: its matched, stamped batches and its decider.
class MergeInput {
 public:
  virtual ~MergeInput() = default;
  // The input's next batch in input order, matched and stamped (Batch::
  // stamps), or nullptr at its end (the source reports its own errors).
  virtual Batch* next() = 0;
  // Hands back a batch from next() once all its lines are decided.
  virtual void release(Batch* b) = 0;
  // Decides lines [begin, end) of `b` (begin < end), in order. False: stop.
  virtual bool decide(Batch& b, std::size_t begin, std::size_t end) = 0;
};

// Decides every line of every input, in the merged order, on the calling
// thread. Returns true at the end of every input, false as soon as a
// decide() returned false (the rest is not asked for; every batch held is
// released first).
// The trust bounds of the inputs' deciders (settings max_future, max_jump)
// and the wall clock they are judged by; the default trusts every stamp.
struct MergeTrust {
  LineTime::Trust bounds;
  int64_t wall_ms = 0;
};
bool merge_by_time(std::span<MergeInput* const> inputs, const MergeTrust& trust = {});

}  // namespace swthrottle::pipeline
