// Loading the rules the command line names into a Generation: everything
// that can fail at load (DESIGN.md §6: exit 2, nothing processed), with the
// command line's overrides (--time, --mode) applied, and the default time
// chosen when neither sets `time` (app/default_time.h).
#pragma once

#include <memory>

#include "cli/options.h"
#include "pipeline/generation.h"
#include "util/result.h"

namespace swthrottle::app {

// `previous`: the generation in force (a SIGHUP reload), whose default time
// is kept: a run does not switch times because a reload read the inputs
// again. Null: the first generation.
Result<std::unique_ptr<pipeline::Generation>> load_generation(const cli::Options& options,
                                                              const pipeline::Generation* previous = nullptr);

// Does any rule run commands of its own (`exec = [...]`)?
bool uses_exec(const config::RuleSet& rules);

}  // namespace swthrottle::app
