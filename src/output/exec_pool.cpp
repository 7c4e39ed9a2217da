#include "output/exec_pool.h"

#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <system_error>
#include <utility>

#include "output/child_process.h"
#include "util/stderr.h"

namespace swthrottle::output {
namespace {

std::vector<std::string> snapshot_environ() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

int64_t backoff_for(const ExecOptions& opt, int retry) {
  constexpr int64_t kMaxBackoffMs = 3'600'000;  // an hour: past that, the shift only overflows
  int64_t ms = std::max<int64_t>(opt.backoff_ms, 0);
  for (int i = 1; i < retry && ms < kMaxBackoffMs; ++i) ms *= 2;
  return std::min(ms, kMaxBackoffMs);
}

// What a waiting job holds, for the queue's byte bound: its strings and a
// little for each one's bookkeeping.
std::size_t job_bytes(const ExecJob& job) {
  constexpr std::size_t kPerString = 32;
  std::size_t n = job.stdin_data.size() + job.label.size() + 2 * kPerString;
  for (const std::string& a : job.argv) n += a.size() + kPerString;
  for (const auto& [k, v] : job.env) n += k.size() + v.size() + 2 * kPerString;
  return n;
}

}  // namespace

ExecPool::ExecPool(ExecOptions o, Reporter reporter, const Clock& clock)
    : opt_([&] {
        o.jobs = std::max(o.jobs, 1);
        o.queue_capacity = std::max<std::size_t>(o.queue_capacity, 1);
        o.retries = std::max(o.retries, 0);
        // Capped at ten years so that now() + the duration cannot overflow.
        constexpr int64_t kLongest = int64_t{10} * 366 * 24 * 3'600'000;
        o.timeout_ms = std::clamp<int64_t>(o.timeout_ms, 1, kLongest);
        o.kill_grace_ms = std::clamp<int64_t>(o.kill_grace_ms, 0, kLongest);
        return o;
      }()),
      clock_(clock),
      report_(std::move(reporter)),
      environ_(snapshot_environ()),
      // Without one (out of descriptors), running commands see the stop
      // through stopping_ within 50 ms instead of at once.
      stop_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  workers_.reserve(static_cast<std::size_t>(std::min(opt_.jobs, 4096)));
  try {
    for (int i = 0; i < opt_.jobs; ++i) {
      if (i == opt_.fail_thread_at)
        throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again), "test hook");
      workers_.emplace_back([this] { worker(); });
    }
  } catch (const std::system_error& e) {
    // Out of threads (a low ulimit -u, a cgroup's pids.max): run with the
    // workers we got. With none, the caller decides (workers() == 0).
    thread_error_ = e.code().message();
  }
  if (!thread_error_.empty() && !workers_.empty()) {
    const std::string n = std::to_string(workers_.size());
    report("swthrottle: exec: started only " + n + " of " + std::to_string(opt_.jobs) + " worker threads (" +
           thread_error_ + "): at most " + n + " commands run at once");
  }
}

ExecPool::~ExecPool() {
  drain();
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  not_empty_.notify_all();
  for (std::thread& t : workers_) t.join();
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

void ExecPool::submit(ExecJob job) {
  if (workers_.empty()) {
    {
      std::unique_lock lk(mu_);
      if (stopping_) {
        const std::string line = not_run_locked(job, "");
        lk.unlock();
        if (!line.empty()) report(line);
        return;
      }
      ++stats_.submitted;
      ++active_;
    }
    sigset_t pipe_set;
    sigset_t old_mask;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
    run(job);
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    std::lock_guard lk(mu_);
    if (--active_ == 0 && queue_.empty()) idle_.notify_all();
    return;
  }
  const std::size_t size = job_bytes(job);
  std::string line;
  {
    std::unique_lock lk(mu_);
    // An empty queue takes any job: a record larger than queue_bytes still runs.
    auto room = [&] {
      return queue_.empty() || (queue_.size() < opt_.queue_capacity && queue_bytes_ + size <= opt_.queue_bytes);
    };
    if (opt_.full == ExecOptions::Full::Block) not_full_.wait(lk, [&] { return stopping_ || room(); });
    if (stopping_) {
      line = not_run_locked(job, "");
    } else if (!room()) {
      ++stats_.dropped;
      ++dropped_in_episode_;
      if (!dropping_) {
        dropping_ = true;
        line = "swthrottle: exec: the queue is full (" + std::to_string(queue_.size()) + " actions, " +
               std::to_string(queue_bytes_) + " bytes waiting): new actions are dropped, and counted, until it " +
               "is half empty; the first: " + job.label;
      }
    } else {
      queue_bytes_ += size;
      queue_.push_back(std::move(job));
      ++stats_.submitted;
      lk.unlock();
      not_empty_.notify_one();
      return;
    }
  }
  if (!line.empty()) report(line);
}

void ExecPool::stop(const std::string& why) {
  std::vector<std::string> lines;
  {
    std::lock_guard lk(mu_);
    if (stopping_) return;
    stop_why_ = why;
    stopping_.store(true, std::memory_order_release);
    for (const ExecJob& j : queue_)
      if (std::string l = not_run_locked(j, ""); !l.empty()) lines.push_back(std::move(l));
    queue_.clear();
    queue_bytes_ = 0;
    // Active until the lines below are out: drain() (and so the exit) must
    // not come before them.
    ++active_;
  }
  if (stop_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof one);  // stays readable: every supervision sees it
  }
  stopped_.notify_all();
  not_full_.notify_all();
  for (const std::string& l : lines) report(l);
  std::lock_guard lk(mu_);
  if (--active_ == 0) idle_.notify_all();  // the queue is empty now
}

void ExecPool::drain() {
  std::unique_lock lk(mu_);
  idle_.wait(lk, [&] { return queue_.empty() && active_ == 0; });
}

void ExecPool::flush_reports() {
  std::vector<std::string> lines;
  {
    std::lock_guard lk(mu_);
    const uint64_t held = stats_.not_run - not_run_reported_ - not_run_flushed_;
    if (held > 0) {
      lines.push_back("swthrottle: exec: " + std::to_string(held) + " more action" + (held == 1 ? "" : "s") +
                      " not run: " + stop_why_);
      not_run_flushed_ += held;
    }
    if (std::string l = end_drops_locked(true); !l.empty()) lines.push_back(std::move(l));
  }
  for (const std::string& l : lines) report(l);
}

ExecStats ExecPool::stats() const {
  std::lock_guard lk(mu_);
  ExecStats s = stats_;
  s.queued = queue_.size();
  s.queued_bytes = queue_bytes_;
  return s;
}

std::string ExecPool::not_run_locked(const ExecJob& job, const std::string& detail) {
  ++stats_.not_run;
  if (not_run_reported_ >= opt_.reported_not_run) return {};
  ++not_run_reported_;
  return "swthrottle: exec: " + job.label + ": not run: " + stop_why_ + (detail.empty() ? "" : " " + detail);
}

std::string ExecPool::end_drops_locked(bool at_flush) {
  if (!dropping_) return {};
  if (!at_flush && (queue_.size() > opt_.queue_capacity / 2 || queue_bytes_ > opt_.queue_bytes / 2)) return {};
  dropping_ = false;
  const uint64_t n = dropped_in_episode_;
  dropped_in_episode_ = 0;
  return "swthrottle: exec: " + std::to_string(n) + " action" + (n == 1 ? "" : "s") +
         " dropped while the queue was full";
}

void ExecPool::worker() {
  // A child that exits without reading its stdin makes our write fail with
  // EPIPE and raise SIGPIPE at this thread; the program may not ignore
  // SIGPIPE, so this thread blocks it (the children get an empty mask).
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);

  for (;;) {
    ExecJob job;
    std::string line;
    {
      std::unique_lock lk(mu_);
      not_empty_.wait(lk, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_, and nothing left to run
      job = std::move(queue_.front());
      queue_.pop_front();
      queue_bytes_ -= std::min(queue_bytes_, job_bytes(job));
      ++active_;
      line = end_drops_locked(false);
    }
    not_full_.notify_one();
    if (!line.empty()) report(line);
    run(job);
    {
      std::lock_guard lk(mu_);
      --active_;
      if (queue_.empty() && active_ == 0) idle_.notify_all();
    }
  }
}

void ExecPool::run(ExecJob& job) {
  const std::string prefix = "swthrottle: exec: " + job.label + ": ";
  if (job.argv.empty() || job.argv[0].empty()) {
    {
      std::lock_guard lk(mu_);
      ++stats_.gave_up;
    }
    report(prefix + "empty command");
    return;
  }
  const int max_attempts = 1 + opt_.retries;
  std::string last_why;  // of the failed attempt before this one
  for (int attempt = 1;; ++attempt) {
    {
      std::unique_lock lk(mu_);
      if (attempt > 1) {
        // The backoff ends early at a stop(): the job is not retried.
        stopped_.wait_for(lk, std::chrono::milliseconds(backoff_for(opt_, attempt - 1)),
                          [&] { return stopping_.load(); });
      }
      if (stopping_) {
        const int failed = attempt - 1;
        const std::string line = not_run_locked(
            job, failed == 0 ? std::string()
                             : "(after " + std::to_string(failed) +
                                   (failed == 1 ? " failed attempt: " : " failed attempts: ") + last_why + ")");
        lk.unlock();
        if (!line.empty()) report(line);
        return;
      }
      if (attempt > 1) ++stats_.retried;
    }
    const ChildResult a = run_child(job, environ_, ChildLimits{opt_.timeout_ms, opt_.kill_grace_ms}, clock_,
                                    ChildStop{stop_fd_, &stopping_});
    std::string line;
    {
      std::lock_guard lk(mu_);
      if (a.spawned) ++stats_.started;
      if (a.outcome == ChildResult::Outcome::Ok) {
        ++stats_.succeeded;
        return;
      }
      ++stats_.failed_attempts;
      if (a.timed_out) ++stats_.timed_out;
      if (a.stopped) {
        line = not_run_locked(job, "(its command was killed)");
      } else if (a.outcome == ChildResult::Outcome::Failed && attempt < max_attempts) {
        last_why = a.why;
        continue;
      } else {
        ++stats_.gave_up;
        if (a.outcome == ChildResult::Outcome::Permanent) {
          line = prefix + a.why;
        } else {
          line = prefix + "gave up after " + std::to_string(attempt) + (attempt == 1 ? " attempt: " : " attempts: ") +
                 a.why;
        }
      }
    }
    if (!line.empty()) report(line);
    return;
  }
}

void ExecPool::report(const std::string& line) {
  std::lock_guard lk(report_mu_);
  if (report_) {
    report_(line);
    return;
  }
  print_error(line);
}

}  // namespace swthrottle::output
