#include "fleet/rule_fleet.h"

#include <algorithm>

#include <fmt/format.h>

#include "config/rule_identity.h"

namespace swthrottle::fleet {

namespace {

constexpr std::size_t kMaxKeyBytes = 200;

bool needs_digest(std::string_view s) { return s.find_first_of("{}") != std::string_view::npos; }

}  // namespace

RuleFleet::RuleFleet(FleetClient& client, const config::RuleSet& rules, std::string host, int64_t started_ms)
    : client_(client),
      on_unreachable_(rules.settings.fleet.on_unreachable),
      episode_prefix_(fmt::format("{}:{}:", host, started_ms)),
      host_id_(fmt::format("{}:{}", host, started_ms)) {
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
    info.batched = r.fleet == config::FleetMode::Batched;
    info.rule = &r;
    rules_.push_back(std::move(info));
  }
  lag_told_ = std::make_unique<std::atomic<bool>[]>(rules_.size());
  keyless_leases_.resize(rules_.size());
  client_.add_batch_source(this);  // batched rules, and the claims of alerts raised locally
}

RuleFleet::~RuleFleet() { client_.remove_batch_source(this); }

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
  std::string k;
  hash_key_into(rule, key, k);
  return k;
}

void RuleFleet::hash_key_into(uint32_t rule, std::string_view key, std::string& out) const {
  const RuleInfo& info = rules_[rule];
  out.assign(info.prefix);
  if (digested(rule, key)) {
    out += '#';
    out += digest(key);
  } else {
    out.append(key);
  }
  out += '}';
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

int64_t RuleFleet::bucket_of(uint32_t rule, int64_t ms) const {
  return std::max<int64_t>(ms, 0) / rules_[rule].shape.width_ms;
}

bool RuleFleet::throttle(uint32_t rule, std::string_view key, int64_t t_ms, int64_t now_ms, engine::FleetAnswer& out) {
  Request r = request(Op::Throttle, rule, key);
  r.bucket = bucket_of(rule, t_ms);
  r.now_bucket = bucket_of(rule, std::max(now_ms, t_ms));
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
  r.bucket = bucket_of(rule, t_ms);
  r.now_bucket = bucket_of(rule, std::max(now_ms, t_ms));
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
  r.now_bucket = bucket_of(rule, now_ms);
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

namespace swthrottle::fleet {

namespace {

// Windows waiting for a flush, at most: past it (Redis unreachable for long
// under many keys) the newest counts are dropped, and counted.
constexpr std::size_t kMaxPending = 100'000;
constexpr std::size_t kMaxRetry = 10'000;

}  // namespace

bool RuleFleet::add(uint32_t rule, std::string_view key, int64_t t_ms, int64_t now_ms, uint64_t events,
                    std::string_view line) {
  const RuleInfo& info = rules_[rule];
  const int64_t bucket = bucket_of(rule, t_ms);
  const int64_t now_bucket = bucket_of(rule, std::max(now_ms, t_ms));
  bool early = false;
  {
    // Per matched line: the key is built in a buffer of the thread's own,
    // allocated once, and copied only for a window not waiting yet.
    thread_local std::string hk;
    hash_key_into(rule, key, hk);
    std::lock_guard lock(batch_mu_);
    auto it = pending_.find(hk);
    if (it == pending_.end()) {
      if (pending_.size() >= kMaxPending) {
        client_.stats().dropped.fetch_add(1, std::memory_order_relaxed);
        return !client_.stats().degraded_now.load(std::memory_order_acquire);
      }
      it = pending_.emplace(hk, Pending{}).first;
      it->second.rule = rule;
      it->second.key = std::string(key);
    }
    Pending& p = it->second;
    // Buckets that left the window by now would only be late in Redis.
    if (p.now_bucket < now_bucket) {
      p.now_bucket = now_bucket;
      std::erase_if(p.deltas, [&](const auto& d) { return d.first.first <= now_bucket - info.shape.buckets; });
    }
    for (uint64_t e = events; e != 0; e &= e - 1) {
      ++p.deltas[{bucket, static_cast<uint32_t>(std::countr_zero(e))}];
      ++p.unsynced;
    }
    p.newest_t = std::max(p.newest_t, t_ms);
    p.line.assign(line);
    // An early flush once this host holds back a good part of Y (bucket4j's
    // maxUnsynchronizedTokens): q = max(1, Y / 8); not while the window is
    // inside the cooldown of an alert (or at Y without one from here: then
    // until its next bucket), where an early flush could not raise one.
    if (info.limit > 0 && p.unsynced >= std::max<uint64_t>(1, info.limit / 8)) {
      const auto hot = hot_until_.find(it->first);
      early = hot == hot_until_.end() || t_ms >= hot->second;
    }
  }
  const bool reachable = !client_.stats().degraded_now.load(std::memory_order_acquire);
  if (early && reachable) client_.flush_soon();
  return reachable;
}

void RuleFleet::collect(std::vector<Request>& out) {
  std::lock_guard lock(batch_mu_);
  sent_.clear();
  for (auto& [r, s] : retry_) {
    out.push_back(std::move(r));
    sent_.push_back(std::move(s));
  }
  retry_.clear();
  for (auto& [r, s] : to_lease_) {
    out.push_back(std::move(r));
    sent_.push_back(std::move(s));
  }
  to_lease_.clear();
  for (auto& [r, s] : to_claim_) {
    out.push_back(std::move(r));
    sent_.push_back(std::move(s));
  }
  to_claim_.clear();
  for (auto& [hk, p] : pending_) {
    out.push_back(flush_request(hk, p));
    sent_.push_back(Sent{p.rule, std::move(p.key), std::move(p.line)});
  }
  pending_.clear();
}

Request RuleFleet::flush_request(const std::string& hash_key, const Pending& p) {
  const RuleInfo& info = rules_[p.rule];
  Request r;
  r.op = Op::Flush;
  r.hash_key = hash_key;
  if (digested(p.rule, p.key)) r.original_key = p.key;
  r.shape = info.shape;
  r.now_bucket = p.now_bucket;
  r.host = host_id_;
  r.seq = seq_.fetch_add(1, std::memory_order_relaxed) + 1;
  r.limit = info.limit;
  r.t_ms = std::max<int64_t>(p.newest_t, 0);
  r.cooldown_ms = info.cooldown_ms;
  if (r.limit > 0) r.episode = next_episode();
  for (const auto& [be, n] : p.deltas) r.deltas.push_back(Delta{be.first, be.second, n});
  return r;
}

void RuleFleet::done(std::span<const Request> sent, std::span<const Reply> replies, bool answered) {
  bool follow_up = false;
  {
    std::lock_guard lock(batch_mu_);
    done_locked(sent, replies, answered);
    follow_up = !to_claim_.empty();
  }
  // Outside batch_mu_: the client's lock comes first (flush_now asks
  // has_followups() under it).
  if (follow_up) client_.flush_soon();
}

void RuleFleet::done_locked(std::span<const Request> sent, std::span<const Reply> replies, bool answered) {
  for (std::size_t i = 0; i < sent.size() && i < sent_.size(); ++i) {
    const Request& r = sent[i];
    Sent& s = sent_[i];
    const Reply& reply = replies[i];
    if (r.op == Op::Lease) {  // asked in the background: never resent (the next line asks again)
      std::lock_guard lease_lock(lease_mu_);
      Lease& l = s.key.empty() ? keyless_leases_[s.rule] : leases_[r.hash_key];
      l.asking = false;
      // A grant for a bucket this host has left counts in Redis unused:
      // safe for a budget, and never taken as permits of a later bucket.
      if (reply.ok && r.bucket >= l.bucket) take_lease(l, r.bucket, reply);
      continue;
    }
    if (!reply.ok) {
      // Not answered: sent again as it was (the same seq: never counted
      // twice). Refused by the script: dropped (the client counted it).
      if (!answered && retry_.size() < kMaxRetry) retry_.emplace_back(r, std::move(s));
      continue;
    }
    if (s.reconcile) {  // an alert already written here: the fleet now knows of it, or had its own
      if (!reply.claimed) client_.stats().duplicates.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    const RuleInfo& info = rules_[s.rule];
    if (r.op == Op::Flush) client_.stats().flushes.fetch_add(1, std::memory_order_relaxed);
    if (reply.late_count > 0) client_.stats().late_flushed.fetch_add(reply.late_count, std::memory_order_relaxed);
    const std::span<const uint64_t> counts(reply.counts.data(), reply.ncounts);
    if (r.op == Op::Flush && info.limit == 0 && !reply.duplicate && info.rule->when.eval(counts)) {
      // A `when` true on the fleet's counts: claimed in a second step.
      Request c = request(Op::Claim, s.rule, s.key);
      c.t_ms = r.t_ms;
      c.episode = next_episode();
      to_claim_.emplace_back(std::move(c), Sent{s.rule, s.key, s.line, false, {counts.begin(), counts.end()}});
      continue;
    }
    if (r.op == Op::Flush && info.limit > 0) {
      uint64_t total = 0;
      for (uint64_t c : counts) total += c;
      if (reply.claimed) {
        hot_until_[r.hash_key] = r.t_ms + info.cooldown_ms;
      } else if (total >= info.limit) {
        hot_until_[r.hash_key] = r.t_ms + info.shape.width_ms;
      } else {
        hot_until_.erase(r.hash_key);
      }
      if (hot_until_.size() > kMaxPending) hot_until_.clear();  // only a hint
    }
    if (!reply.claimed) continue;
    engine::FleetClaim claim;
    claim.rule = s.rule;
    claim.key = std::move(s.key);
    // A Claim's reply has no counts: its alert shows those of the flush
    // whose `when` it claims for.
    if (reply.ncounts > 0) {
      std::copy_n(reply.counts.begin(), reply.ncounts, claim.counts.begin());
    } else {
      std::copy_n(s.counts.begin(), std::min<std::size_t>(s.counts.size(), 64), claim.counts.begin());
    }
    claim.suppressed = reply.suppressed;
    claim.episode = r.episode;
    claim.line = std::move(s.line);
    claims_.push_back(std::move(claim));
  }
  sent_.clear();
}

void RuleFleet::raised_locally(uint32_t rule, std::string_view key, int64_t t_ms) {
  client_.stats().local_alerts.fetch_add(1, std::memory_order_relaxed);
  Request c = request(Op::Claim, rule, key);
  c.t_ms = std::max<int64_t>(t_ms, 0);
  c.episode = next_episode();
  std::lock_guard lock(batch_mu_);
  if (to_claim_.size() < kMaxRetry) to_claim_.emplace_back(std::move(c), Sent{rule, std::string(key), "", true});
}

std::vector<engine::FleetUnsent> RuleFleet::unsent() {
  std::vector<engine::FleetUnsent> out;
  std::lock_guard lock(batch_mu_);
  // Waiting counts get their flush (and its seq) now, so that a flush sent
  // after this save and the next run's resend of it are the same flush:
  // counted once, whether this run ends cleanly or crashes.
  for (auto& [hk, p] : pending_) retry_.emplace_back(flush_request(hk, p), Sent{p.rule, p.key, p.line, false});
  pending_.clear();
  for (const auto& [r, s] : retry_) {
    if (r.op != Op::Flush) continue;  // claims of local alerts: not worth a restart
    engine::FleetUnsent u;
    u.rule = rules_[s.rule].name;
    u.hash_key = r.hash_key;
    u.key = s.key;
    u.host = r.host;
    u.seq = r.seq;
    u.now_bucket = r.now_bucket;
    u.newest_t_ms = r.t_ms;
    for (const Delta& d : r.deltas) u.counts.push_back({d.bucket, d.event, d.n});
    out.push_back(std::move(u));
  }
  return out;
}

std::size_t RuleFleet::restore(const std::vector<engine::FleetUnsent>& unsent) {
  std::size_t dropped = 0;
  std::lock_guard lock(batch_mu_);
  for (const engine::FleetUnsent& u : unsent) {
    uint32_t rule = 0;
    while (rule < rules_.size() && !(rules_[rule].name == u.rule && rules_[rule].batched)) ++rule;
    if (rule == rules_.size() || hash_key(rule, u.key) != u.hash_key) {
      ++dropped;  // the rule is gone, or counts in another fleet window now
      continue;
    }
    const RuleInfo& info = rules_[rule];
    bool bad = false;
    for (const auto& c : u.counts) bad = bad || c.event >= info.shape.events;
    if (bad) {
      ++dropped;
      continue;
    }
    if (u.seq > 0) {
      Request r = request(Op::Flush, rule, u.key);
      r.now_bucket = u.now_bucket;
      r.host = u.host;
      r.seq = u.seq;
      r.t_ms = std::max<int64_t>(u.newest_t_ms, 0);
      if (r.limit > 0) r.episode = next_episode();
      for (const auto& c : u.counts) r.deltas.push_back(Delta{c.bucket, c.event, c.n});
      retry_.emplace_back(std::move(r), Sent{rule, u.key, "", false});
      continue;
    }
    Pending& p = pending_[u.hash_key];
    p.rule = rule;
    p.key = u.key;
    p.now_bucket = std::max(p.now_bucket, u.now_bucket);
    p.newest_t = std::max(p.newest_t, u.newest_t_ms);
    for (const auto& c : u.counts) {
      p.deltas[{c.bucket, c.event}] += c.n;
      p.unsynced += c.n;
    }
  }
  return dropped;
}

bool RuleFleet::has_followups() {
  std::lock_guard lock(batch_mu_);
  // Also while a flush is out: its replies may ask for claims.
  return !to_claim_.empty() || !sent_.empty();
}

void RuleFleet::take_claims(std::vector<engine::FleetClaim>& out) {
  std::lock_guard lock(batch_mu_);
  for (auto& c : claims_) out.push_back(std::move(c));
  claims_.clear();
}

RuleFleet::Lease& RuleFleet::lease_of(uint32_t rule, std::string_view key, std::string& hk) {
  if (key.empty()) return keyless_leases_[rule];
  hash_key_into(rule, key, hk);
  auto found = leases_.find(hk);
  if (found == leases_.end()) found = leases_.emplace(hk, Lease{}).first;
  return found->second;
}

Request RuleFleet::lease_request(uint32_t rule, std::string_view key, int64_t bucket, const Lease& l) const {
  const RuleInfo& info = rules_[rule];
  Request r = request(Op::Lease, rule, key);
  r.bucket = bucket;
  r.host = host_id_;
  // At most k = Y/8: a host holds at most k unused permits, so up to 8
  // hosts can hold leases before one is refused while the fleet has room.
  // Half the room the fleet had at the last answer, so that a rare rule
  // does not ask per line. Redis grants no more than (Y - sum) / (2 H_active)
  // (lua/lease.lua), so that a nearly full window is not taken by one host:
  // the bound stays, however fast a replay moves the buckets.
  const uint64_t k_max = std::max<uint64_t>(1, info.limit / 8);
  const uint64_t room = info.limit > l.last_sum ? info.limit - l.last_sum : 0;
  r.want = std::clamp<uint64_t>(std::max(room / 2, l.bucket == bucket ? l.used + 1 : l.used), 1, k_max);
  if (l.bucket >= 0 && l.bucket != bucket && l.permits > 0) {
    r.return_bucket = l.bucket;
    r.return_n = l.permits;
  }
  return r;
}

void RuleFleet::take_lease(Lease& l, int64_t bucket, const Reply& reply) {
  l.last_sum = reply.sum;
  if (l.bucket != bucket) {
    l.used = 0;
    l.bucket = bucket;
    l.permits = 0;  // given back with this request
  }
  if (reply.granted == 0) {
    // Until enough of the window's counts leave it, asking is no use. Other
    // hosts' unused permits, given back meanwhile, are at most (H-1)k: the
    // fleet's count stays >= Y - (H-1)k until then, which is the bound.
    l.refused = std::max(reply.room_bucket, bucket + 1);
  } else {
    l.refused = -1;
    l.permits += reply.granted;
  }
}

bool RuleFleet::lease(uint32_t rule, std::string_view key, int64_t now_ms, engine::FleetAnswer& out) {
  const RuleInfo& info = rules_[rule];
  const int64_t bucket = bucket_of(rule, now_ms);
  thread_local std::string hk;  // per passed line: no allocation once grown
  Request r;
  bool background = false;
  {
    std::lock_guard lock(lease_mu_);
    Lease& l = lease_of(rule, key, hk);
    if (l.bucket == bucket && l.permits > 0) {
      --l.permits;
      ++l.used;
      out.passed = true;
      return true;
    }
    if (l.refused >= 0) {
      // Refused last time: a full fleet window rarely has room a bucket
      // later, so the next lease is asked in the background and lines are
      // suppressed until it comes (at most a round trip; not a wait per
      // line or per bucket).
      if (client_.stats().degraded_now.load(std::memory_order_acquire)) return false;
      out.passed = false;
      if (bucket < l.refused || l.asking) return true;
      l.asking = true;
      background = true;
    }
    r = lease_request(rule, key, bucket, l);
  }
  if (background) {
    {
      std::lock_guard lock(batch_mu_);
      to_lease_.emplace_back(std::move(r), Sent{rule, std::string(key), "", false});
    }
    client_.flush_soon();
    return true;
  }
  Reply reply;
  if (!client_.ask(r, reply)) return false;
  check_lag(rule, bucket, reply);
  std::lock_guard lock(lease_mu_);
  Lease& l = lease_of(rule, key, hk);
  take_lease(l, bucket, reply);
  out.late = reply.late;
  out.passed = l.permits > 0;
  if (out.passed) {
    --l.permits;
    ++l.used;
  }
  // Windows of other keys whose leases are long over: forgotten.
  if (leases_.size() > 100'000)
    std::erase_if(leases_, [&](const auto& e) { return e.second.bucket < bucket - info.shape.buckets; });
  return true;
}

}  // namespace swthrottle::fleet
