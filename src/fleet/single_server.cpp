// The FleetServer of one Redis (redis://HOST, unix:PATH).
#include "fleet/fleet_server.h"
#include "fleet/primary_node.h"

namespace swthrottle::fleet {

namespace {

class SingleServer final : public FleetServer {
 public:
  explicit SingleServer(const FleetClientOptions& options) : options_(options), node_(options.endpoint.servers[0]) {}

  bool connect() override { return node_.connect(options_.endpoint.db, options_.timeout, options_.credentials); }
  void close() override { node_.close(); }
  bool run(std::span<const Request> requests, std::vector<Reply>& replies) override {
    return node_.run(requests, replies);
  }
  std::optional<std::vector<NodeInfo>> info() override {
    auto i = node_.conn().server_info();
    if (!i) return std::nullopt;
    return std::vector<NodeInfo>{{node_.address().label(), std::move(*i)}};
  }
  uint64_t reloads() const override { return node_.scripts().reloads(); }
  const std::string& error() const override { return node_.error(); }

 private:
  const FleetClientOptions options_;
  PrimaryNode node_;
};

}  // namespace

std::unique_ptr<FleetServer> make_single_server(const FleetClientOptions& options) {
  return std::make_unique<SingleServer>(options);
}

}  // namespace swthrottle::fleet
