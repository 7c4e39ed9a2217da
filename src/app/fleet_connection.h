// FleetConnection: a run's link to the fleet's Redis (man page: FLEET): the
// one FleetClient (made with the first generation that has fleet rules; a
// SIGHUP does not move it), each generation's RuleFleet attached to it, the
// alerts its thread claimed for batched rules, and its end: the last flush
// before the final save, then the thread stopped before the process exits.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/record.h"
#include "fleet/fleet_client.h"
#include "fleet/fleet_stats.h"
#include "pipeline/generation.h"
#include "util/clock.h"

namespace swthrottle::app {

class FleetConnection {
 public:
  explicit FleetConnection(const Clock& clock) : clock_(clock) {}
  FleetConnection(const FleetConnection&) = delete;
  FleetConnection& operator=(const FleetConnection&) = delete;

  // A generation with fleet rules gets its link (the client is made with the
  // first one); one without needs nothing. False (`why` says it): the fleet
  // cannot serve these rules, as when a reload changes [fleet] redis.
  bool attach(pipeline::Generation& g, std::string* why);

  bool connected() const { return client_ != nullptr; }

  // The alerts the fleet thread claimed for batched rules, of each of
  // `generations` in turn, handed to `write` as records. They point into
  // the claims they were made from (the engine's fleet_alerts()), which live
  // only during the call: `write` writes them, it does not keep them. With
  // the order lock held exclusive.
  void write_claimed_alerts(const std::vector<pipeline::Generation*>& generations,
                            const std::function<void(const std::vector<engine::Record>&)>& write);

  // End of input: what this host counted for batched rules goes to the fleet
  // (waiting at most two timeouts and a sync). Before the final save, which
  // keeps what it could not send.
  void flush();

  // The fleet thread stops (joined); nothing asks the fleet from here on.
  // The App is never destroyed: without this, a degraded client would
  // still be reconnecting while the process exits. Idempotent.
  void finish();

  // Absent without fleet rules.
  std::optional<fleet::FleetCounts> stats() const;

 private:
  const Clock& clock_;
  std::unique_ptr<fleet::FleetClient> client_;
  int64_t started_ms_ = 0;  // the wall clock when the client was made: in fleet episode ids
};

}  // namespace swthrottle::app
