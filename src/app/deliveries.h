// Deliveries: a run's delivery to webhooks, Alertmanagers and the named
// destinations (man page: DELIVERY): the pool of destination workers and,
// with --state, the durable outbox beside the state file. Started after the
// state lock (the outbox is this run's), drained at the end of the run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/options.h"
#include "config/rules.h"
#include "delivery/delivery_pool.h"
#include "delivery/delivery_stats.h"
#include "delivery/outbox.h"
#include "engine/record.h"
#include "util/clock.h"
#include "util/result.h"

namespace swthrottle::app {

class Deliveries {
 public:
  using Report = delivery::DeliveryPool::Report;  // one stderr line, without "swthrottle: "

  Deliveries() = default;  // none: no destination, every call does nothing
  Deliveries(Deliveries&&) noexcept = default;
  Deliveries& operator=(Deliveries&&) noexcept = default;

  // No destination anywhere (and no outbox an earlier run left records in):
  // none. `state_path`: "" without --state. Errors: a secret file that cannot
  // be read (or does not hold what it should), an outbox that cannot be opened.
  static Result<Deliveries> start(const cli::Options& options, const config::RuleSet& rules,
                                  const std::string& state_path, Report report, const Clock& clock);

  // Each record to the destinations that take it; waits while a
  // destination's queue (or the outbox) is full, until unblock().
  void submit(const std::vector<engine::Record>& records);

  // From now on submit() does not wait: a stop, or an output that closed,
  // must not be held up by a receiver long down. Thread-safe.
  void unblock();

  // End of the run: waits up to [delivery] drain for what is pending, stops
  // the workers, and says what was not delivered and what became of it.
  void finish();

  // The destinations, and the outbox when there is one.
  delivery::DeliveryStats stats() const;

  // A record was given up (a dead letter, a full outbox's drop included) or,
  // after finish(), neither delivered nor kept in the outbox (exit 3).
  bool lost_records() const;

 private:
  std::unique_ptr<delivery::Outbox> outbox_;  // with --state
  std::unique_ptr<delivery::DeliveryPool> pool_;
  Report report_;
  int64_t drain_ms_ = 30'000;
  std::size_t lost_ = 0;  // set by finish(): neither delivered nor kept in the outbox
};

}  // namespace swthrottle::app
