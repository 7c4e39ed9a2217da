// ParallelMatch: -j for one input. A reader thread fills batches, worker
// threads match them, and the input's one decider takes them back strictly
// in input order, so the records are those of the sequential path whatever
// -j is. Each worker has its own Matcher and LogTime: RE2 objects contend
// when shared (RE2 issue #569).
//
// Threads: next() and release() are for the decider only; stop() may be
// called once, by the decider, when it is done.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "input/event_grouper.h"
#include "input/line_reader.h"
#include "pipeline/batch.h"
#include "util/clock.h"

namespace swthrottle::pipeline {

struct Generation;

class ParallelMatch : public std::enable_shared_from_this<ParallelMatch> {
 public:
  struct Options {
    std::size_t max_line = 1 << 20;
    int workers = 2;
    bool prefilter = true;  // match::Matcher::make's prefilter
    // Set: the reader sniffs the input (input::LineReader::sniff): compressed
    // input is decompressed, and this gets the "looks binary" notice.
    std::function<void(const std::string&)> sniff_notice;
    bool all_captures = false;  // match::Matcher::make's all_captures (--explain)
    // The input as the command line names it: its timestamp setting
    // (Generation::logtime_for).
    std::string input;
    bool map_file = true;  // input::LineReader::sniff's `map` (with sniff_notice)
  };

  // Starts the reader (on a dup of `fd`) and the workers. `current` gives
  // the rules in force; the reader stamps each batch with them.
  static std::shared_ptr<ParallelMatch> start(int fd, const Options& options, std::function<Generation*()> current,
                                              const Clock& clock);

  // The next batch in input order, matched; nullptr at the end.
  Batch* next();
  // Hands a batch taken with next() back for reuse.
  void release(Batch* b);
  // The read error that ended the input, or "".
  std::string error();

  // Ends the pipeline. Workers are joined; a reader blocked in read(2) on a
  // pipe that never ends cannot be woken, so it is detached (it owns a
  // reference to everything it touches).
  void stop();

 private:
  ParallelMatch(int fd, const Options& options, std::function<Generation*()> current, const Clock& clock);
  void read_loop();
  void work_loop();

  int fd_;  // a dup of the input's descriptor, closed by the reader
  input::LineReader reader_input_;
  std::optional<input::EventGrouper> grouper_;  // the reader's: `multiline` (made when the rules ask)
  input::EnvelopeFramer framer_;                // the reader's: a container runtime's envelope
  Options options_;
  std::function<Generation*()> current_;
  const Clock& clock_;
  std::vector<std::unique_ptr<Batch>> ring_;
  std::mutex mu_;  // guards the batch states, queue_, abort_, ended_, error_
  // One condition each, so that a hand-over wakes only the thread it is for.
  std::condition_variable free_cv_;     // the reader: a batch came back
  std::condition_variable queued_cv_;   // the workers: a batch to match
  std::condition_variable matched_cv_;  // the decider: a batch was matched
  std::deque<Batch*> queue_;
  bool abort_ = false;
  bool ended_ = false;
  uint64_t next_seq_ = 0;
  std::string error_;
  std::atomic<bool> reader_done_{false};
  std::thread reader_;
  std::vector<std::thread> workers_;
};

}  // namespace swthrottle::pipeline
