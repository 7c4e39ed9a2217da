// swthrottle's entry point: command line -> rules -> inputs -> engine ->
// output, exec actions and state. The only place that maps errors to exit
// statuses (SPEC §6).
//
// Threads: one decider per input (SPEC §3), a timer (arrival-time boundary
// checks; periodic state saves when following), a signal thread (sigwait:
// INT/TERM stop, HUP reload, USR1 stats), and the exec pool's workers.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/options.h"
#include "cli/report.h"
#include "config/duration.h"
#include "config/rules.h"
#include "engine/engine.h"
#include "input/follow.h"
#include "input/line_reader.h"
#include "match/logtime.h"
#include "match/matcher.h"
#include "output/exec.h"
#include "output/writer.h"
#include "state/state_file.h"
#include "util/clock.h"

namespace sw = swthrottle;

namespace {

constexpr int64_t kStateSaveEveryMs = 5000;

// SWTHROTTLE_NO_PREFILTER (any non-empty value): match every line with RE2
// alone. The records are the same; this is for comparing and for debugging.
bool use_prefilter() {
  static const bool use = [] {
    const char* v = std::getenv("SWTHROTTLE_NO_PREFILTER");
    return v == nullptr || *v == '\0';
  }();
  return use;
}

void print_err(const std::string& s) {
  std::string line = s;
  if (line.empty() || line.back() != '\n') line += '\n';
  (void)!::write(2, line.data(), line.size());
}

// stdout, shared by the deciders, the timer and the signal thread: whole
// records only, in the order each caller hands them over.
class Output {
 public:
  explicit Output(sw::output::Format f) : writer_(1, f) {}

  bool write(const std::vector<sw::engine::Record>& records, const std::string& explain = {}) {
    std::lock_guard lock(mu_);
    if (writer_.closed()) return false;
    if (!explain.empty()) write_raw(explain);
    for (const auto& r : records) {
      if (r.type == sw::engine::RecordType::Alert) alerts_ = true;
      if (!writer_.write(r)) break;
    }
    if (writer_.closed() && !writer_.error().empty() && !reported_) {
      reported_ = true;
      print_err("swthrottle: write error: " + writer_.error());
    }
    return !writer_.closed();
  }
  bool closed() {
    std::lock_guard lock(mu_);
    return writer_.closed();
  }
  bool failed() {
    std::lock_guard lock(mu_);
    return writer_.closed() && !writer_.error().empty();
  }
  bool alerts() {
    std::lock_guard lock(mu_);
    return alerts_;
  }

 private:
  void write_raw(const std::string& s) {
    std::size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::write(1, s.data() + off, s.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      off += static_cast<std::size_t>(n);
    }
  }

  std::mutex mu_;
  sw::output::FdWriter writer_;
  bool alerts_ = false;
  bool reported_ = false;
};

// One loaded rule set with its engine. A SIGHUP makes a new one; old ones
// stay alive (records and deciders may still point into them) until exit.
struct Generation {
  std::unique_ptr<sw::config::RuleSet> rules;
  std::unique_ptr<sw::engine::Engine> engine;
  std::optional<sw::match::LogTime> logtime;  // time = log only
};

// Does any rule run commands of its own (`exec = [...]`)?
bool uses_exec(const sw::config::RuleSet& rules) {
  return std::any_of(rules.rules.begin(), rules.rules.end(), [](const auto& r) { return !r.exec.empty(); });
}

// Loads, overrides and validates rules: everything that can fail at load.
sw::Result<std::unique_ptr<Generation>> load_generation(const sw::cli::Options& opt) {
  auto loaded = sw::config::load_rules(opt.rule_files);
  if (!loaded) return loaded.error();
  auto g = std::make_unique<Generation>();
  g->rules = std::make_unique<sw::config::RuleSet>(std::move(*loaded));
  sw::config::RuleSet& rules = *g->rules;
  if (opt.time) rules.settings.time = *opt.time;
  if (opt.mode)
    for (auto& r : rules.rules)
      if (!r.mode_set) {
        r.mode = *opt.mode;
        r.fingerprint = sw::config::fingerprint(r);
      }
  if (rules.settings.time == sw::config::TimeSource::Log) {
    auto lt = sw::match::LogTime::make(rules.settings.timestamp, rules.settings.timezone, rules.settings.year);
    if (!lt) {
      sw::Error e = lt.error();
      e.file = rules.settings.timestamp.file;
      e.line = rules.settings.timestamp.line;
      e.col = rules.settings.timestamp.col;
      return e;
    }
    g->logtime.emplace(std::move(*lt));
  }
  g->engine = std::make_unique<sw::engine::Engine>(rules, sw::engine::EngineOptions{opt.passthrough, opt.explain});
  return g;
}

// A batch of lines of one input: read (by the -j reader thread, or by the
// decider itself), matched (by a -j worker, or the decider), decided by the
// input's decider, then reused.
struct Batch {
  static constexpr std::size_t kLines = 2048;
  static constexpr std::size_t kBytes = 1 << 20;

  sw::input::LineReader::Block lines;           // text: the lines and their "\n" (the prefilter scans it whole)
  std::string storage;                          // a copy of the text, when the reader moves on (-j)
  std::vector<sw::match::MatchResult> results;  // views into the text
  std::vector<int64_t> ts;                      // log timestamp, INT64_MIN: none
  Generation* gen = nullptr;                    // the rules it was matched with
  uint64_t seq = 0;
  bool last = false;                            // end of input after this batch
  enum class State { Free, Filled, Matched } state = State::Free;

  std::size_t size() const { return lines.spans.size(); }
  std::string_view line(std::size_t i) const { return lines.text.substr(lines.spans[i].first, lines.spans[i].second); }
  bool truncated(std::size_t i) const { return lines.truncated[i] != 0; }

  // The whole lines the reader has buffered (at most kLines / about kBytes),
  // reading only when it has none: a live pipe never holds a line back.
  // `last` is set, with no lines, at the end of input. With `own`, the text
  // is copied, so it outlives the reader's next call.
  void fill(sw::input::LineReader& reader, bool own) {
    last = !reader.next_lines(lines, kLines, kBytes);
    if (own) {
      storage.assign(lines.text);
      lines.text = storage;
    }
  }

  // Matches every line and reads its timestamp (time = log).
  void match(sw::match::Matcher* matcher, const sw::match::LogTime* logtime, int64_t wall_ms) {
    const std::size_t n = size();
    if (results.size() < n) results.resize(n);
    if (matcher) {
      matcher->match_batch(lines.text, lines.spans, std::span<sw::match::MatchResult>(results.data(), n));
    } else {
      for (std::size_t i = 0; i < n; ++i) results[i].clear();
    }
    ts.assign(n, INT64_MIN);
    if (logtime)
      for (std::size_t i = 0; i < n; ++i)
        if (auto t = logtime->parse(line(i), wall_ms)) ts[i] = *t;
  }
};

// Parallel matching for one input (-j): reader -> workers -> one decider,
// which takes batches strictly in sequence. Each worker has its own Matcher
// and LogTime (RE2 objects contend when shared, RE2 issue #569).
class ParallelMatch : public std::enable_shared_from_this<ParallelMatch> {
 public:
  static std::shared_ptr<ParallelMatch> start(int fd, std::size_t max_line, int workers,
                                              std::function<Generation*()> current, const sw::Clock& clock) {
    auto p = std::shared_ptr<ParallelMatch>(new ParallelMatch(fd, max_line, workers, std::move(current), clock));
    p->ring_.resize(static_cast<std::size_t>(2 * workers + 2));
    for (auto& b : p->ring_) b = std::make_unique<Batch>();
    std::shared_ptr<ParallelMatch> self = p;
    p->reader_ = std::thread([self] { self->read_loop(); });
    for (int i = 0; i < workers; ++i) p->workers_.emplace_back([self] { self->work_loop(); });
    return p;
  }

  // The next batch in input order, matched; nullptr at the end.
  Batch* next() {
    std::unique_lock lock(mu_);
    if (ended_) return nullptr;
    Batch* b = ring_[next_seq_ % ring_.size()].get();
    matched_cv_.wait(lock, [&] { return b->state == Batch::State::Matched && b->seq == next_seq_; });
    ++next_seq_;
    if (b->last) ended_ = true;
    return b;
  }
  void release(Batch* b) {
    {
      std::lock_guard lock(mu_);
      b->state = Batch::State::Free;
    }
    free_cv_.notify_one();  // only the reader waits for a free batch
  }
  std::string error() {
    std::lock_guard lock(mu_);
    return error_;
  }

  // Ends the pipeline. Workers are joined; a reader blocked in read(2) on a
  // pipe that never ends cannot be woken, so it is detached (it owns a
  // reference to everything it touches).
  void stop() {
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

 private:
  ParallelMatch(int fd, std::size_t max_line, int workers, std::function<Generation*()> current,
                const sw::Clock& clock)
      : fd_(::dup(fd)), reader_input_(fd_, max_line), workers_n_(workers), current_(std::move(current)),
        clock_(clock) {}

  void read_loop() {
    for (uint64_t seq = 0;; ++seq) {
      Batch* b = ring_[seq % ring_.size()].get();
      {
        std::unique_lock lock(mu_);
        free_cv_.wait(lock, [&] { return abort_ || b->state == Batch::State::Free; });
        if (abort_) break;
      }
      b->fill(reader_input_, /*own=*/true);
      b->gen = current_();
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

  void work_loop() {
    Generation* g = nullptr;
    std::optional<sw::match::Matcher> matcher;
    std::optional<sw::match::LogTime> logtime;
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
        auto m = sw::match::Matcher::make(*g->rules, false, use_prefilter());
        if (m) matcher.emplace(std::move(*m));
        logtime.reset();
        if (g->logtime) logtime.emplace(*g->logtime);
      }
      b->match(matcher ? &*matcher : nullptr, logtime ? &*logtime : nullptr, clock_.wall_ms());
      {
        std::lock_guard lock(mu_);
        b->state = Batch::State::Matched;
      }
      matched_cv_.notify_one();  // only the decider waits for matched batches
    }
  }

  int fd_;  // a dup of the input's descriptor, closed by the reader
  sw::input::LineReader reader_input_;
  int workers_n_;
  std::function<Generation*()> current_;
  const sw::Clock& clock_;
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

struct InputSpec {
  std::string name;  // as given; "-" is standard input
  int fd = -1;       // opened up front unless followed
  bool follow = false;
};

class App {
 public:
  App(const sw::cli::Options& opt, std::unique_ptr<Generation> first)
      : opt_(opt), arrival_(clock_), output_(opt.format) {
    current_ = first.get();
    generations_.push_back(std::move(first));
  }

  // Everything before the first line: exec pool, state. False: exit 2.
  bool start() {
    if (!opt_.exec.empty()) {
      auto argv = sw::output::split_command(opt_.exec);
      if (!argv) {
        print_err("swthrottle: --exec: " + argv.error().str());
        return false;
      }
      exec_argv_ = std::move(*argv);
    }
    if (!exec_argv_.empty() || uses_exec(*gen()->rules)) {
      sw::output::ExecOptions eo;
      eo.jobs = opt_.exec_jobs;
      eo.timeout_ms = *sw::config::parse_duration(opt_.exec_timeout);  // checked by parse_options
      exec_ = std::make_unique<sw::output::ExecPool>(eo);
    }
    if (!opt_.state_file.empty()) {
      state_ = std::make_unique<sw::state::StateFile>(opt_.state_file);
      auto locked = state_->lock_for_run([](const std::string& m) { print_err("swthrottle: " + m); });
      if (!locked) print_err("swthrottle: " + locked.error().str());
      std::string warning;
      sw::engine::EngineState st = state_->load(warning);
      if (!warning.empty()) print_err("swthrottle: " + warning);
      for (const auto& name : gen()->engine->load_state(st))
        print_err("swthrottle: state: rule \"" + name + "\" changed since the state was saved; it starts fresh");
      if (st.last_log_ms >= 0) last_log_ms_ = st.last_log_ms;
    }
    return true;
  }

  // Runs every input to its end (or until stopped); returns the exit status.
  int run(std::vector<InputSpec> inputs) {
    inputs_ = inputs.size();
    {
      std::unique_ptr<std::thread> timer;
      if (needs_timer()) timer = std::make_unique<std::thread>([this] { timer_loop(); });
      if (inputs.size() == 1) {
        decide(inputs[0]);
      } else {
        std::vector<std::thread> deciders;
        for (const InputSpec& in : inputs) deciders.emplace_back([this, &in] { decide(in); });
        for (auto& t : deciders) t.join();
      }
      {
        std::lock_guard lock(mu_);
        timer_done_ = true;
      }
      cv_.notify_all();
      if (timer) timer->join();
    }
    for (const InputSpec& in : inputs)
      if (in.fd > 0) ::close(in.fd);
    finish();
    {
      std::lock_guard work(signal_mu_);  // a reload or stats report in progress ends first
      exiting_ = true;
    }
    if (stop_requested_) return 0;  // SIGINT/SIGTERM: pending work written, exit 0
    if (input_failed_ || output_.failed()) return 2;
    if (opt_.exit_code && output_.alerts()) return 1;
    return 0;
  }

  // The signal thread: never returns until the process ends.
  void signal_loop(sigset_t set) {
    for (;;) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      if (sig == SIGUSR1 || sig == SIGHUP) {
        // Under signal_mu_: run() waits for this before main() returns, so a
        // reload is never cut off halfway by the process exiting.
        std::lock_guard work(signal_mu_);
        if (exiting_) continue;
        if (sig == SIGUSR1) print_err(stats_text());
        else reload();
      } else if (sig == SIGINT || sig == SIGTERM) {
        request_stop();
        // Deciders reading a followed file wake at once; one blocked in
        // read(2) on a pipe cannot be woken: finish without it.
        std::unique_lock lock(mu_);
        if (!cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return finished_; })) {
          lock.unlock();
          finish();
          std::_Exit(0);
        }
        return;
      }
    }
  }

 private:
  Generation* gen() const { return current_.load(std::memory_order_acquire); }

  bool needs_timer() const {
    return gen()->rules->settings.time == sw::config::TimeSource::Arrival || state_ != nullptr;
  }

  void request_stop() {
    stop_requested_ = true;
    stop_ = true;
    std::lock_guard lock(mu_);
    for (auto* f : followers_) f->stop();
  }

  // Writes records, then hands alert/resolved/summary records to exec.
  void emit(const std::vector<sw::engine::Record>& records, const std::string& explain = {}) {
    if (!output_.write(records, explain)) {
      stop_ = true;  // output closed: end quietly (state is still saved)
      std::lock_guard lock(mu_);
      for (auto* f : followers_) f->stop();
    }
    if (!exec_) return;
    for (const auto& r : records) {
      if (r.type == sw::engine::RecordType::Line || r.rule == nullptr) continue;
      if (!r.rule->exec.empty()) exec_->submit(sw::output::ExecPool::job_for(r, r.rule->exec));
      if (!exec_argv_.empty()) exec_->submit(sw::output::ExecPool::job_for(r, exec_argv_));
    }
  }

  // One input, decided in its own order (SPEC §3).
  void decide(const InputSpec& in) {
    Generation* g = nullptr;
    std::optional<sw::match::Matcher> matcher;
    std::optional<sw::match::LogTime> logtime;
    sw::match::MatchResult m;
    std::vector<sw::engine::Record> records;
    std::vector<sw::engine::ExplainEntry> explain;
    // Per-line counters, added to the engine's stats once per batch (and
    // before the rules change): one atomic add per line each would cost more
    // than deciding a line that matches nothing.
    struct Counts {
      uint64_t lines = 0, truncated = 0, no_timestamp = 0, untimed = 0;
      int64_t newest_ts = INT64_MIN;  // for last_log_ms_ (--state)
    } counts;
    // Lines that matched nothing only move "now"; while that crosses no
    // bucket boundary (fold_until: the next one after now), offer() would
    // decide and write nothing, so such lines just raise `pending`, handed to
    // the engine before the next line it decides and at the end of a batch.
    // The records are the same; a backlog of non-matching lines costs a
    // comparison each instead of an atomic update of the shared now.
    const bool fold = !opt_.passthrough && !opt_.explain;
    int64_t fold_until = INT64_MIN;
    int64_t pending = INT64_MIN;
    auto flush_pending = [&] {
      if (pending == INT64_MIN) return;
      g->engine->tick(pending, records);  // due boundary checks (none, unless another input moved now)
      pending = INT64_MIN;
      if (!records.empty()) emit(records);
    };
    auto flush_counts = [&] {
      if (g != nullptr) flush_pending();
      if (counts.newest_ts != INT64_MIN) {
        int64_t prev = last_log_ms_.load();
        while (prev < counts.newest_ts && !last_log_ms_.compare_exchange_weak(prev, counts.newest_ts)) {
        }
      }
      if (g == nullptr || counts.lines == 0) return;
      auto& stats = g->engine->stats();
      stats.lines.add(counts.lines);
      if (counts.truncated) stats.truncated.add(counts.truncated);
      if (counts.no_timestamp) stats.no_timestamp.add(counts.no_timestamp);
      if (counts.untimed) stats.untimed.add(counts.untimed);
      counts = Counts{};
    };
    auto refresh = [&]() -> bool {
      g = gen();
      flush_counts();
      auto made = sw::match::Matcher::make(*g->rules, opt_.explain, use_prefilter());
      if (!made) {
        print_err("swthrottle: " + made.error().str());
        input_failed_ = true;
        return false;
      }
      matcher.emplace(std::move(*made));
      logtime.reset();
      if (g->logtime) logtime.emplace(*g->logtime);  // each decider its own copy (its own RE2)
      return true;
    };
    if (!refresh()) return;

    std::optional<int64_t> last_ts;
    if (last_log_ms_.load() >= 0) last_ts = last_log_ms_.load();  // from --state
    uint64_t line_no = 0;
    const std::string shown = in.name == "-" ? "(standard input)" : in.name;

    // Decides one line whose match result (and log timestamp, when time =
    // log) are known: ts is the line's own timestamp, INT64_MIN when it has
    // none (a sentinel rather than an optional: GCC 12 warns falsely on it).
    auto decide_line = [&](std::string_view text, bool truncated, const sw::match::MatchResult& mr, int64_t ts,
                           int64_t arrival_ms) {
      ++line_no;
      ++counts.lines;
      if (truncated) ++counts.truncated;
      sw::engine::LineEvent ev;
      ev.text = text;
      if (g->logtime) {
        if (ts != INT64_MIN) {
          last_ts = ts;
          counts.newest_ts = std::max(counts.newest_ts, ts);
        } else if (last_ts) {
          ++counts.no_timestamp;
        }
        ev.timed = last_ts.has_value();
        if (!ev.timed) ++counts.untimed;
        ev.t_ms = last_ts.value_or(0);
      } else {
        // A line decided now was read now: never older than the engine's now,
        // which the timer may have moved on meanwhile.
        ev.t_ms = std::max(arrival_ms, g->engine->now_ms());
      }
      if (fold && mr.hits.empty()) {
        if (!ev.timed) return !stop_.load(std::memory_order_relaxed);  // nothing to decide, nothing to move
        if (ev.t_ms < fold_until) {
          pending = std::max(pending, ev.t_ms);
          return !stop_.load(std::memory_order_relaxed);
        }
      }
      flush_pending();
      const bool want_explain = opt_.explain && !mr.hits.empty();
      g->engine->offer(ev, mr, records, want_explain ? &explain : nullptr);
      fold_until = g->engine->next_boundary_ms();
      std::string shown_explain;
      if (want_explain)
        shown_explain = sw::cli::explain_line(*g->rules, shown, line_no, text, ev.timed, ev.t_ms, explain);
      if (!records.empty() || !shown_explain.empty()) emit(records, shown_explain);
      return !stop_.load(std::memory_order_relaxed);
    };
    // The wall clock only serves syslog year inference: read it every 1024
    // lines, not for every line.
    int64_t wall_ms = clock_.wall_ms();
    uint32_t wall_age = 0;
    // With order_mu_ held shared: a reload, a timer tick or the final
    // summaries cannot come between this line's match, decision and output.
    auto process_locked = [&](const sw::input::Line& line) {
      if (gen() != g && !refresh()) return false;  // rules reloaded (SIGHUP)
      matcher->match(line.text, m);
      int64_t ts = INT64_MIN;
      if (logtime) {
        if (++wall_age >= 1024) {
          wall_age = 0;
          wall_ms = clock_.wall_ms();
        }
        if (auto t = logtime->parse(line.text, wall_ms)) ts = *t;
      }
      return decide_line(line.text, line.truncated, m, ts, logtime ? 0 : arrival_.now_ms());
    };
    auto process = [&](const sw::input::Line& line) {
      std::shared_lock order(order_mu_);
      const bool go = process_locked(line);
      flush_counts();
      return go;
    };
    // Decides a batch matched with the rules of b.gen, under order_mu_.
    auto decide_batch = [&](Batch& b) {
      if (gen() != g && !refresh()) return false;
      const bool stale = b.gen != g;  // matched with rules replaced since (SIGHUP): match again
      bool go = true;
      for (std::size_t i = 0; go && i < b.size(); ++i) {
        if (stale) {
          go = process_locked(sw::input::Line{b.line(i), b.truncated(i)});
          continue;
        }
        go = decide_line(b.line(i), b.truncated(i), b.results[i], b.ts[i], logtime ? 0 : arrival_.now_ms());
      }
      flush_counts();
      return go;
    };

    if (in.follow) {
      sw::input::FollowOptions fo;
      fo.from_start = opt_.from_start;
      fo.max_line = opt_.max_line;
      sw::input::Follower follower(in.name, fo);
      {
        std::lock_guard lock(mu_);
        followers_.push_back(&follower);
        if (stop_) follower.stop();
      }
      while (!follower.stopped()) {
        auto line = follower.next(-1);
        for (const auto& n : follower.take_notices()) print_err("swthrottle: " + n);
        if (line && !process(*line)) break;
      }
      if (auto last = follower.take_partial(); last && !output_.closed()) process(*last);
      std::lock_guard lock(mu_);
      followers_.erase(std::remove(followers_.begin(), followers_.end(), &follower), followers_.end());
      return;
    }
    if (workers_for(in) > 1) {
      // Matched in parallel, decided here in input order: the records are
      // those of the sequential path, whatever -j is.
      auto pipe = ParallelMatch::start(in.fd, opt_.max_line, workers_for(in), [this] { return gen(); }, clock_);
      while (Batch* b = pipe->next()) {
        bool go;
        {
          std::shared_lock order(order_mu_);
          go = decide_batch(*b);
        }
        pipe->release(b);
        if (!go) break;
      }
      if (const std::string err = pipe->error(); !err.empty()) {
        print_err("swthrottle: " + in.name + ": " + err);
        input_failed_ = true;
      }
      pipe->stop();
      return;
    }
    // One thread: read a batch, match it (the prefilter scans it whole),
    // decide it.
    sw::input::LineReader reader(in.fd, opt_.max_line);
    Batch b;
    while (!stop_.load(std::memory_order_relaxed)) {
      b.fill(reader, /*own=*/false);
      std::shared_lock order(order_mu_);
      if (gen() != g && !refresh()) break;
      wall_ms = clock_.wall_ms();
      b.gen = g;
      b.match(&*matcher, logtime ? &*logtime : nullptr, wall_ms);
      if (!decide_batch(b) || b.last) break;
    }
    if (!reader.error().empty()) {
      print_err("swthrottle: " + in.name + ": " + reader.error());
      input_failed_ = true;
    }
  }

  // Matching threads for an input: parallel matching pays off on a backlog
  // read from one file or pipe. Followed files stay on their decider (a line
  // must not wait for a batch to fill), and several inputs already decide in
  // parallel.
  int workers_for(const InputSpec& in) const {
    if (in.follow || inputs_ > 1 || opt_.explain) return 1;
    const int j = opt_.threads > 0 ? opt_.threads : static_cast<int>(std::thread::hardware_concurrency());
    return std::max(1, j);
  }

  // Arrival time: boundary checks at every bucket boundary even when no line
  // comes (SPEC §3). With --state: a save every few seconds (SPEC §6), so a
  // crash of a long run loses at most those seconds.
  void timer_loop() {
    std::vector<sw::engine::Record> records;
    int64_t next_save = clock_.steady_ms() + kStateSaveEveryMs;
    std::unique_lock lock(mu_);
    while (!timer_done_) {
      Generation* g = gen();
      const bool arrival = g->rules->settings.time == sw::config::TimeSource::Arrival;
      int64_t wait = 200;
      if (arrival) {
        const int64_t next = g->engine->next_boundary_ms();
        if (next != INT64_MAX) wait = std::clamp<int64_t>(arrival_.steady_at(next) - clock_.steady_ms(), 0, 200);
      }
      cv_.wait_for(lock, std::chrono::milliseconds(wait), [this] { return timer_done_; });
      if (timer_done_) break;
      lock.unlock();
      {
        // Exclusive: a tick's records and a decider's line never interleave
        // (a resolve written after the alert of a line that came later).
        std::unique_lock order(order_mu_);
        lock.lock();
        const bool done = timer_done_;  // finish() has begun: it writes or saves the rest
        lock.unlock();
        if (!done) {
          g = gen();
          if (arrival) {
            g->engine->tick(arrival_.now_ms(), records);
            if (!records.empty()) emit(records);
          }
          if (state_ && clock_.steady_ms() >= next_save) {
            save_state(*g);
            next_save = clock_.steady_ms() + kStateSaveEveryMs;
          }
        }
      }
      lock.lock();
    }
  }

  void save_state(Generation& g) {
    sw::engine::EngineState st = g.engine->save_state();
    st.last_log_ms = last_log_ms_.load();
    if (auto r = state_->save(st, clock_.wall_ms()); !r) print_err("swthrottle: " + r.error().str());
  }

  // End of input, a signal, or a closed output: once. With --state, pending
  // summaries are saved (carried to the next run), else written.
  void finish() {
    std::lock_guard once(finish_mu_);
    if (finished_flag_) return;
    finished_flag_ = true;
    std::unique_lock order(order_mu_);
    {
      // The timer stops first: it must not write a summary (or save an older
      // snapshot) after the final save below.
      std::lock_guard lock(mu_);
      timer_done_ = true;
      cv_.notify_all();
    }
    Generation& g = *gen();
    if (state_) {
      save_state(g);
    } else if (!output_.closed()) {
      std::vector<sw::engine::Record> records;
      g.engine->finish(records);
      emit(records);
    }
    if (exec_) exec_->drain();  // exit waits for running commands
    if (opt_.stats) print_err(stats_text());
    std::lock_guard lock(mu_);
    finished_ = true;
    cv_.notify_all();
  }

  std::string stats_text() {
    std::string s = sw::cli::stats_report(*gen()->engine);
    if (exec_) {
      const auto e = exec_->stats();
      s += "swthrottle: stats: exec: started " + std::to_string(e.started) + " succeeded " +
           std::to_string(e.succeeded) + " retried " + std::to_string(e.retried) + " timed out " +
           std::to_string(e.timed_out) + " gave up " + std::to_string(e.gave_up) + "\n";
    }
    return s;
  }

  // SIGHUP: a bad new rules file is reported and the old rules stay.
  void reload() {
    auto next = load_generation(opt_);
    if (!next) {
      print_err("swthrottle: SIGHUP: keeping the current rules: " + next.error().str());
      return;
    }
    if (uses_exec(*(*next)->rules) && !exec_) {
      print_err("swthrottle: SIGHUP: keeping the current rules: exec actions need the exec pool, which "
                "starts only when the rules at start or --exec use it; restart swthrottle");
      return;
    }
    // Exclusive: no decider is between match and output while the rules
    // change, so the old engine takes no line after its windows are handed on.
    std::unique_lock order(order_mu_);
    Generation* old = gen();
    std::vector<sw::engine::Record> flushed;
    const std::vector<std::string> fresh = (*next)->engine->adopt(*old->engine, flushed);
    if (!flushed.empty()) emit(flushed);
    const std::size_t n = (*next)->rules->rules.size();
    std::lock_guard lock(mu_);
    current_.store(next->get(), std::memory_order_release);
    generations_.push_back(std::move(*next));
    std::string msg = "swthrottle: SIGHUP: reloaded " + std::to_string(n) + " rules";
    if (!fresh.empty()) {
      msg += "; started fresh:";
      for (const auto& f : fresh) msg += " " + f;
    }
    print_err(msg);
  }

  const sw::cli::Options opt_;  // a copy: the signal thread may outlive main()'s locals
  sw::SystemClock clock_;
  sw::ArrivalClock arrival_;
  Output output_;
  std::vector<std::unique_ptr<Generation>> generations_;  // guarded by mu_ (appended on reload)
  std::atomic<Generation*> current_{nullptr};
  std::unique_ptr<sw::output::ExecPool> exec_;
  std::vector<std::string> exec_argv_;
  std::unique_ptr<sw::state::StateFile> state_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> input_failed_{false};
  std::atomic<int64_t> last_log_ms_{-1};
  std::size_t inputs_ = 1;

  // Lock order: order_mu_, then mu_ (then Output's and the engine's own).
  // Deciders hold order_mu_ shared from a line's match to its output; the
  // timer, reload() and finish() hold it exclusive.
  std::shared_mutex order_mu_;
  std::mutex mu_;  // guards followers_, timer_done_, finished_, generations_
  std::condition_variable cv_;
  std::vector<sw::input::Follower*> followers_;
  bool timer_done_ = false;
  bool finished_ = false;
  std::mutex finish_mu_;
  bool finished_flag_ = false;
  std::mutex signal_mu_;  // held by the signal thread while it reloads or reports
  bool exiting_ = false;  // guarded by signal_mu_
};

}  // namespace

int main(int argc, char** argv) {
  sw::cli::Parsed parsed = sw::cli::parse_options(argc, argv);
  if (!parsed.options) {
    std::fputs(parsed.text.c_str(), parsed.exit_status == 0 ? stdout : stderr);
    return parsed.exit_status;
  }
  const sw::cli::Options& opt = *parsed.options;

  auto first = load_generation(opt);
  if (!first) {
    print_err("swthrottle: " + first.error().str());
    return 2;
  }
  if (opt.check) {
    std::fputs(sw::cli::check_summary(*(*first)->rules).c_str(), stdout);
    return 0;
  }

  // Inputs: without --follow every file must open now (exit 2, nothing
  // processed); with --follow a missing file is waited for, like tail -F.
  std::vector<InputSpec> inputs;
  std::vector<std::string> names = opt.inputs;
  if (names.empty()) names.push_back("-");
  for (const auto& n : names) {
    InputSpec in{n, -1, opt.follow && n != "-"};
    if (n == "-") {
      in.fd = 0;
    } else if (!in.follow) {
      in.fd = ::open(n.c_str(), O_RDONLY | O_CLOEXEC);
      if (in.fd < 0) {
        print_err("swthrottle: " + n + ": " + std::strerror(errno));
        return 2;
      }
    }
    inputs.push_back(in);
  }

  ::signal(SIGPIPE, SIG_IGN);  // a closed output is seen as EPIPE and ends the run quietly
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGUSR1, SIGHUP}) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // inherited by every thread started below

  // Never destroyed: the signal thread may still be waking up when main
  // returns (SIGTERM just as the input ends), and must not find it gone.
  // Held by a static so that LeakSanitizer sees it as reachable.
  static App* app = nullptr;
  app = new App(opt, std::move(*first));
  if (!app->start()) return 2;
  std::thread signals([set] { app->signal_loop(set); });
  signals.detach();  // it ends with the process
  return app->run(std::move(inputs));
}
