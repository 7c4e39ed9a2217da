#include "fleet/fleet_server.h"

namespace swthrottle::fleet {

std::unique_ptr<FleetServer> make_fleet_server(const FleetClientOptions& options, const Clock& clock) {
  switch (options.endpoint.topology) {
    case Topology::Sentinel: return make_sentinel_server(options, clock);
    case Topology::Cluster: return make_cluster_server(options);
    case Topology::Single: break;
  }
  return make_single_server(options);
}

}  // namespace swthrottle::fleet
