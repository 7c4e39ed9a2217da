#include "app/fleet_connection.h"

#include <algorithm>
#include <cstdint>

#include "fleet/credentials.h"
#include "fleet/rule_fleet.h"
#include "util/stderr.h"

namespace swthrottle::app {

namespace {

// The client's options from [fleet]; the skew warning at a quarter of the
// narrowest bucket of a fleet rule.
fleet::FleetClientOptions client_options(const config::RuleSet& rules) {
  const config::FleetSettings& f = rules.settings.fleet;
  fleet::FleetClientOptions fo;
  fo.endpoint = *fleet::parse_endpoint(f.redis);  // checked by load_generation
  fo.credentials = fleet::credentials_from_environment("SWTHROTTLE_REDIS");
  fo.sentinel_credentials = fleet::credentials_from_environment("SWTHROTTLE_SENTINEL");
  fo.allow_eviction = f.allow_eviction;
  fo.timeout = std::chrono::milliseconds(f.timeout_ms);
  fo.sync = std::chrono::milliseconds(f.sync_ms);
  fo.fallback = std::string(to_string(f.on_unreachable));
  int64_t narrowest = INT64_MAX;
  for (const auto& r : rules.rules)
    if (r.fleet != config::FleetMode::Off) narrowest = std::min(narrowest, r.window_ms / r.buckets);
  fo.skew_warn_ms = narrowest / 4;
  return fo;
}

}  // namespace

bool FleetConnection::attach(pipeline::Generation& g, std::string* why) {
  const config::RuleSet& rules = *g.rules;
  if (!config::uses_fleet(rules)) return true;
  const config::FleetSettings& f = rules.settings.fleet;
  if (!client_) {
    started_ms_ = clock_.wall_ms();
    client_ = std::make_unique<fleet::FleetClient>(clock_, client_options(rules),
                                                   [](const std::string& m) { print_message(m); });
  } else if (f.redis != client_->options().endpoint.text || f.timeout_ms != client_->options().timeout.count()) {
    // One connection for the run; a SIGHUP does not move it.
    *why = "[fleet] redis and timeout changed; they take effect at a restart";
    return false;
  }
  g.fleet = std::make_unique<fleet::RuleFleet>(*client_, rules, f.host, started_ms_);
  g.engine->attach_fleet(g.fleet.get());
  return true;
}

void FleetConnection::write_claimed_alerts(const std::vector<pipeline::Generation*>& generations,
                                           const std::function<void(const std::vector<engine::Record>&)>& write) {
  std::vector<engine::FleetClaim> claims;
  std::vector<engine::Record> records;
  for (pipeline::Generation* g : generations) {
    if (!g->fleet) continue;
    g->engine->fleet_alerts(claims, records);  // the records point into `claims`: written before the next call
    if (!records.empty()) write(records);
  }
}

void FleetConnection::flush() {
  if (client_) client_->finish(2 * client_->options().timeout + client_->options().sync);
}

void FleetConnection::finish() {
  if (client_) client_->stop();
}

std::optional<fleet::FleetCounts> FleetConnection::stats() const {
  if (!client_) return std::nullopt;
  return client_->stats().values();
}

}  // namespace swthrottle::app
