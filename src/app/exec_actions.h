// ExecActions: the exec actions of one run (man page: Actions): the pool of
// command slots, made at start only when --exec or a rule's exec asks for
// one, and --exec's command line split once. The App hands it every batch of
// records after the sink has written them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/options.h"
#include "config/rules.h"
#include "engine/record.h"
#include "output/exec_pool.h"
#include "util/clock.h"
#include "util/result.h"

namespace swthrottle::app {

class ExecActions {
 public:
  ExecActions() = default;  // none: no pool, every call does nothing
  ExecActions(ExecActions&&) noexcept = default;
  ExecActions& operator=(ExecActions&&) noexcept = default;

  // The pool, when --exec or a rule of `rules` has an exec action; else none.
  // Errors: --exec that does not split, no worker thread could start.
  static Result<ExecActions> start(const cli::Options& options, const config::RuleSet& rules, const Clock& clock);

  bool running() const { return pool_ != nullptr; }

  // Alert, resolved and summary records go to their rule's own command and to
  // --exec's; lines do not. Never waits: a full queue drops and counts.
  void submit(const std::vector<engine::Record>& records);

  // The run is stopping: running commands are killed, actions not run are
  // reported, each naming `sig` (0: no signal asked). Thread-safe.
  void stop(int sig);

  // End of the run: waits for running commands (a second at most after
  // stop()), then writes the reports stop() held back.
  void finish();

  // Absent without a pool.
  std::optional<output::ExecStats> stats() const;

  // Some action gave up, was dropped at a full queue or was not run at a
  // stop: a record was not delivered (exit 3, DESIGN.md §6).
  bool lost_actions() const;

 private:
  std::unique_ptr<output::ExecPool> pool_;
  std::vector<std::string> argv_;  // --exec's, split; empty without it
};

}  // namespace swthrottle::app
