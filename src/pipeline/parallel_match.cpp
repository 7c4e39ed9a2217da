#include "pipeline/parallel_match.h"

#include <unistd.h>

#include <optional>

#include "input/k8s_path.h"
#include "match/logtime.h"
#include "match/matcher.h"
#include "pipeline/generation.h"

namespace swthrottle::pipeline {

std::shared_ptr<ParallelMatch> ParallelMatch::start(int fd, const Options& options,
                                                    std::function<Generation*()> current, const Clock& clock) {
  auto p = std::shared_ptr<ParallelMatch>(new ParallelMatch(fd, options, std::move(current), clock));
  // Two batches per worker in flight, one being decided, one being read.
  p->ring_.resize(static_cast<std::size_t>(2 * options.workers + 2));
  for (auto& b : p->ring_) b = std::make_unique<Batch>();
  std::shared_ptr<ParallelMatch> self = p;
  p->reader_ = std::thread([self] { self->read_loop(); });
  for (int i = 0; i < options.workers; ++i) p->workers_.emplace_back([self] { self->work_loop(); });
  return p;
}

ParallelMatch::ParallelMatch(int fd, const Options& options, std::function<Generation*()> current, const Clock& clock)
    : fd_(::dup(fd)),
      reader_input_(fd_, options.max_line),
      framer_(options.max_line),
      options_(options),
      current_(std::move(current)),
      clock_(clock) {
  if (options.sniff_notice) reader_input_.sniff(options.sniff_notice, options.map_file);
}

Batch* ParallelMatch::next() {
  std::unique_lock lock(mu_);
  if (ended_) return nullptr;
  Batch* b = ring_[next_seq_ % ring_.size()].get();
  matched_cv_.wait(lock, [&] { return b->state == Batch::State::Matched && b->seq == next_seq_; });
  ++next_seq_;
  if (b->last) ended_ = true;
  return b;
}

void ParallelMatch::release(Batch* b) {
  {
    std::lock_guard lock(mu_);
    b->state = Batch::State::Free;
  }
  free_cv_.notify_one();  // only the reader waits for a free batch
}

std::string ParallelMatch::error() {
  std::lock_guard lock(mu_);
  return error_;
}

void ParallelMatch::stop() {
  {
    std::lock_guard lock(mu_);
    abort_ = true;
  }
  free_cv_.notify_all();
  queued_cv_.notify_all();
  matched_cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
  if (reader_done_.load()) reader_.join();
  else reader_.detach();
}

void ParallelMatch::read_loop() {
  for (uint64_t seq = 0;; ++seq) {
    Batch* b = ring_[seq % ring_.size()].get();
    {
      std::unique_lock lock(mu_);
      free_cv_.wait(lock, [&] { return abort_ || b->state == Batch::State::Free; });
      if (abort_) break;
    }
    b->gen = current_();
    fill_input(*b, reader_input_, grouper_, framer_, b->gen->multiline_for(options_.input),
               b->gen->format_for(options_.input), /*own=*/true);
    if (auto notice = framer_.take_notice(); notice && options_.sniff_notice) options_.sniff_notice(*notice);
    b->seq = seq;
    {
      std::lock_guard lock(mu_);
      if (b->last) error_ = reader_input_.error();
      b->state = Batch::State::Filled;
      queue_.push_back(b);
    }
    queued_cv_.notify_one();
    if (b->last) break;
  }
  // The reader owns its own descriptor: a detached reader never reads a
  // number the program has closed and reused meanwhile.
  if (fd_ >= 0) ::close(fd_);
  reader_done_ = true;
}

void ParallelMatch::work_loop() {
  Generation* g = nullptr;
  std::optional<match::Matcher> matcher;
  std::optional<match::LogTime> logtime;
  for (;;) {
    Batch* b = nullptr;
    {
      std::unique_lock lock(mu_);
      queued_cv_.wait(lock, [&] { return abort_ || !queue_.empty(); });
      if (abort_) return;
      b = queue_.front();
      queue_.pop_front();
    }
    if (b->gen != g) {
      g = b->gen;
      // A matcher that cannot be made leaves the batch unmatched; the
      // decider makes its own from the same rules and reports the error.
      matcher.reset();
      auto m = match::Matcher::make(*g->rules, options_.all_captures, options_.prefilter);
      if (m) matcher.emplace(std::move(*m));
      if (matcher) matcher->set_format(g->format_for(options_.input));
      if (matcher) matcher->set_byte_arrays(g->journal);
      if (matcher) matcher->set_origin(input::pod_of_path(options_.input));
      logtime.reset();
      if (const match::LogTime* lt = g->logtime_for(options_.input)) logtime.emplace(*lt);
    }
    b->match(matcher ? &*matcher : nullptr, logtime ? &*logtime : nullptr, clock_.wall_ms());
    {
      std::lock_guard lock(mu_);
      b->state = Batch::State::Matched;
    }
    matched_cv_.notify_one();  // only the decider waits for matched batches
  }
}

}  // namespace swthrottle::pipeline
