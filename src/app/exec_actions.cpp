#include "app/exec_actions.h"

#include <cstdlib>
#include <cstring>

#include "app/load_generation.h"
#include "config/duration.h"
#include "output/command_line.h"

namespace swthrottle::app {

namespace {

// The bound of the exec actions waiting for a command slot (man page,
// Actions): whichever is reached first.
constexpr std::size_t kExecQueueJobs = 10'000;
constexpr std::size_t kExecQueueBytes = std::size_t{64} << 20;

}  // namespace

Result<ExecActions> ExecActions::start(const cli::Options& options, const config::RuleSet& rules, const Clock& clock) {
  ExecActions actions;
  if (!options.exec.empty()) {
    auto argv = output::split_command(options.exec);
    if (!argv) return Error{"", 0, 0, "--exec: " + argv.error().str()};
    actions.argv_ = std::move(*argv);
  }
  if (actions.argv_.empty() && !uses_exec(rules)) return actions;
  output::ExecOptions eo;
  eo.jobs = options.exec_jobs;
  eo.timeout_ms = *config::parse_duration(options.exec_timeout);  // checked by parse_options
  // Output lines never wait on a slow command: past this bound (man
  // page, Actions) an action is dropped, counted and reported, and the
  // record is still written. Memory: at most kExecQueueBytes of waiting
  // actions, whatever the line length.
  eo.queue_capacity = kExecQueueJobs;
  eo.queue_bytes = kExecQueueBytes;
  eo.full = output::ExecOptions::Full::Drop;
  if (const char* at = std::getenv("SWTHROTTLE_EXEC_THREAD_FAIL")) eo.fail_thread_at = std::atoi(at);  // tests
  actions.pool_ = std::make_unique<output::ExecPool>(eo, output::ExecPool::Reporter{}, clock);
  if (actions.pool_->workers() == 0)
    return Error{"", 0, 0,
                 "exec: cannot start a worker thread for the actions (" + actions.pool_->thread_error() +
                     "); lower --exec-jobs or raise the limit on processes (ulimit -u, the unit's TasksMax=)"};
  return actions;
}

void ExecActions::submit(const std::vector<engine::Record>& records) {
  if (!pool_) return;
  for (const auto& r : records) {
    if (r.type == engine::RecordType::Line || r.rule == nullptr) continue;
    if (!r.rule->exec.empty()) pool_->submit(output::exec_job_for(r, r.rule->exec));
    if (!argv_.empty()) pool_->submit(output::exec_job_for(r, argv_));
  }
}

void ExecActions::stop(int sig) {
  if (!pool_) return;
  const char* name = sig > 0 ? sigabbrev_np(sig) : nullptr;
  pool_->stop(name != nullptr ? std::string("stopped by SIG") + name : std::string("the run stopped"));
}

void ExecActions::finish() {
  if (!pool_) return;
  pool_->drain();  // exit waits for running commands; after a stop, for a second at most (killed)
  pool_->flush_reports();
}

std::optional<output::ExecStats> ExecActions::stats() const {
  if (!pool_) return std::nullopt;
  return pool_->stats();
}

bool ExecActions::lost_actions() const {
  if (!pool_) return false;
  const output::ExecStats e = pool_->stats();
  return e.gave_up > 0 || e.dropped > 0 || e.not_run > 0;
}

}  // namespace swthrottle::app
