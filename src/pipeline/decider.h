// Decider: decides the lines of one input, in input order (DESIGN.md §3), with
// the rules in force, and hands the records on. Every source feeds the same
// per-line path, so a followed file, a file read in batches and a file
// matched by -j workers give the same records:
//
//   take(line)       a line to match here (a followed file);
//   take_read(b)     a batch read here, matched here (one thread);
//   take_matched(b)  a batch matched by other threads (-j: ParallelMatch);
//   take_matched(b, begin, end)  a run of its lines (inputs merged by time).
//
// Each call holds the host's order lock shared from a line's match to its
// output, so a reload, a timer tick or the final summaries never come
// between them. A call returns false when the input should stop (the output
// closed, a stop was asked for, or new rules could not be compiled).
//
// Seams for what comes next:
// - window backends: the Generation's engine owns the windows; a backend
//   other than the local one (a fleet) lives behind engine::Engine, not here.
// - records that are not plain lines (JSON fields, multi-line events): a
//   source turns them into one text and a MatchResult, then calls the
//   per-line path through take_matched().
// - inputs merged by time: merge_by_time (time_merge.h) feeds one decider
//   per input runs of lines in the merged order; LineTime is the per-input
//   policy.
// - replays (backtest): a host with its own generation and a collecting
//   sink drives a decider over history as often as it likes; nothing here
//   reads a clock but through the host.
//
// Not thread-safe: one decider per input, on one thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "engine/boundary_memo.h"
#include "engine/engine.h"
#include "input/line_reader.h"
#include "match/logtime.h"
#include "match/matcher.h"
#include "pipeline/batch.h"
#include "pipeline/generation.h"
#include "pipeline/ignored_stamps.h"
#include "pipeline/line_time.h"
#include "pipeline/order_lock.h"
#include "pipeline/stamp_watch.h"
#include "util/clock.h"

namespace swthrottle::pipeline {

// What a decider needs from the program around it (app/app.h; tests have
// their own).
class DeciderHost {
 public:
  virtual ~DeciderHost() = default;
  // The rules in force: a new generation after a reload.
  virtual Generation* current() = 0;
  // Held shared by deciders from a line's match to its output; held
  // exclusive by whatever must not come between them.
  virtual OrderLock& order() = 0;
  // Set when every input should stop (a signal, a closed output).
  virtual const std::atomic<bool>& stopping() = 0;
  // Records to write (and run actions for), with what --explain shows of
  // their line before them (null: nothing to explain).
  virtual void emit(const std::vector<engine::Record>& records, const engine::ExplainedLine* explain = nullptr) = 0;
  // An error that ends this input; the run exits 2.
  virtual void fail(const std::string& message) = 0;
  // The newest log timestamp this input has seen (for --state).
  virtual void saw_log_time(int64_t newest_ms) = 0;
  virtual const Clock& clock() = 0;
  // Arrival time now (DESIGN.md §4).
  virtual int64_t arrival_ms() = 0;
  // A warning about the input that does not end it (stderr, "swthrottle: "
  // before it).
  virtual void warn(const std::string& message);
  // `input` gives no timestamp under log time (stamp_watch.h); `message`
  // says so. From the input's thread, or the timer's (StampWatch::due).
  virtual void no_timestamp(const std::string& input, const std::string& message);
  // Lines of `input` were decided (metrics, the systemd watchdog): how many
  // since the last call, and the newest log time among them (kNoStamp: none).
  virtual void progressed(const std::string& input, uint64_t lines, int64_t newest_log_ms);
};

class Decider {
 public:
  struct Options {
    bool passthrough = false;
    bool explain = false;
    bool prefilter = true;  // match::Matcher::make's
    // What kind of input it is, for when its stamp watch reports (a
    // followed file or a pipe: also after a minute, on the host's clock).
    StampWatch::Pace pace = StampWatch::Pace::Replay;
    // A replay (a file read, not followed: app::InputSpec::replay): trusted
    // time takes no excuse from the wall clock (LineTime::Trust::replay).
    bool replay = false;
  };

  // `name`: the input as given ("-": standard input), for --explain.
  // `resumed_log_ms`: the newest log time from --state, or kNoStamp.
  Decider(std::string name, DeciderHost& host, const Options& options, int64_t resumed_log_ms);
  ~Decider();
  Decider(const Decider&) = delete;
  Decider& operator=(const Decider&) = delete;

  // False when the rules could not be compiled for matching (reported
  // through the host): nothing can be decided.
  bool ready() const { return matcher_.has_value(); }

  // `lines`: how many lines it holds (a multi-line event,
  // input/event_grouper.h), for the line numbers of --explain and warnings.
  bool take(const input::Line& line, std::size_t lines = 1);
  bool take_read(Batch& b);
  bool take_matched(Batch& b);
  // Lines [begin, end) of a batch matched by other threads: a run of this
  // input that a time merge (time_merge.h) hands over in the merged order.
  // Like take_matched(b), a batch matched with replaced rules is matched again.
  bool take_matched(Batch& b, std::size_t begin, std::size_t end);

  // Hands what is held for the batch (per-line counts, a pending "now") to
  // the engine. The take_* calls do it themselves; a source calls it when it
  // stops between them.
  void flush();

  // Multi-line events the source's grouper cut at a cap (batches carry
  // their own count); reaches --stats with the next flush().
  void count_cut(uint64_t n) { cut_ += n; }

  // time = log: this input's newest trusted time (kNoStamp: none yet).
  int64_t last_log_ms() const { return time_.newest_trusted(); }

  // For the host's timer, which calls due() on it while the input is read
  // (a followed file or a pipe).
  StampWatch& stamp_watch() { return watch_; }

 private:
  bool refresh();
  bool match_and_decide(const input::Line& line);
  // Lines [begin, end) of a batch: the one path every batch takes.
  bool decide_run(Batch& b, std::size_t begin, std::size_t end);
  // The single per-line path: one line whose match result (and timestamp,
  // or kNoStamp) are known. `zoned`: the stamp was read in the input's zone
  // (a container runtime's time has its own offset: no DST second pass).
  bool decide(std::string_view text, bool truncated, const match::MatchResult& m, int64_t stamp, bool zoned = true);
  void flush_pending();
  // DST: the stamp, or its second pass through a repeated local hour.
  int64_t second_pass(std::string_view text, int64_t stamp);
  // Stderr about a stamp LineTime did not trust: rate-limited.
  void report_untrusted(std::string_view text, int64_t stamp, LineTime::Untrusted why);
  bool go_on() const { return !host_.stopping().load(std::memory_order_relaxed); }

  const std::string name_;
  const std::string shown_;  // name_ as --explain shows it
  DeciderHost& host_;
  const Options options_;
  Generation* gen_ = nullptr;
  std::optional<match::Matcher> matcher_;
  std::optional<match::LogTime> logtime_;  // each decider its own copy (its own RE2)
  match::MatchResult match_;
  std::vector<engine::Record> records_;
  std::vector<engine::ExplainEntry> explain_;
  LineTime time_;
  StampWatch watch_;  // time = log: says so when the lines give no timestamp
  // Arrival time by default: says so when the lines carry timestamps. Made
  // with the first generation that has no `time`, once per input.
  std::optional<IgnoredStamps> ignored_;
  bool ignored_made_ = false;
  uint64_t line_no_ = 0;       // the first line of what is being decided
  uint64_t next_line_no_ = 1;  // the line after it
  uint32_t more_lines_ = 0;    // the lines after the first of what is decided next (a multi-line event)
  // Per-line counters, added to the engine's stats once per batch (and
  // before the rules change): one atomic add per line each would cost more
  // than deciding a line that matches nothing.
  uint64_t lines_ = 0;
  uint64_t truncated_ = 0;
  uint64_t invalid_json_ = 0;  // from batches' matchers, added to the stats with the rest
  uint64_t repaired_json_ = 0;
  uint64_t cut_ = 0;
  // Lines that matched nothing only move "now"; while that crosses no bucket
  // boundary, offer() would decide and write nothing, so such lines just
  // raise pending_, handed to the engine before the next line it decides and
  // at the end of a batch: the same records, for a comparison per line
  // instead of an atomic update of the shared now.
  const bool fold_;
  int64_t pending_ = INT64_MIN;
  engine::BoundaryMemo memo_;
  // The wall clock serves the year of syslog stamps and the bound of trusted
  // time: a followed input reads it every 1024 lines, a batch once, and a
  // stamp that looks ahead of it reads it again (a quiet file must not judge
  // an honest stamp by a stale clock).
  int64_t wall_ms_ = 0;
  // settings.max_future_ms, read once per generation (off: kNeverAhead, far
  // enough that wall_ms_ + it never overflows nor is passed).
  static constexpr int64_t kNeverAhead = INT64_MAX / 4;
  int64_t max_future_ = kNeverAhead;
  uint32_t wall_age_ = 0;
  // timezone = "local": the zone, for the second reading of a repeated hour,
  // and the same timestamp reader in a fixed zone, which tells whether a
  // stamp was read in the zone (it has no offset of its own).
  std::optional<match::stamp::Zone> local_zone_;
  std::optional<match::LogTime> fixed_logtime_;
  // Untrusted stamps: the first is shown, later ones counted in a line at
  // most once a minute of wall clock.
  bool warned_untrusted_ = false;
  uint64_t unreported_untrusted_ = 0;
  int64_t untrusted_reported_at_ = 0;
};

}  // namespace swthrottle::pipeline
