#include "fleet/rule_fleet.h"

#include <algorithm>

#include <fmt/format.h>

#include "config/rule_identity.h"

namespace swthrottle::fleet {

namespace {

constexpr std::size_t kMaxKeyBytes = 200;

uint64_t fnv1a(std::string_view s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

bool needs_digest(std::string_view s) { return s.find_first_of("{}") != std::string_view::npos; }

}  // namespace

std::string digest(std::string_view text) {
  return fmt::format("{:016x}{:016x}", fnv1a(text, 0xcbf29ce484222325ULL), fnv1a(text, 0x84222325cbf29ce4ULL));
}

RuleFleet::RuleFleet(FleetClient& client, const config::RuleSet& rules, std::string host, int64_t started_ms)
    : client_(client),
      on_unreachable_(rules.settings.fleet.on_unreachable),
      episode_prefix_(fmt::format("{}:{}:", host, started_ms)) {
  const std::string& ns = rules.settings.fleet.namespace_name;
  for (const config::Rule& r : rules.rules) {
    RuleInfo info;
    info.defhash = digest(config::fleet_identity(r)).substr(0, 16);
    const std::string name = needs_digest(r.name) || r.name.size() > 64 ? digest(r.name) : r.name;
    info.prefix = fmt::format("swt:{{{}:{}:{}:", ns, name, info.defhash);
    const bool throttle = r.kind == config::RuleKind::Throttle;
    info.shape.buckets = r.buckets;
    info.shape.width_ms = r.window_ms / r.buckets;
    info.shape.events = throttle ? 1 : static_cast<uint32_t>(r.events.size());
    // Garbage collection only, in wall time; it must outlive the cooldown,
    // or an idle key would forget its last alert and page again too soon.
    info.shape.ttl_ms = std::max(2 * r.window_ms, r.cooldown_ms) + 10'000;
    info.limit = r.threshold.value_or(0);
    info.cooldown_ms = r.cooldown_ms;
    info.name = r.name;
    info.window_ms = r.window_ms;
    rules_.push_back(std::move(info));
  }
  lag_told_ = std::make_unique<std::atomic<bool>[]>(rules_.size());
}

void RuleFleet::check_lag(uint32_t rule, int64_t own_bucket, const Reply& reply) {
  const RuleInfo& info = rules_[rule];
  const int64_t lag_ms = (reply.newest_bucket - own_bucket) * info.shape.width_ms;
  if (lag_ms <= info.window_ms / 2 || lag_told_[rule].exchange(true, std::memory_order_relaxed)) return;
  client_.report(
      fmt::format("fleet: rule {}: this host's time is {} ms behind the fleet's newest (more than half "
                  "the window): its events are late fleet-wide; a replay needs its own "
                  "--fleet-namespace",
                  info.name, lag_ms));
}

bool RuleFleet::digested(uint32_t rule, std::string_view key) const {
  return needs_digest(key) || rules_[rule].prefix.size() + key.size() + 1 > kMaxKeyBytes;
}

std::string RuleFleet::hash_key(uint32_t rule, std::string_view key) const {
  const RuleInfo& info = rules_[rule];
  if (digested(rule, key)) return info.prefix + "#" + digest(key) + "}";
  std::string k = info.prefix;
  k.append(key);
  k += '}';
  return k;
}

Request RuleFleet::request(Op op, uint32_t rule, std::string_view key) const {
  const RuleInfo& info = rules_[rule];
  Request r;
  r.op = op;
  r.hash_key = hash_key(rule, key);
  if (digested(rule, key)) r.original_key = std::string(key);
  r.shape = info.shape;
  r.limit = info.limit;
  r.cooldown_ms = info.cooldown_ms;
  return r;
}

std::string RuleFleet::next_episode() {
  return episode_prefix_ + std::to_string(episodes_.fetch_add(1, std::memory_order_relaxed) + 1);
}

bool RuleFleet::throttle(uint32_t rule, std::string_view key, int64_t t_ms, int64_t now_ms, engine::FleetAnswer& out) {
  Request r = request(Op::Throttle, rule, key);
  const int64_t w = r.shape.width_ms;
  r.bucket = std::max<int64_t>(t_ms, 0) / w;
  r.now_bucket = std::max<int64_t>(std::max(now_ms, t_ms), 0) / w;
  Reply reply;
  if (!client_.ask(r, reply)) return false;
  check_lag(rule, r.now_bucket, reply);
  out.passed = reply.passed;
  out.late = reply.late;
  return true;
}

bool RuleFleet::alert(uint32_t rule, std::string_view key, int64_t t_ms, int64_t now_ms, uint64_t events, bool claim,
                      std::span<uint64_t> counts, engine::FleetAnswer& out) {
  Request r = request(Op::Alert, rule, key);
  const int64_t w = r.shape.width_ms;
  r.bucket = std::max<int64_t>(t_ms, 0) / w;
  r.now_bucket = std::max<int64_t>(std::max(now_ms, t_ms), 0) / w;
  r.events = events;
  if (!claim) r.limit = 0;
  r.t_ms = std::max<int64_t>(t_ms, 0);
  if (claim) r.episode = next_episode();
  Reply reply;
  if (!client_.ask(r, reply)) return false;
  check_lag(rule, r.now_bucket, reply);
  const std::size_t n = std::min<std::size_t>(counts.size(), reply.ncounts);
  std::fill(counts.begin(), counts.end(), 0);
  std::copy_n(reply.counts.begin(), n, counts.begin());
  out.late = reply.late;
  out.claimed = reply.claimed;
  out.suppressed = reply.suppressed;
  if (reply.claimed) out.episode = std::move(r.episode);
  return true;
}

bool RuleFleet::claim(uint32_t rule, std::string_view key, int64_t t_ms, engine::FleetAnswer& out) {
  Request r = request(Op::Claim, rule, key);
  r.t_ms = std::max<int64_t>(t_ms, 0);
  r.episode = next_episode();
  Reply reply;
  if (!client_.ask(r, reply)) return false;
  out.claimed = reply.claimed;
  out.suppressed = reply.suppressed;
  if (reply.claimed) out.episode = std::move(r.episode);
  return true;
}

bool RuleFleet::read(uint32_t rule, std::string_view key, int64_t now_ms, std::span<uint64_t> counts) {
  Request r = request(Op::Read, rule, key);
  r.now_bucket = std::max<int64_t>(now_ms, 0) / r.shape.width_ms;
  Reply reply;
  if (!client_.ask(r, reply)) return false;
  std::fill(counts.begin(), counts.end(), 0);
  std::copy_n(reply.counts.begin(), std::min<std::size_t>(counts.size(), reply.ncounts), counts.begin());
  return true;
}

bool RuleFleet::resolve(uint32_t rule, std::string_view key, std::string_view episode, engine::FleetAnswer& out) {
  Request r = request(Op::Resolve, rule, key);
  r.episode = std::string(episode);
  Reply reply;
  if (!client_.ask(r, reply)) return false;
  out.resolved = reply.resolved;
  out.suppressed = reply.suppressed;
  return true;
}

}  // namespace swthrottle::fleet
