// Loading the rules the command line names into a Generation: everything
// that can fail at load (DESIGN.md §6: exit 2, nothing processed), with the
// command line's overrides (--time, --mode) applied.
#pragma once

#include <memory>

#include "cli/options.h"
#include "pipeline/generation.h"
#include "util/result.h"

namespace swthrottle::app {

Result<std::unique_ptr<pipeline::Generation>> load_generation(const cli::Options& options);

// Does any rule run commands of its own (`exec = [...]`)?
bool uses_exec(const config::RuleSet& rules);

}  // namespace swthrottle::app
