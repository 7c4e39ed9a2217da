#include "pipeline/decider.h"

#include <mutex>

#include "cli/report.h"
#include "util/atomic_max.h"
#include "util/stderr.h"

namespace swthrottle::pipeline {

Decider::Decider(std::string name, DeciderHost& host, const Options& options, int64_t resumed_log_ms)
    : name_(std::move(name)),
      shown_(name_ == "-" ? "(standard input)" : name_),
      host_(host),
      options_(options),
      time_(resumed_log_ms),
      watch_(name_, [](const std::string& m) { print_message(m); }),
      fold_(!options.passthrough && !options.explain),
      wall_ms_(host.clock().wall_ms()) {
  refresh();
}

// An input that ends without a timestamp in its lines is reported now.
Decider::~Decider() { watch_.end(); }

// The rules changed (or this is the start): a matcher and a timestamp reader
// of the new rules. What is held for the old ones goes to the new engine,
// which has taken over the old one's windows and "now".
bool Decider::refresh() {
  gen_ = host_.current();
  flush();
  matcher_.reset();
  auto made = match::Matcher::make(*gen_->rules, options_.explain, options_.prefilter);
  if (!made) {
    host_.fail(made.error().str());
    return false;
  }
  matcher_.emplace(std::move(*made));
  logtime_.reset();
  if (const match::LogTime* lt = gen_->logtime_for(name_)) logtime_.emplace(*lt);  // [[settings.input]]
  return true;
}

void Decider::flush_pending() {
  if (pending_ == INT64_MIN) return;
  // Due boundary checks: none, unless another input moved "now" meanwhile.
  gen_->engine->tick(pending_, records_, &memo_);
  pending_ = INT64_MIN;
  if (!records_.empty()) host_.emit(records_);
}

void Decider::flush() {
  if (gen_ == nullptr) return;
  flush_pending();
  const LineTime::Counts c = time_.take_counts();
  if (c.newest != kNoStamp) host_.saw_log_time(c.newest);
  if (lines_ == 0) return;
  auto& stats = gen_->engine->stats();
  stats.lines.add(lines_);
  if (truncated_) stats.truncated.add(truncated_);
  if (c.no_timestamp) stats.no_timestamp.add(c.no_timestamp);
  if (c.untimed) stats.untimed.add(c.untimed);
  lines_ = truncated_ = 0;
}

bool Decider::decide(std::string_view text, bool truncated, const match::MatchResult& m, int64_t stamp) {
  ++line_no_;
  ++lines_;
  if (truncated) ++truncated_;
  engine::Engine& engine = *gen_->engine;
  if (gen_->logtime) watch_.line(text, stamp != kNoStamp);
  const LineTime::Stamp at = gen_->logtime ? time_.log(stamp) : LineTime::arrival(host_.arrival_ms(), engine.now_ms());
  if (fold_ && m.hits.empty()) {
    if (!at.timed) return go_on();  // nothing to decide, nothing to move
    if (at.t_ms < memo_.quiet_until(&engine)) {
      pending_ = std::max(pending_, at.t_ms);
      return go_on();
    }
  }
  flush_pending();
  const bool want_explain = options_.explain && !m.hits.empty();
  engine::LineEvent ev;
  ev.text = text;
  ev.timed = at.timed;
  ev.t_ms = at.t_ms;
  engine.offer(ev, m, records_, want_explain ? &explain_ : nullptr, &memo_);
  std::string shown_explain;
  if (want_explain)
    shown_explain = cli::explain_line(*gen_->rules, shown_, line_no_, text, ev.timed, ev.t_ms, explain_);
  if (!records_.empty() || !shown_explain.empty()) host_.emit(records_, shown_explain);
  return go_on();
}

bool Decider::match_and_decide(const input::Line& line) {
  if (host_.current() != gen_ && !refresh()) return false;  // rules reloaded (SIGHUP)
  matcher_->match(line.text, match_);
  int64_t stamp = kNoStamp;
  if (logtime_) {
    if (++wall_age_ >= 1024) {
      wall_age_ = 0;
      wall_ms_ = host_.clock().wall_ms();
    }
    if (auto t = logtime_->parse(line.text, wall_ms_)) stamp = *t;
  }
  return decide(line.text, line.truncated, match_, stamp);
}

bool Decider::take(const input::Line& line) {
  std::shared_lock order(host_.order());
  const bool go = match_and_decide(line);
  flush();
  return go;
}

bool Decider::decide_batch(Batch& b) {
  if (host_.current() != gen_ && !refresh()) return false;
  const bool stale = b.gen != gen_;  // matched with rules replaced since (SIGHUP): match again
  bool go = true;
  for (std::size_t i = 0; go && i < b.size(); ++i) {
    if (stale) go = match_and_decide(input::Line{b.line(i), b.truncated(i)});
    else go = decide(b.line(i), b.truncated(i), b.results[i], b.stamps[i]);
  }
  flush();
  return go;
}

bool Decider::take_matched(Batch& b) {
  std::shared_lock order(host_.order());
  return decide_batch(b);
}

bool Decider::take_read(Batch& b) {
  std::shared_lock order(host_.order());
  if (host_.current() != gen_ && !refresh()) return false;
  wall_ms_ = host_.clock().wall_ms();
  b.gen = gen_;
  b.match(&*matcher_, logtime_ ? &*logtime_ : nullptr, wall_ms_);
  return decide_batch(b);
}

}  // namespace swthrottle::pipeline
