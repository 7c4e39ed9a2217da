// The inputs merged by time (DESIGN.md §3): each is read and matched on threads of
// its own (a ParallelMatch), and the calling thread decides them all, each
// with its own Decider, in the order pipeline::merge_by_time gives.
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/app.h"
#include "pipeline/parallel_match.h"
#include "pipeline/time_merge.h"
#include "util/stderr.h"

namespace swthrottle::app {

namespace {

// One input of the merge: batches from its ParallelMatch, runs to its Decider.
class MergedInput final : public pipeline::MergeInput {
 public:
  MergedInput(std::string name, std::shared_ptr<pipeline::ParallelMatch> pipe, pipeline::Decider& decider,
              std::function<void(const std::string&)> fail)
      : name_(std::move(name)), pipe_(std::move(pipe)), decider_(decider), fail_(std::move(fail)) {}

  pipeline::Batch* next() override {
    pipeline::Batch* b = pipe_->next();
    // A read error ends this input (the run exits 2), as when it is read
    // alone; the others go on.
    if (b == nullptr)
      if (const std::string err = pipe_->error(); !err.empty()) fail_(name_ + ": " + err);
    return b;
  }
  void release(pipeline::Batch* b) override { pipe_->release(b); }
  bool decide(pipeline::Batch& b, std::size_t begin, std::size_t end) override {
    return decider_.take_matched(b, begin, end);
  }

 private:
  const std::string name_;
  std::shared_ptr<pipeline::ParallelMatch> pipe_;
  pipeline::Decider& decider_;
  std::function<void(const std::string&)> fail_;
};

}  // namespace

void App::read_merged(const std::vector<const InputSpec*>& inputs) {
  // -j is shared out among the inputs: each has a reader and at least one
  // matching worker, so they are read and matched while the merge decides.
  const int workers = std::max(1, threads() / static_cast<int>(inputs.size()));
  std::vector<std::unique_ptr<pipeline::Decider>> deciders;
  std::vector<std::shared_ptr<pipeline::ParallelMatch>> pipes;
  std::vector<std::unique_ptr<MergedInput>> merged;
  std::vector<pipeline::MergeInput*> order;
  pipeline::DeciderHost& host = *this;      // a private base: converted here, not in make_unique
  std::vector<pipeline::StampWatch*> live;  // pipes among them: the timer's minute
  for (const InputSpec* in : inputs) {
    pipeline::Decider::Options options = decider_options();
    options.pace = pace_of(*in);
    options.replay = in->replay;
    deciders.push_back(std::make_unique<pipeline::Decider>(in->name, host, options, resumed_log_ms()));
    if (!deciders.back()->ready()) break;  // reported; the same rules fail for every input
    if (options.pace != pipeline::StampWatch::Pace::Replay) live.push_back(&deciders.back()->stamp_watch());
    pipes.push_back(pipeline::ParallelMatch::start(
        in->fd, match_options(*in, workers), [this] { return current(); }, clock_));
    merged.push_back(std::make_unique<MergedInput>(in->name, pipes.back(), *deciders.back(),
                                                   [this](const std::string& m) { fail(m); }));
    order.push_back(merged.back().get());
  }
  for (pipeline::StampWatch* w : live) watch_stamps(*w, true);
  if (order.size() == inputs.size()) {
    const config::Settings& set = current()->rules->settings;
    (void)pipeline::merge_by_time(order, {{set.max_future_ms, set.max_jump_ms}, clock_.wall_ms()});
  }
  for (auto& p : pipes) p->stop();
  for (pipeline::StampWatch* w : live) watch_stamps(*w, false);
}

}  // namespace swthrottle::app
