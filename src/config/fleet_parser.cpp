#include "config/fleet_parser.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace swthrottle::config {

bool is_fleet_name_char(unsigned char c) { return c >= 0x21 && c != 0x7f && c != '{' && c != '}' && c != ':'; }

bool is_fleet_name(std::string_view s) {
  return !s.empty() && s.size() <= 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return is_fleet_name_char(static_cast<unsigned char>(c)); });
}

bool uses_fleet(const RuleSet& rules) {
  return std::any_of(rules.rules.begin(), rules.rules.end(), [](const Rule& r) { return r.fleet != FleetMode::Off; });
}

MaybeError parse_fleet(const TomlReader& in, const toml::node& node, FleetSettings& f) {
  const auto* t = node.as_table();
  if (t == nullptr) return in.err(node, fmt::format("fleet must be a table ([fleet]), not {}", describe(node)));
  if (auto e = in.unknown_keys(*t, kFleetKeys, "[fleet]")) return e;
  const Pos at = pos_of(node.source());
  f.given = true;
  f.file = in.file();
  f.line = at.line;
  f.col = at.col;
  for (auto [k, v] : ordered(*t)) {
    const std::string key(k->str());
    // `value`, not v: clang 14 (the fuzzing build, tests/fuzz) cannot capture a structured binding.
    auto text = [&, value = v](std::string& out) -> MaybeError {
      if (!value->is_string())
        return in.err(*value, fmt::format("fleet {} must be a string, not {}", key, describe(*value)));
      out = value->as_string()->get();
      return std::nullopt;
    };
    if (key == "redis") {
      if (auto e = text(f.redis)) return e;
      if (f.redis.empty()) return in.err(*v, "fleet redis must be redis://HOST[:PORT][/DB] or unix:PATH, not empty");
    } else if (key == "namespace" || key == "host") {
      std::string& out = key == "host" ? f.host : f.namespace_name;
      if (auto e = text(out)) return e;
      if (!is_fleet_name(out)) {
        return in.err(*v, fmt::format("fleet {} {} must be 1 to 64 printable characters without spaces, ':', "
                                      "'{{' or '}}'",
                                      key, quote(out)));
      }
    } else if (key == "sync" || key == "timeout") {
      auto d = in.duration(*v, "fleet " + key);
      if (!d) return d.error();
      if (key == "timeout" && *d > 60'000)
        return in.err(*v, "fleet timeout must be at most 1m: a line waits that long");
      (key == "sync" ? f.sync_ms : f.timeout_ms) = *d;
    } else if (key == "allow_eviction") {
      if (!v->is_boolean())
        return in.err(*v, fmt::format("fleet allow_eviction must be true or false, not {}", describe(*v)));
      f.allow_eviction = v->as_boolean()->get();
    } else if (key == "on_unreachable") {
      auto u =
          in.choose(*v, "fleet on_unreachable", std::array{Unreachable::Local, Unreachable::Open, Unreachable::Closed});
      if (!u) return u.error();
      f.on_unreachable = *u;
    }
  }
  return std::nullopt;
}

Result<FleetMode> read_fleet_mode(const TomlReader& in, const toml::node& v) {
  auto m = in.choose(v, "fleet", std::array{FleetMode::Exact, FleetMode::Batched});
  if (!m) return m.error();
  return *m;
}

std::string fleet_rule_problem(const Rule& r) {
  if (r.buckets > kMaxFleetBuckets) {
    return fmt::format(
        "rule {}: a fleet rule has at most {} buckets (Redis moves a window a bucket at a time), "
        "not {}",
        quote(r.name), kMaxFleetBuckets, r.buckets);
  }
  // Redis runs a script alone: moving a window by many buckets of many
  // events would stall it (measured: tens of ms at 600 x 64 counters).
  const uint32_t counters = r.buckets * (r.kind == RuleKind::Throttle ? 1u : static_cast<uint32_t>(r.events.size()));
  if (counters > kMaxFleetCounters) {
    return fmt::format("rule {}: a fleet rule has at most {} counters per window (buckets x events: {} x {} here)",
                       quote(r.name), kMaxFleetCounters, r.buckets, counters / r.buckets);
  }
  return "";
}

}  // namespace swthrottle::config
