#include "fleet/sentinel_server.h"

#include <hiredis/hiredis.h>

#include <charconv>

namespace swthrottle::fleet {

SentinelServer::SentinelServer(const FleetClientOptions& options, const Clock& clock)
    : options_(options), clock_(clock) {}

SentinelServer::~SentinelServer() { watch_.reset(); }  // before what its callback may touch

std::unique_ptr<FleetServer> make_sentinel_server(const FleetClientOptions& options, const Clock& clock) {
  return std::make_unique<SentinelServer>(options, clock);
}

std::optional<Address> SentinelServer::ask_sentinels() {
  const std::vector<Address>& all = options_.endpoint.servers;
  std::string last_why;
  for (std::size_t k = 0; k < all.size(); ++k) {
    const std::size_t at = (sentinel_at_ + k) % all.size();
    if (at != sentinel_at_ || !sentinel_.connected()) {
      sentinel_at_ = at;
      if (!sentinel_.connect(all[at], 0, options_.timeout, options_.sentinel_credentials)) {
        last_why = sentinel_.error();
        continue;
      }
    }
    const std::string_view argv[] = {"SENTINEL", "get-master-addr-by-name", options_.endpoint.master};
    ReplyPtr r = sentinel_.command(argv);
    if (!r) {
      last_why = sentinel_.error();
      continue;
    }
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[0]->type == REDIS_REPLY_STRING &&
        r->element[1]->type == REDIS_REPLY_STRING) {
      Address a;
      a.host.assign(r->element[0]->str, r->element[0]->len);
      unsigned port = 0;
      const auto [end, ec] = std::from_chars(r->element[1]->str, r->element[1]->str + r->element[1]->len, port);
      if (ec == std::errc() && port > 0 && port <= 65535) {
        a.port = static_cast<uint16_t>(port);
        return a;
      }
    }
    last_why = "sentinel " + all[at].label() +
               (r->type == REDIS_REPLY_NIL     ? " knows no primary named " + options_.endpoint.master
                : r->type == REDIS_REPLY_ERROR ? ": " + sentinel_.explain({r->str, r->len})
                                               : ": unexpected answer to SENTINEL get-master-addr-by-name");
    sentinel_.close();
  }
  error_ = "no sentinel names the primary " + options_.endpoint.master + " (" + last_why + ")";
  return std::nullopt;
}

bool SentinelServer::connect() {
  const std::optional<Address> at = ask_sentinels();
  if (!at) return false;
  if (primary_ && !(primary_->address() == *at)) {
    failovers_.push_back({primary_->address().label(), at->label(), primary_->unconfirmed().unconfirmed()});
    old_reloads_ += primary_->scripts().reloads();
    primary_.reset();
  }
  if (!primary_) primary_ = std::make_unique<PrimaryNode>(*at);
  if (!primary_->connect(options_.endpoint.db, options_.timeout, options_.credentials)) {
    error_ = primary_->error();
    return false;
  }
  // Named the primary, but not promoted yet (or demoted since): wait.
  const auto role = primary_->conn().role();
  if (!role || !role->primary) {
    error_ = role ? "redis " + at->label() + ": the sentinels name it the primary " + options_.endpoint.master +
                        ", but it is a replica (a failover under way)"
                  : primary_->conn().error();
    primary_->close();
    return false;
  }
  primary_->unconfirmed().looked(role->offset, role->replica_offset);
  return true;
}

void SentinelServer::close() {
  if (primary_) primary_->close();
}

bool SentinelServer::run(std::span<const Request> requests, std::vector<Reply>& replies) {
  if (!primary_ || !primary_->connected()) {
    replies.assign(requests.size(), Reply{});
    for (Reply& r : replies) r.error = error_.empty() ? "redis: not connected" : error_;
    return false;
  }
  if (!primary_->run(requests, replies)) {
    error_ = primary_->error();
    return false;
  }
  // A primary made a replica refuses every write: nothing of these was
  // applied, so they are decided locally and the sentinels asked again.
  for (const Reply& r : replies) {
    if (!r.ok && r.error.find("READONLY") != std::string::npos) {
      error_ = "redis " + primary_->address().label() + " is a replica now (READONLY): a failover";
      primary_->close();
      return false;
    }
  }
  return true;
}

std::optional<std::vector<NodeInfo>> SentinelServer::info() {
  if (!primary_) return std::nullopt;
  auto i = primary_->conn().server_info();
  if (!i) {
    error_ = primary_->conn().error();
    return std::nullopt;
  }
  return std::vector<NodeInfo>{{primary_->address().label(), std::move(*i)}};
}

bool SentinelServer::look_at_replication() {
  if (!primary_ || primary_->look_at_replication()) return true;
  error_ = primary_->conn().error();
  return false;
}

bool SentinelServer::still_current() {
  const std::optional<Address> at = ask_sentinels();
  return !at || !primary_ || primary_->address() == *at;  // no sentinel answering: keep what works
}

void SentinelServer::take_failovers(std::vector<Failover>& out) {
  out.insert(out.end(), failovers_.begin(), failovers_.end());
  failovers_.clear();
}

void SentinelServer::watch(std::function<void()> moved) {
  watch_ = std::make_unique<SentinelWatch>(options_.endpoint.servers, options_.endpoint.master, options_.timeout,
                                           options_.sentinel_credentials, clock_, std::move(moved));
}

uint64_t SentinelServer::reloads() const { return old_reloads_ + (primary_ ? primary_->scripts().reloads() : 0); }

std::optional<Address> SentinelServer::primary() const {
  if (!primary_) return std::nullopt;
  return primary_->address();
}

}  // namespace swthrottle::fleet
