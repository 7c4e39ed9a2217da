// Starting delivery for a run (man page: DELIVERY): the destinations the
// command line, [delivery] and the rules name, their secrets (from the
// environment or files, never the command line), and with --state the
// durable outbox beside the state file.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/options.h"
#include "config/rules.h"
#include "delivery/delivery_pool.h"
#include "delivery/outbox.h"
#include "util/result.h"

namespace swthrottle::app {

struct DeliverySetup {
  std::unique_ptr<delivery::Outbox> outbox;  // with --state
  std::unique_ptr<delivery::DeliveryPool> pool;
  int64_t drain_ms = 30'000;
};

// No destination anywhere: an empty setup (no pool). `state_path`: "" when
// there is no --state. Errors: a secret file that cannot be read, an outbox
// that cannot be opened.
Result<DeliverySetup> start_delivery(const cli::Options& options, const config::RuleSet& rules,
                                     const std::string& state_path, delivery::DeliveryPool::Report report,
                                     const Clock& clock);

// The URLs `rules` name (rules' own webhook and alertmanager keys) that the
// destinations made at start do not have: a reload cannot add one.
std::vector<std::string> urls_not_started(const config::RuleSet& rules, const std::vector<std::string>& started);

// Every destination's target ("webhook URL", "alertmanager URL") a run with
// these options and rules delivers to.
std::vector<delivery::Destination> destinations_of(const cli::Options& options, const config::RuleSet& rules);

}  // namespace swthrottle::app
