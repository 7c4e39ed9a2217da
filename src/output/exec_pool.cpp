#include "output/exec_pool.h"

#include <signal.h>
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

}  // namespace

ExecPool::ExecPool(ExecOptions o, Reporter report, const Clock& clock)
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
      report_(std::move(report)),
      environ_(snapshot_environ()) {
  workers_.reserve(static_cast<std::size_t>(opt_.jobs));
  try {
    for (int i = 0; i < opt_.jobs; ++i) workers_.emplace_back([this] { worker(); });
  } catch (const std::system_error&) {
    // Out of threads: run with the workers we got; with none, submit() runs
    // jobs itself. Slower, but nothing is lost and nothing crashes.
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
}

void ExecPool::submit(ExecJob job) {
  if (workers_.empty()) {
    {
      std::lock_guard lk(mu_);
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
  {
    std::unique_lock lk(mu_);
    not_full_.wait(lk, [&] { return queue_.size() < opt_.queue_capacity; });
    queue_.push_back(std::move(job));
    ++stats_.submitted;
  }
  not_empty_.notify_one();
}

void ExecPool::drain() {
  std::unique_lock lk(mu_);
  idle_.wait(lk, [&] { return queue_.empty() && active_ == 0; });
}

ExecStats ExecPool::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
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
    {
      std::unique_lock lk(mu_);
      not_empty_.wait(lk, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_, and nothing left to run
      job = std::move(queue_.front());
      queue_.pop_front();
      ++active_;
    }
    not_full_.notify_one();
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
  for (int attempt = 1;; ++attempt) {
    if (attempt > 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff_for(opt_, attempt - 1)));
      std::lock_guard lk(mu_);
      ++stats_.retried;
    }
    const ChildResult a = run_child(job, environ_, ChildLimits{opt_.timeout_ms, opt_.kill_grace_ms}, clock_);
    {
      std::lock_guard lk(mu_);
      if (a.spawned) ++stats_.started;
      if (a.outcome == ChildResult::Outcome::Ok) {
        ++stats_.succeeded;
        return;
      }
      ++stats_.failed_attempts;
      if (a.timed_out) ++stats_.timed_out;
      if (a.outcome == ChildResult::Outcome::Failed && attempt < max_attempts) continue;
      ++stats_.gave_up;
    }
    if (a.outcome == ChildResult::Outcome::Permanent) {
      report(prefix + a.why);
    } else {
      report(prefix + "gave up after " + std::to_string(attempt) + (attempt == 1 ? " attempt: " : " attempts: ") +
             a.why);
    }
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
