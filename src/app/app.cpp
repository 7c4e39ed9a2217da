#include "app/app.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "app/load_generation.h"
#include "cli/explain.h"
#include "fleet/rule_fleet.h"
#include "metrics/exposition.h"
#include "metrics/stats_text.h"
#include "util/atomic_max.h"
#include "util/stderr.h"

namespace swthrottle::app {

App::App(const cli::Options& options, const AppOptions& app_options, std::unique_ptr<pipeline::Generation> first,
         output::RecordSink& sink, const Clock& clock)
    : options_(options),
      app_options_(app_options),
      clock_(clock),
      arrival_(clock),
      sink_(sink),
      fleet_(clock),
      state_(options_, clock),
      metrics_(options_, clock, [this](metrics::Snapshot& s) { add_snapshot_parts(s); }) {
  current_ = first.get();
  generations_.push_back(std::move(first));
}

App::~App() = default;

bool App::start() {
  const bool started = start_owners();
  // The App is never destroyed: a start that fails stops the fleet thread
  // here, or it would still be reconnecting while the process exits.
  if (!started) fleet_.finish();
  return started;
}

bool App::start_owners() {
  if (std::string why; !fleet_.attach(*current(), &why)) {
    print_message(why);
    return false;
  }
  if (!start_exec() || !open_state()) return false;
  // After the state lock: the outbox beside the state file is this run's.
  auto d = Deliveries::start(
      options_, *current()->rules, state_.path(), [](const std::string& m) { print_message(m); }, clock_);
  if (!d) {
    print_message(d.error().str());
    return false;
  }
  deliveries_ = std::move(*d);
  return metrics_.start_server();  // --metrics-listen
}

// The exec pool, when --exec or a rule's exec asks for one.
bool App::start_exec() {
  auto exec = ExecActions::start(options_, *current()->rules, clock_);
  if (!exec) {
    print_message(exec.error().str());
    return false;
  }
  exec_ = std::move(*exec);
  return true;
}

// --state: the run's lock (waiting up to --state-wait), then the saved
// windows loaded into the first generation's engine.
bool App::open_state() {
  if (state_.open(*current(), last_log_ms_) == StateKeeper::Opened::Loaded) return true;
  start_status_ = cli::kExitStateBusy;
  return false;
}

int App::run(std::vector<InputSpec> inputs) {
  inputs_ = inputs.size();
  live_ = std::any_of(inputs.begin(), inputs.end(),
                      [](const InputSpec& in) { return pace_of(in) != pipeline::StampWatch::Pace::Replay; });
  // Rules loaded, inputs open: ready (systemd, /healthz, swthrottle_ready).
  metrics_.start(inputs);
  {
    std::unique_ptr<std::thread> timer;
    if (needs_timer()) timer = std::make_unique<std::thread>([this] { timer_loop(); });
    // Under log time, the inputs that are not followed are decided in one
    // order merged by time, so a replay of several files is the same on
    // every run (DESIGN.md §3); followed ones keep a decider each, live.
    std::vector<const InputSpec*> merged;
    if (current()->rules->settings.time == config::TimeSource::Log)
      for (const InputSpec& in : inputs)
        if (!in.follow) merged.push_back(&in);
    if (merged.size() < 2) merged.clear();
    if (inputs.size() == 1) {
      read_input(inputs[0]);
    } else {
      std::vector<std::thread> deciders;
      if (!merged.empty()) deciders.emplace_back([this, &merged] { read_merged(merged); });
      for (const InputSpec& in : inputs)
        if (std::find(merged.begin(), merged.end(), &in) == merged.end())
          deciders.emplace_back([this, &in] { read_input(in); });
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
  return exit_status();
}

// The same after SIGINT/SIGTERM as at the end of input: a stop writes (or
// saves) what is pending, it does not hide what the run saw.
int App::exit_status() {
  if (input_failed_ || sink_.failed() || state_.final_save_failed()) return cli::kExitError;
  // An action that gave up, was dropped at a full queue or was not run at a
  // stop: a record was not delivered.
  if (exec_.lost_actions()) return cli::kExitExecGaveUp;
  if (deliveries_.lost_records()) return cli::kExitExecGaveUp;
  if (options_.exit_code && sink_.wrote_alert()) return cli::kExitAlert;
  return 0;
}

void App::emit(const std::vector<engine::Record>& records, const engine::ExplainedLine* explain) {
  if (!sink_.write(records, explain ? cli::explain_line(*explain) : std::string())) {
    stop_ = true;  // output closed: end quietly (state is still saved)
    stop_followers();
    deliveries_.unblock();  // a full delivery queue must not hold the end up
  }
  deliveries_.submit(records);
  exec_.submit(records);
}

void App::fail(const std::string& message) {
  print_message(message);
  input_failed_ = true;
}

void App::saw_log_time(int64_t newest_ms) { atomic_max(last_log_ms_, newest_ms); }

void App::request_stop(int sig) {
  stop_ = true;
  // Exit does not wait for actions: running commands are killed (SIGTERM,
  // then SIGKILL after a second), and every action not run is named on
  // stderr. They do not go into the outbox (man page, Actions).
  exec_.stop(sig);
  // A decider waiting for room in a delivery queue (a receiver long down)
  // must not hold the stop up: from now on submit() does not wait.
  deliveries_.unblock();
  stop_followers();
}

void App::stop_followers() {
  std::lock_guard lock(mu_);
  for (auto* f : followers_) f->stop();
  for (auto* g : globs_) g->stop();
}

// End of input, a signal, or a closed output: once. With --state, pending
// summaries are saved (carried to the next run), else written.
void App::finish() {
  std::lock_guard once(finish_mu_);
  if (finish_started_) return;
  finish_started_ = true;
  metrics_.stopping();
  std::unique_lock order(order_);
  {
    // The timer stops first: it must not write a summary (or save an older
    // snapshot) after the final save below.
    std::lock_guard lock(mu_);
    timer_done_ = true;
    cv_.notify_all();
  }
  pipeline::Generation& g = *current();
  if (fleet_.connected()) {
    // Batched fleet rules: what this host counted goes to the fleet before
    // it exits, and the alerts that flush claims are written.
    fleet_.flush();
    write_fleet_alerts();
  }
  if (state_.active()) {
    // The last save is the one the next run reads (a failure makes exit 2).
    state_.finish(g, last_log_ms_.load());
  } else if (!sink_.closed()) {
    std::vector<engine::Record> records;
    g.engine->finish(records);
    emit(records);
  }
  // Nothing asks the fleet from here on. Its thread stops now, before the
  // process exits under it (a degraded client would still be reconnecting).
  fleet_.finish();
  exec_.finish();  // exit waits for running commands; after a stop, for a second at most (killed)
  // Exit waits for deliveries a while; what is left stays in the outbox
  // for the next run (without --state it is lost, and said so). No worker
  // outlives the run (the process exits without destroying the App).
  deliveries_.finish();
  if (options_.stats) print_error(stats_text());
  metrics_.finish();  // the last metrics file; /metrics stops
  std::lock_guard lock(mu_);
  finished_ = true;
  cv_.notify_all();
}

void App::write_fleet_alerts() {
  std::vector<pipeline::Generation*> gens;
  {
    std::lock_guard lock(mu_);
    for (auto& g : generations_) gens.push_back(g.get());
  }
  fleet_.write_claimed_alerts(gens, [this](const std::vector<engine::Record>& records) { emit(records); });
}

std::string App::stats_text() {
  const metrics::Snapshot s = metrics_.snapshot();
  // --stats-format json: one JSON object (on stderr, never among the records).
  return options_.stats_json ? metrics::stats_json(s) + "\n" : metrics::stats_text(s);
}

// SIGHUP: a bad new rules file is reported and the old rules stay.
void App::reload() {
  // systemd: RELOADING=1 now, READY=1 once the reload is over, whatever
  // its outcome (the old rules stay when the new ones are bad).
  metrics_.reload_started();
  struct ReadyAgain {
    RunMetrics& m;
    ~ReadyAgain() { m.reload_ended(); }
  } ready_again{metrics_};
  auto next = load_generation(options_, current());
  if (!next) {
    print_message("SIGHUP: keeping the current rules: " + next.error().str());
    metrics_.count_reload(false);
    return;
  }
  if (std::string why; !fleet_.attach(**next, &why)) {
    print_message("SIGHUP: keeping the current rules: " + why);
    metrics_.count_reload(false);
    return;
  }
  {
    // Delivery destinations are made at start: a URL only the new rules
    // name gets nothing until a restart (said, and the rules still load).
    const std::vector<delivery::DestinationStats> started = deliveries_.stats().destinations;
    for (const std::string& t : destinations_not_started(options_, *(*next)->rules, started))
      print_message("SIGHUP: destination " + t + " is new in the rules; records go there after a restart");
  }
  if (uses_exec(*(*next)->rules) && !exec_.running()) {
    print_message(
        "SIGHUP: keeping the current rules: exec actions need the exec pool, which "
        "starts only when the rules at start or --exec use it; restart swthrottle");
    metrics_.count_reload(false);
    return;
  }
  // Exclusive: no decider is between match and output while the rules
  // change, so the old engine takes no line after its windows are handed on.
  auto order = order_watching_stop();  // signals.cpp: a stop still gets through
  pipeline::Generation* old = current();
  std::vector<engine::Record> flushed;
  const std::vector<std::string> fresh = (*next)->engine->adopt(*old->engine, flushed);
  if (!flushed.empty()) emit(flushed);
  const std::size_t n = (*next)->rules->rules.size();
  std::lock_guard lock(mu_);
  current_.store(next->get(), std::memory_order_release);
  generations_.push_back(std::move(*next));
  metrics_.count_reload(true);
  std::string msg = "SIGHUP: reloaded " + std::to_string(n) + " rules";
  if (!fresh.empty()) {
    msg += "; started fresh:";
    for (const auto& f : fresh) msg += " " + f;
  }
  print_message(msg);
}

}  // namespace swthrottle::app
