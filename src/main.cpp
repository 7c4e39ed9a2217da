// swthrottle's entry point: command line -> rules -> inputs -> engine ->
// output. The only place that maps errors to exit statuses (SPEC §6).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/options.h"
#include "cli/report.h"
#include "config/rules.h"
#include "engine/engine.h"
#include "input/line_reader.h"
#include "match/logtime.h"
#include "match/matcher.h"
#include "output/writer.h"
#include "util/clock.h"

namespace sw = swthrottle;

namespace {

void print_err(const std::string& s) {
  std::string line = s;
  if (line.empty() || line.back() != '\n') line += '\n';
  (void)!::write(2, line.data(), line.size());
}

// stdout, shared by the deciders and the timer: one record at a time.
class Output {
 public:
  explicit Output(sw::output::Format f) : writer_(1, f) {}

  // Writes the records in order; false once the output is closed.
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
  std::mutex& mutex() { return mu_; }

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

struct Input {
  std::string name;  // as given ("-" for standard input)
  int fd = -1;
};

struct Run {
  const sw::cli::Options& opt;
  const sw::config::RuleSet& rules;
  sw::engine::Engine& engine;
  Output& output;
  const sw::match::LogTime* logtime;  // time = log only
  const sw::ArrivalClock& arrival;
  const sw::Clock& clock;
  std::atomic<bool>& stop;
  std::atomic<bool> input_failed{false};
};

// One input, decided in its own order (SPEC §3).
void run_input(Run& run, const Input& in) {
  auto matcher_r = sw::match::Matcher::make(run.rules, run.opt.explain);
  if (!matcher_r) {
    print_err("swthrottle: " + matcher_r.error().str());
    run.input_failed = true;
    return;
  }
  sw::match::Matcher matcher = std::move(*matcher_r);
  std::optional<sw::match::LogTime> logtime;
  if (run.logtime) logtime.emplace(*run.logtime);  // each decider its own copy (its own RE2)
  sw::input::LineReader reader(in.fd, run.opt.max_line);
  sw::match::MatchResult m;
  std::vector<sw::engine::Record> records;
  std::vector<sw::engine::ExplainEntry> explain;
  std::optional<int64_t> last_ts;
  uint64_t line_no = 0;
  auto& stats = run.engine.stats();
  while (!run.stop.load(std::memory_order_relaxed)) {
    std::optional<sw::input::Line> line = reader.next();
    if (!line) break;
    ++line_no;
    stats.lines.add();
    if (line->truncated) stats.truncated.add();
    matcher.match(line->text, m);
    sw::engine::LineEvent ev;
    ev.text = line->text;
    if (logtime) {
      if (auto ts = logtime->parse(line->text, run.clock.wall_ms())) {
        last_ts = *ts;
      } else if (last_ts) {
        stats.no_timestamp.add();
      }
      ev.timed = last_ts.has_value();
      if (!ev.timed) stats.untimed.add();
      ev.t_ms = last_ts.value_or(0);
    } else {
      ev.t_ms = run.arrival.now_ms();
    }
    const bool want_explain = run.opt.explain && !m.hits.empty();
    run.engine.offer(ev, m, records, want_explain ? &explain : nullptr);
    std::string text;
    if (want_explain)
      text = sw::cli::explain_line(run.rules, in.name == "-" ? "(standard input)" : in.name, line_no, line->text,
                                   ev.timed, ev.t_ms, explain);
    if ((!records.empty() || !text.empty()) && !run.output.write(records, text)) {
      run.stop = true;  // output closed: end quietly
      break;
    }
  }
  if (!reader.error().empty()) {
    print_err("swthrottle: " + in.name + ": " + reader.error());
    run.input_failed = true;
  }
}

// Arrival time: boundary checks at every bucket boundary even when no line
// comes (SPEC §3), so a resolve or a "room again" summary is not held back.
class Timer {
 public:
  Timer(Run& run) : run_(run), thread_([this] { loop(); }) {}
  ~Timer() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void loop() {
    std::vector<sw::engine::Record> records;
    std::unique_lock lock(mu_);
    while (!done_) {
      const int64_t next = run_.engine.next_boundary_ms();
      auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
      if (next != INT64_MAX) {
        const int64_t wait = std::max<int64_t>(0, run_.arrival.steady_at(next) - run_.clock.steady_ms());
        deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::min<int64_t>(wait, 200));
      }
      cv_.wait_until(lock, deadline, [this] { return done_; });
      if (done_) break;
      lock.unlock();
      run_.engine.tick(run_.arrival.now_ms(), records);
      if (!records.empty() && !run_.output.write(records)) run_.stop = true;
      lock.lock();
    }
  }

  Run& run_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// SIGINT/SIGTERM/SIGUSR1/SIGHUP are taken by one thread with sigwait, so no
// handler runs inside a decider.
class SignalThread {
 public:
  SignalThread(Run& run) : run_(run) {
    sigset_t set = signals();
    thread_ = std::thread([this, set] { loop(set); });
  }
  ~SignalThread() {
    ::pthread_kill(thread_.native_handle(), SIGUSR2);  // wakes sigwait to leave
    thread_.join();
  }
  static sigset_t signals() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGINT, SIGTERM, SIGUSR1, SIGHUP, SIGUSR2}) sigaddset(&set, s);
    return set;
  }

 private:
  void loop(sigset_t set) {
    for (;;) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      if (sig == SIGUSR2) return;
      if (sig == SIGUSR1) {
        print_err(sw::cli::stats_report(run_.engine));
      } else if (sig == SIGHUP) {
        print_err("swthrottle: SIGHUP: reloading rules is not available yet; keeping the current rules");
      } else {
        // Write what is pending and leave at once: the readers may be blocked
        // in read(2) on a pipe that never ends.
        std::vector<sw::engine::Record> records;
        run_.engine.finish(records);
        run_.output.write(records);
        if (run_.opt.stats) print_err(sw::cli::stats_report(run_.engine));
        std::lock_guard lock(run_.output.mutex());  // no record is half written
        std::_Exit(0);
      }
    }
  }
  Run& run_;
  std::thread thread_;
};

int open_input(const std::string& name, std::string& err) {
  if (name == "-") return 0;
  int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    err = "swthrottle: " + name + ": " + std::strerror(errno);
    return -1;
  }
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  sw::cli::Parsed parsed = sw::cli::parse_options(argc, argv);
  if (!parsed.options) {
    std::fputs(parsed.text.c_str(), parsed.exit_status == 0 ? stdout : stderr);
    return parsed.exit_status;
  }
  const sw::cli::Options& opt = *parsed.options;
  for (auto [flag, on] : {std::pair{"--follow", opt.follow}, {"--state", !opt.state_file.empty()},
                          {"--exec", !opt.exec.empty()}}) {
    if (on) {
      print_err(std::string("swthrottle: ") + flag + " is not available in this version yet");
      return 2;
    }
  }

  auto loaded = sw::config::load_rules(opt.rule_files);
  if (!loaded) {
    print_err("swthrottle: " + loaded.error().str());
    return 2;
  }
  sw::config::RuleSet rules = std::move(*loaded);
  for (const auto& r : rules.rules) {
    if (!r.exec.empty()) {
      print_err("swthrottle: " + r.file + ":" + std::to_string(r.line) + ": rule \"" + r.name +
                "\": exec actions are not available in this version yet");
      return 2;
    }
  }
  if (opt.time) rules.settings.time = *opt.time;
  if (opt.mode)
    for (auto& r : rules.rules)
      if (!r.mode_set) {
        r.mode = *opt.mode;
        r.fingerprint = sw::config::fingerprint(r);
      }

  std::optional<sw::match::LogTime> logtime;
  if (rules.settings.time == sw::config::TimeSource::Log) {
    auto lt = sw::match::LogTime::make(rules.settings.timestamp, rules.settings.timezone, rules.settings.year);
    if (!lt) {
      sw::Error e = lt.error();
      e.file = rules.settings.timestamp.file;
      e.line = rules.settings.timestamp.line;
      e.col = rules.settings.timestamp.col;
      print_err("swthrottle: " + e.str());
      return 2;
    }
    logtime.emplace(std::move(*lt));
  }
  if (opt.check) {
    std::fputs(sw::cli::check_summary(rules).c_str(), stdout);
    return 0;
  }

  std::vector<Input> inputs;
  std::vector<std::string> names = opt.inputs;
  if (names.empty()) names.push_back("-");
  for (const auto& n : names) {
    std::string err;
    int fd = open_input(n, err);
    if (fd < 0) {
      print_err(err);
      return 2;
    }
    inputs.push_back({n, fd});
  }

  ::signal(SIGPIPE, SIG_IGN);  // a closed output is seen as EPIPE and ends the run quietly
  sigset_t set = SignalThread::signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // inherited by every thread started below

  sw::SystemClock clock;
  sw::ArrivalClock arrival(clock);
  sw::engine::Engine engine(rules, sw::engine::EngineOptions{opt.passthrough, opt.explain});
  Output output(opt.format);
  std::atomic<bool> stop{false};
  Run run{opt, rules, engine, output, logtime ? &*logtime : nullptr, arrival, clock, stop};
  {
    SignalThread signals(run);
    std::unique_ptr<Timer> timer;
    if (rules.settings.time == sw::config::TimeSource::Arrival) timer = std::make_unique<Timer>(run);
    if (inputs.size() == 1) {
      run_input(run, inputs[0]);
    } else {
      std::vector<std::thread> deciders;
      for (const Input& in : inputs) deciders.emplace_back([&run, &in] { run_input(run, in); });
      for (auto& t : deciders) t.join();
    }
    timer.reset();
    if (!output.closed()) {
      std::vector<sw::engine::Record> records;
      engine.finish(records);
      output.write(records);
    }
  }
  for (const Input& in : inputs)
    if (in.fd > 0) ::close(in.fd);
  if (opt.stats) print_err(sw::cli::stats_report(engine));
  if (run.input_failed || output.failed()) return 2;
  if (opt.exit_code && output.alerts()) return 1;
  return 0;
}
