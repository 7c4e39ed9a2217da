#include "pipeline/decider.h"

#include <algorithm>
#include <mutex>

#include "config/duration.h"
#include "input/k8s_path.h"
#include "util/atomic_max.h"
#include "util/json.h"
#include "util/stderr.h"

namespace swthrottle::pipeline {
namespace {

constexpr int64_t kHalfShiftMs = 10 * 60'000;

}  // namespace

Decider::Decider(std::string name, DeciderHost& host, const Options& options, int64_t resumed_log_ms)
    : name_(std::move(name)),
      shown_(name_ == "-" ? "(standard input)" : name_),
      host_(host),
      options_(options),
      time_(resumed_log_ms),
      watch_(
          name_, [&host, this](const std::string& m) { host.no_timestamp(name_, m); }, options.pace, host.clock()),
      fold_(!options.passthrough && !options.explain),
      wall_ms_(host.clock().wall_ms()) {
  refresh();
}

// An input that ends without a timestamp in its lines (or, under arrival
// time by default, with them) is reported now.
Decider::~Decider() {
  watch_.end();
  if (ignored_) ignored_->end();
}

void DeciderHost::warn(const std::string& message) { print_message(message); }
void DeciderHost::no_timestamp(const std::string&, const std::string& message) { warn(message); }
void DeciderHost::progressed(const std::string&, uint64_t, int64_t) {}

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
  matcher_->set_format(gen_->format_for(name_));
  matcher_->set_byte_arrays(gen_->journal);
  matcher_->set_origin(input::pod_of_path(name_));  // {.k8s.*} of a container's log
  logtime_.reset();
  if (const match::LogTime* lt = gen_->logtime_for(name_)) logtime_.emplace(*lt);  // [[settings.input]]
  const config::Settings& set = gen_->rules->settings;
  if (gen_->logtime || gen_->arrival_by_default.empty()) {
    ignored_.reset();  // time is set, or log: nothing to say
  } else if (!ignored_made_) {
    ignored_made_ = true;
    auto probe = match::LogTime::make(gen_->timestamp_for(name_), gen_->timezone_for(name_), set.year);
    if (probe)
      ignored_.emplace(name_, std::move(*probe), gen_->arrival_by_default,
                       [this](const std::string& m) { host_.warn(m); });
  }
  time_.set_trust({set.max_future_ms, set.max_jump_ms, options_.replay});
  max_future_ = set.max_future_ms >= 0 ? set.max_future_ms : kNeverAhead;
  local_zone_.reset();
  fixed_logtime_.reset();
  // A zone with rules (local, or named): its repeated hour may need the
  // second pass.
  if (logtime_ && match::stamp::Zone(gen_->timezone_for(name_)).has_rules()) {
    local_zone_.emplace(gen_->timezone_for(name_));
    // +12:34 is the offset of no zone: a stamp read in the zone reads
    // differently there.
    auto fixed =
        match::LogTime::make(gen_->timestamp_for(name_), config::TimezoneSpec{false, 12 * 60 + 34, "+12:34"}, set.year);
    if (fixed) fixed_logtime_.emplace(std::move(*fixed));
  }
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
  if (lines_ > 0 || c.newest != kNoStamp) host_.progressed(name_, lines_, c.newest);
  if (cut_) {
    gen_->engine->stats().cut.add(cut_);
    cut_ = 0;
  }
  if (lines_ == 0) return;
  auto& stats = gen_->engine->stats();
  stats.lines.add(lines_);
  if (truncated_) stats.truncated.add(truncated_);
  if (c.no_timestamp) stats.no_timestamp.add(c.no_timestamp);
  if (c.untimed) stats.untimed.add(c.untimed);
  if (c.untrusted) stats.untrusted.add(c.untrusted);
  if (const uint64_t bad = invalid_json_ + (matcher_ ? matcher_->take_invalid_json() : 0)) stats.invalid_json.add(bad);
  if (const uint64_t lenient = repaired_json_ + (matcher_ ? matcher_->take_repaired_json() : 0))
    stats.json_repaired.add(lenient);
  repaired_json_ = 0;
  lines_ = truncated_ = 0;
  invalid_json_ = 0;
}

bool Decider::decide(std::string_view text, bool truncated, const match::MatchResult& m, int64_t stamp, bool zoned) {
  line_no_ = next_line_no_;
  // A multi-line event spans its lines: the next one starts after them.
  next_line_no_ += 1 + more_lines_;
  more_lines_ = 0;
  ++lines_;
  if (truncated) ++truncated_;
  engine::Engine& engine = *gen_->engine;
  LineTime::Stamp at;
  if (gen_->logtime) {
    watch_.line(text, stamp != kNoStamp);
    if (stamp != kNoStamp) {
      // Only a stamp further back than half the smallest DST shift (20 min,
      // Ghana's) can be nearer in its second pass: lines a moment out of
      // order never ask the zone.
      if (local_zone_ && zoned && stamp + kHalfShiftMs < time_.newest_trusted()) [[unlikely]]
        stamp = second_pass(text, stamp);
      // The wall clock is read once a batch, or every 1024 followed lines: a
      // stamp that looks ahead of it may only have met a clock gone stale
      // while the input was quiet, so it is asked again. (Not once a line:
      // where the clock is no vDSO read it is a system call, ~110 ns.)
      if (stamp > wall_ms_ + max_future_) [[unlikely]]
        wall_ms_ = host_.clock().wall_ms();
    }
    at = time_.log(stamp, wall_ms_);
    if (time_.untrusted() != LineTime::Untrusted::None) report_untrusted(text, stamp, time_.untrusted());
  } else {
    if (ignored_ && !ignored_->done()) [[unlikely]]
      ignored_->line(text, !zoned, wall_ms_);
    at = LineTime::arrival(host_.arrival_ms(), engine.now_ms());
  }
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
  if (want_explain) {
    const engine::ExplainedLine shown{gen_->rules.get(), shown_, line_no_, text, ev.timed, ev.t_ms, &explain_};
    host_.emit(records_, &shown);
  } else if (!records_.empty()) {
    host_.emit(records_);
  }
  return go_on();
}

// The parser reads a local time that occurs twice (DST ends) as its first
// pass. Past the repeated hour's start the input's times would go back: the
// second reading is taken when it is nearer the input's newest trusted time
// than the first (so a line written a second out of order in the first pass
// stays there). The newest, not the last: a late line in between (one with
// its own offset) must not hide the second pass. A stamp with its own
// offset, `Z` or an epoch never moves.
int64_t Decider::second_pass(std::string_view text, int64_t stamp) {
  const int64_t last = time_.newest_trusted();
  const int64_t later = local_zone_->later_reading_ms(stamp);
  if (later == match::stamp::kNoTime || later - last >= last - stamp) return stamp;
  if (!fixed_logtime_) return stamp;
  const auto fixed = fixed_logtime_->parse(text.substr(0, text.find('\n')), wall_ms_);
  return fixed && *fixed != stamp ? later : stamp;
}

void Decider::report_untrusted(std::string_view text, int64_t stamp, LineTime::Untrusted why) {
  if (warned_untrusted_) {
    ++unreported_untrusted_;
    if (wall_ms_ - untrusted_reported_at_ < 60'000) return;
    host_.warn(shown_ + ": " + std::to_string(unreported_untrusted_) +
               " more lines with timestamps not trusted (see --stats: untrusted)");
    unreported_untrusted_ = 0;
    untrusted_reported_at_ = wall_ms_;
    return;
  }
  warned_untrusted_ = true;
  untrusted_reported_at_ = wall_ms_;
  const config::Settings& set = gen_->rules->settings;
  std::string m = shown_ + ": line " + std::to_string(line_no_) + ": timestamp ";
  append_rfc3339_ms(m, stamp);
  if (why == LineTime::Untrusted::Future) {
    m += " is more than " + config::format_duration(set.max_future_ms) + " ahead of the wall clock (";
    append_rfc3339_ms(m, wall_ms_);
    m += "); not trusted (setting max_future)";
  } else {
    m += " jumps more than " + config::format_duration(set.max_jump_ms) +
         " ahead of this input's times; not trusted unless the next timestamp confirms it (setting max_jump)";
  }
  if (time_.last() == kNoStamp) {
    m += "; the line is untimed: ";
  } else {
    m += "; the line is decided at ";
    append_rfc3339_ms(m, time_.last());
    m += ": ";
  }
  constexpr std::size_t kSample = 200;
  append_line_sample(m, text, kSample);
  host_.warn(m);
}

bool Decider::match_and_decide(const input::Line& line) {
  if (host_.current() != gen_ && !refresh()) return false;  // rules reloaded (SIGHUP)
  matcher_->match(line.text, match_, line.stream);
  int64_t stamp = kNoStamp;
  if (logtime_ && line.stream != match::Stream::None) {
    stamp = line.origin_ms;  // a container runtime's line: its envelope's time
  } else if (logtime_) {
    if (++wall_age_ >= 1024) {
      wall_age_ = 0;
      wall_ms_ = host_.clock().wall_ms();
    }
    // A multi-line event's time is its first line's.
    if (auto t = logtime_->parse(line.text.substr(0, line.text.find('\n')), wall_ms_)) stamp = *t;
  }
  return decide(line.text, line.truncated, match_, stamp, line.stream == match::Stream::None);
}

bool Decider::take(const input::Line& line, std::size_t lines) {
  std::shared_lock order(host_.order());
  more_lines_ = lines > 1 ? static_cast<uint32_t>(lines - 1) : 0;
  const bool go = match_and_decide(line);
  flush();
  return go;
}

// The one per-batch path: a followed backlog, a batch read here, a -j
// batch and a run of a time merge all end here. What a batch carries once
// (its cut events, its invalid JSON lines) is counted with its first run; a
// batch matched with rules replaced since (SIGHUP) is matched again, line by
// line. What is held for the run (counts, a pending "now") is handed on
// before the caller lets the order lock go, so a report, a reload or the
// final summaries between two runs see every line decided.
bool Decider::decide_run(Batch& b, std::size_t begin, std::size_t end) {
  if (host_.current() != gen_ && !refresh()) return false;
  const bool stale = b.gen != gen_;
  wall_ms_ = host_.clock().wall_ms();  // batches matched elsewhere read it there, maybe long ago
  if (begin == 0) {
    cut_ += b.cut;
    if (!stale) invalid_json_ += b.invalid_json;
    if (!stale) repaired_json_ += b.repaired_json;
  }
  bool go = true;
  for (std::size_t i = begin; go && i < end; ++i) {
    if (b.events) more_lines_ = b.event_lines[i] - 1;
    if (stale) go = match_and_decide(b.input_line(i));
    else go = decide(b.line(i), b.truncated(i), b.results[i], b.stamps[i], b.streams.empty() || b.streams[i] == 0);
  }
  flush();
  return go;
}

bool Decider::take_matched(Batch& b) {
  std::shared_lock order(host_.order());
  return decide_run(b, 0, b.size());
}

bool Decider::take_read(Batch& b) {
  std::shared_lock order(host_.order());
  if (host_.current() != gen_ && !refresh()) return false;
  wall_ms_ = host_.clock().wall_ms();
  b.gen = gen_;
  b.match(&*matcher_, logtime_ ? &*logtime_ : nullptr, wall_ms_);
  return decide_run(b, 0, b.size());
}

// A run of a time merge is as long as its input leads (a whole batch of a
// rotated file, a line or two of inputs that interleave): the lock is taken
// once per run.
bool Decider::take_matched(Batch& b, std::size_t begin, std::size_t end) {
  std::shared_lock order(host_.order());
  return decide_run(b, begin, end);
}

}  // namespace swthrottle::pipeline
