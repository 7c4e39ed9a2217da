// [fleet] and a rule's `fleet` (man page: FLEET): what is read, and what is
// refused, with where.
#include <doctest/doctest.h>

#include <string>

#include "config/rule_identity.h"
#include "config/rules.h"

namespace {

using swthrottle::config::FleetMode;
using swthrottle::config::parse_rules;
using swthrottle::config::Unreachable;

const char* const kRule = R"toml(
[[rule]]
name = "page"
kind = "throttle"
threshold = "10 per 5m"
fleet = "exact"
[[rule.event]]
name = "e"
match = 'ERROR'
)toml";

std::string error_of(const std::string& toml) {
  auto r = parse_rules(toml, "rules.toml");
  REQUIRE_FALSE(r.ok());
  return r.error().str();
}

}  // namespace

TEST_CASE("fleet config: [fleet] and fleet = \"exact\" are read") {
  auto r = parse_rules(std::string(R"toml(
[fleet]
redis = "redis://10.0.0.5:6379/2"
namespace = "prod"
host = "web-7"
timeout = "150ms"
on_unreachable = "closed"
allow_eviction = true
)toml") + kRule,
                       "rules.toml");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().str()));
  const auto& f = r->settings.fleet;
  CHECK(f.given);
  CHECK(f.redis == "redis://10.0.0.5:6379/2");
  CHECK(f.namespace_name == "prod");
  CHECK(f.host == "web-7");
  CHECK(f.timeout_ms == 150);
  CHECK(f.sync_ms == 250);
  CHECK(f.on_unreachable == Unreachable::Closed);
  CHECK(f.allow_eviction);
  CHECK(f.line == 2);
  CHECK(r->rules[0].fleet == FleetMode::Exact);
}

TEST_CASE("fleet config: defaults, and a rule without fleet stays local") {
  auto r = parse_rules(R"toml(
[[rule]]
name = "alone"
kind = "alert"
threshold = "1 per 1m"
[[rule.event]]
name = "e"
match = 'x'
)toml",
                       "rules.toml");
  REQUIRE(r.ok());
  CHECK_FALSE(r->settings.fleet.given);
  CHECK(r->settings.fleet.namespace_name == "default");
  CHECK(r->settings.fleet.timeout_ms == 200);
  CHECK(r->settings.fleet.on_unreachable == Unreachable::Local);
  CHECK_FALSE(r->settings.fleet.allow_eviction);  // a Redis that can evict windows is refused
  CHECK(r->rules[0].fleet == FleetMode::Off);
}

TEST_CASE("fleet config: errors point at the value") {
  CHECK(error_of("[fleet]\nredis = 5\n" + std::string(kRule)) == "rules.toml:2:9: fleet redis must be a string, not 5");
  CHECK(error_of("[fleet]\nredsi = \"x\"\n") ==
        "rules.toml:2:1: unknown key \"redsi\" in [fleet] (did you mean \"redis\"?)");
  CHECK(error_of("[fleet]\non_unreachable = \"fail\"\n") ==
        "rules.toml:2:18: fleet on_unreachable must be \"local\", \"open\" or \"closed\", not \"fail\"");
  CHECK(error_of("[fleet]\nnamespace = \"a:b\"\n") ==
        "rules.toml:2:13: fleet namespace \"a:b\" must be 1 to 64 printable characters without spaces, ':', '{' "
        "or '}'");
  CHECK(error_of("[fleet]\nallow_eviction = \"yes\"\n") ==
        "rules.toml:2:18: fleet allow_eviction must be true or false, not \"yes\"");
  CHECK(error_of("[fleet]\ntimeout = \"2m\"\n") ==
        "rules.toml:2:11: fleet timeout must be at most 1m: a line waits that long");
  CHECK(error_of(R"toml(
[[rule]]
name = "r"
kind = "alert"
threshold = "1 per 1h"
buckets = 3600
fleet = "exact"
[[rule.event]]
name = "e"
match = 'x'
)toml") ==
        "rules.toml:7:9: rule \"r\": a fleet rule has at most 600 buckets (Redis moves a window a bucket at a "
        "time), not 3600");
}

TEST_CASE("fleet config: the fleet identity changes with what the counts mean, not with mode or key") {
  auto base = parse_rules(kRule, "a.toml");
  REQUIRE(base.ok());
  const std::string id = swthrottle::config::fleet_identity(base->rules[0]);
  auto same = parse_rules(std::string(kRule) + "", "b.toml");
  REQUIRE(same.ok());
  same->rules[0].mode = swthrottle::config::Mode::Accurate;
  CHECK(swthrottle::config::fleet_identity(same->rules[0]) == id);
  std::string other(kRule);
  other.replace(other.find("10 per"), 6, "11 per");
  auto changed = parse_rules(other, "c.toml");
  REQUIRE(changed.ok());
  CHECK(swthrottle::config::fleet_identity(changed->rules[0]) != id);
}

TEST_CASE("fleet config: an alert rule's counters (buckets x events) are capped") {
  std::string toml = R"toml(
[[rule]]
name = "many"
kind = "alert"
when = "a >= 1"
window = "10m"
buckets = 600
fleet = "exact"
)toml";
  for (const char* e : {"a", "b", "c", "d", "e", "f", "g", "h", "i"})
    toml += std::string("[[rule.event]]\nname = \"") + e + "\"\nmatch = '" + e + "'\n";
  CHECK(error_of(toml) ==
        "rules.toml:8:9: rule \"many\": a fleet rule has at most 4800 counters per window (buckets x events: 600 x 9 "
        "here)");
}

TEST_CASE("fleet config: fleet = \"batched\" and sync are read") {
  std::string toml = std::string("[fleet]\nsync = \"1s\"\n") + kRule;
  toml.replace(toml.find("\"exact\""), 7, "\"batched\"");
  auto r = parse_rules(toml, "rules.toml");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().str()));
  CHECK(r->rules[0].fleet == FleetMode::Batched);
  CHECK(r->settings.fleet.sync_ms == 1000);
}
