// Starting delivery for a run (man page: DELIVERY): the destinations the
// command line, [delivery], its [[delivery.destination]] tables and the
// rules name, their secrets (from the environment or files, never the
// command line), with --state the durable outbox beside the state file;
// and ending it: the drain at exit, and what was lost.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/options.h"
#include "config/rules.h"
#include "delivery/delivery_pool.h"
#include "delivery/outbox.h"
#include "util/clock.h"
#include "util/result.h"

namespace swthrottle::app {

struct DeliverySetup {
  std::unique_ptr<delivery::Outbox> outbox;  // with --state
  std::unique_ptr<delivery::DeliveryPool> pool;
  int64_t drain_ms = 30'000;
  // Set by finish_delivery(): records neither delivered nor kept in the
  // outbox at exit (exit status 3, as a dead letter).
  std::size_t lost = 0;
};

// No destination anywhere: an empty setup (no pool). `state_path`: "" when
// there is no --state. Errors: a secret file that cannot be read (or does
// not hold what it should), an outbox that cannot be opened.
Result<DeliverySetup> start_delivery(const cli::Options& options, const config::RuleSet& rules,
                                     const std::string& state_path, delivery::DeliveryPool::Report report,
                                     const Clock& clock);

// End of the run: waits up to drain_ms for what is pending, stops the
// workers, and says on stderr (through `report`) how many records were not
// delivered and what became of them; sets setup.lost.
void finish_delivery(DeliverySetup& setup, const delivery::DeliveryPool::Report& report);

// The labels of the destinations `rules` (with the command line) name that
// the running destinations (`started`) do not have: a reload cannot add one.
std::vector<std::string> destinations_not_started(const cli::Options& options, const config::RuleSet& rules,
                                                  const std::vector<delivery::DestinationStats>& started);

// The destinations a run with these options and rules delivers to, secrets
// read (url_file, key_file, header files, the environment's token).
Result<std::vector<delivery::Destination>> destinations_of(const cli::Options& options, const config::RuleSet& rules);

}  // namespace swthrottle::app
