// The sources of one input: a followed file, a file or pipe read in batches
// on the decider's own thread, or one matched by -j workers. All three feed
// one pipeline::Decider.
#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "app/app.h"
#include "pipeline/parallel_match.h"
#include "util/stderr.h"

namespace swthrottle::app {

namespace {

// What the line reader finds in an input's first bytes (compressed: read
// through its decoder; binary: reported here once). Prints without the App:
// a -j reader thread blocked on a pipe may outlive the run.
std::function<void(const std::string&)> sniff_notice(const std::string& name) {
  return [name](const std::string& what) { print_message(name + ": " + what); };
}

// A followed input's lines, a container runtime's envelope (`format`) taken
// off: each line the follower reads is then a record, and next() gives the
// lines they make (a split one when it is whole).
class FramedLines {
 public:
  FramedLines(input::Follower& follower, std::size_t max_line, std::string name)
      : follower_(follower), framer_(max_line), name_(std::move(name)) {}

  std::optional<input::Line> next(int timeout_ms, config::InputFormat format) {
    framer_.configure(format);
    for (;;) {
      auto raw = follower_.next(timeout_ms);
      if (!raw || framer_.plain()) return raw;
      auto line = framer_.add(*raw);
      if (auto notice = framer_.take_notice()) print_message(name_ + ": " + *notice);
      if (line) return line;
    }
  }

  // At the end: the unterminated last line, then each stream's line still
  // open in its records (a container stopped mid-line), one per call.
  std::optional<input::Line> rest() {
    if (!partial_taken_) {
      partial_taken_ = true;
      if (auto last = follower_.take_partial()) {
        if (framer_.plain()) return last;
        if (auto line = framer_.add(*last)) return line;
      }
    }
    return framer_.flush();
  }

 private:
  input::Follower& follower_;
  input::EnvelopeFramer framer_;
  std::string name_;
  bool partial_taken_ = false;
};

}  // namespace

void App::read_input(const InputSpec& in) {
  if (in.glob) return read_glob(in);
  pipeline::Decider::Options options = decider_options();
  options.pace = pace_of(in);
  options.replay = in.replay;
  pipeline::Decider decider(in.name, *this, options, resumed_log_ms());
  if (!decider.ready()) return;
  const bool live = options.pace != pipeline::StampWatch::Pace::Replay;
  if (live) watch_stamps(decider.stamp_watch(), true);
  if (in.follow) read_followed(decider, in);
  else if (const int workers = workers_for(in); workers > 1) read_parallel(decider, in, workers);
  else read_batches(decider, in);
  if (live) watch_stamps(decider.stamp_watch(), false);
}

// A followed file; standard input or a file that is not a regular one (a
// FIFO, a process substitution): a pipe, which may be live; else a replay.
pipeline::StampWatch::Pace App::pace_of(const InputSpec& in) {
  if (in.follow) return pipeline::StampWatch::Pace::Followed;
  struct stat st {};
  if (in.fd >= 0 && ::fstat(in.fd, &st) == 0 && S_ISREG(st.st_mode)) return pipeline::StampWatch::Pace::Replay;
  return pipeline::StampWatch::Pace::Pipe;
}

// Matching threads for an input: parallel matching pays off on a backlog
// read from one file or pipe. Followed files stay on their decider (a line
// must not wait for a batch to fill), and several inputs already decide in
// parallel.
int App::workers_for(const InputSpec& in) const {
  if (in.follow || inputs_ > 1 || options_.explain) return 1;
  return threads();
}

// -j, or one per core.
int App::threads() const {
  const int j = options_.threads > 0 ? options_.threads : static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, j);
}

pipeline::Decider::Options App::decider_options() const {
  pipeline::Decider::Options o;
  o.passthrough = options_.passthrough;
  o.explain = options_.explain;
  o.prefilter = app_options_.prefilter;
  return o;
}

// The newest log time of an earlier run (--state), or kNoStamp.
int64_t App::resumed_log_ms() const {
  const int64_t resumed = last_log_ms_.load();
  return resumed >= 0 ? resumed : pipeline::kNoStamp;
}

// How the -j reader and workers of an input read and match it.
pipeline::ParallelMatch::Options App::match_options(const InputSpec& in, int workers) const {
  pipeline::ParallelMatch::Options po;
  po.max_line = options_.max_line;
  po.workers = workers;
  po.prefilter = app_options_.prefilter;
  po.map_file = app_options_.map_files;
  po.all_captures = options_.explain;
  po.sniff_notice = sniff_notice(in.name);
  po.input = in.name;  // its [[settings.input]]
  return po;
}

void App::read_followed(pipeline::Decider& decider, const InputSpec& in) {
  input::FollowOptions fo;
  fo.from_start = options_.from_start || in.from_start;
  fo.max_line = options_.max_line;
  input::Follower follower(in.name, fo, clock_);
  if (in.handle != nullptr) in.handle->attach(&follower);
  pipeline::QuietTime quiet;
  {
    std::lock_guard lock(mu_);
    followers_.push_back(&follower);
    quiet_.push_back(&quiet);
    metrics_.follow(in.name, &follower);
    if (stop_) follower.stop();
  }
  // `multiline`: lines grouped into events as they come (made when the
  // rules first ask, then kept across reloads, like fill_input's).
  std::optional<input::EventGrouper> grouper;
  pipeline::Generation* grouped_for = nullptr;
  FramedLines framed(follower, options_.max_line, in.name);
  auto next = [&](int timeout_ms) { return framed.next(timeout_ms, current()->format_for(in.name)); };
  auto take = [&](const input::Line& line) {
    if (pipeline::Generation* g = current(); g != grouped_for) {
      grouped_for = g;
      const config::MultilineSpec& spec = g->multiline_for(in.name);
      if (grouper) grouper->configure(spec);
      else if (spec.kind != config::MultilineSpec::Kind::Off) grouper.emplace(spec);
    }
    if (!grouper || line.stream != match::Stream::None) return decider.take(line);  // payloads are not grouped
    auto event = grouper->add(line, clock_.steady_ms());
    decider.count_cut(grouper->take_cut());
    return !event || decider.take(*event, grouper->lines());
  };
  // The pending event, decided: when no line has come for kIdleMs, and at the end.
  auto flush_event = [&] {
    auto event = grouper ? grouper->flush() : std::nullopt;
    return !event || decider.take(*event, grouper->lines());
  };
  // A backlog (--from-start, or a log that got ahead of us): the lines
  // already there are read, matched and decided as a batch (the prefilter
  // scans it whole), as a file is; once caught up, line by line, so that no
  // line waits for others. Events of `multiline`, and a FIFO's lines (a read
  // there waits for its writers), go one by one.
  pipeline::Batch backlog;
  auto take_backlog = [&](const input::Line& first) {
    backlog.clear();
    backlog.add(first);
    while (!follower.on_stream() && backlog.size() < pipeline::Batch::kLines &&
           backlog.storage.size() < pipeline::Batch::kBytes) {
      auto more = next(0);
      if (!more) break;
      backlog.add(*more);
    }
    for (const auto& n : follower.take_notices()) print_message(n);
    backlog.done();
    return decider.take_read(backlog);
  };
  while (!follower.stopped()) {
    auto line = next(0);
    if (line && !grouper && current()->multiline_for(in.name).kind == config::MultilineSpec::Kind::Off) {
      for (const auto& n : follower.take_notices()) print_message(n);
      quiet.reading();
      if (!take_backlog(*line)) break;
      continue;
    }
    if (!line && grouper && grouper->pending()) {
      for (const auto& n : follower.take_notices()) print_message(n);
      const int64_t left = grouper->idle_deadline() - clock_.steady_ms();
      if (left <= 0) {
        if (!flush_event()) break;
        continue;
      }
      line = next(static_cast<int>(std::min<int64_t>(left, input::EventGrouper::kIdleMs)));
    } else if (!line) {
      for (const auto& n : follower.take_notices()) print_message(n);
      // Caught up: from here on, a quiet log's time moves on (timer.cpp).
      quiet.caught_up(decider.last_log_ms(), clock_.steady_ms());
      line = next(-1);
    }
    for (const auto& n : follower.take_notices()) print_message(n);
    if (!line) continue;
    quiet.reading();
    if (!take(*line)) break;
  }
  while (auto last = framed.rest())
    if (sink_.closed() || !take(*last)) break;
  if (!sink_.closed()) (void)flush_event();
  if (in.handle != nullptr) in.handle->detach();
  std::lock_guard lock(mu_);
  followers_.erase(std::remove(followers_.begin(), followers_.end(), &follower), followers_.end());
  metrics_.unfollow(in.name, &follower);
  quiet_.erase(std::remove(quiet_.begin(), quiet_.end(), &quiet), quiet_.end());
}

// Matched in parallel, decided here in input order: the records are those of
// the sequential path, whatever -j is.
void App::read_parallel(pipeline::Decider& decider, const InputSpec& in, int workers) {
  auto pipe = pipeline::ParallelMatch::start(
      in.fd, match_options(in, workers), [this] { return current(); }, clock_);
  while (pipeline::Batch* b = pipe->next()) {
    const bool go = decider.take_matched(*b);
    pipe->release(b);
    if (!go) break;
  }
  if (const std::string err = pipe->error(); !err.empty()) fail(in.name + ": " + err);
  pipe->stop();
}

// One thread: read a batch, match it (the prefilter scans it whole), decide it.
void App::read_batches(pipeline::Decider& decider, const InputSpec& in) {
  input::LineReader reader(in.fd, options_.max_line);
  reader.sniff(sniff_notice(in.name), app_options_.map_files);
  pipeline::Batch b;
  std::optional<input::EventGrouper> grouper;
  input::EnvelopeFramer framer(options_.max_line);
  while (!stop_.load(std::memory_order_relaxed)) {
    pipeline::Generation* g = current();
    pipeline::fill_input(b, reader, grouper, framer, g->multiline_for(in.name), g->format_for(in.name),
                         /*own=*/false);
    if (auto notice = framer.take_notice()) print_message(in.name + ": " + *notice);
    if (!decider.take_read(b) || b.last) break;
  }
  if (!reader.error().empty()) fail(in.name + ": " + reader.error());
}

}  // namespace swthrottle::app
