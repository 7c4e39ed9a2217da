#include "app/load_generation.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "fleet/endpoint.h"

namespace swthrottle::app {

bool uses_exec(const config::RuleSet& rules) {
  return std::any_of(rules.rules.begin(), rules.rules.end(), [](const auto& r) { return !r.exec.empty(); });
}

namespace {

// [fleet] with the command line's overrides, checked against the rules that use it.
std::optional<Error> check_fleet(const cli::Options& options, config::RuleSet& rules) {
  config::FleetSettings& f = rules.settings.fleet;
  if (!options.fleet_redis.empty()) f.redis = options.fleet_redis;
  if (!options.fleet_namespace.empty()) f.namespace_name = options.fleet_namespace;
  if (!options.fleet_host.empty()) f.host = options.fleet_host;
  for (const auto* flag : {&options.fleet_namespace, &options.fleet_host}) {
    if (!flag->empty() && !config::is_fleet_name(*flag)) {
      return Error{"", 0, 0,
                   fmt::format("--fleet-{} \"{}\": 1 to 64 printable characters without spaces, ':', '{{' or '}}'",
                               flag == &options.fleet_host ? "host" : "namespace", *flag)};
    }
  }
  if (f.host.empty()) {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') std::snprintf(name, sizeof name, "host");
    f.host = name;
    // A host name may hold what keys cannot: replace it.
    for (char& c : f.host)
      if (!config::is_fleet_name_char(static_cast<unsigned char>(c))) c = '_';
  }
  const auto user = std::find_if(rules.rules.begin(), rules.rules.end(),
                                 [](const auto& r) { return r.fleet != config::FleetMode::Off; });
  if (user == rules.rules.end()) return std::nullopt;
  if (f.redis.empty()) {
    return Error{user->file, user->line, 0,
                 fmt::format("rule \"{}\" has fleet = \"{}\" but no Redis is given: add [fleet] redis = "
                             "\"redis://HOST:PORT\" (or unix:PATH), or --fleet-redis",
                             user->name, to_string(user->fleet))};
  }
  if (auto e = fleet::parse_endpoint(f.redis); !e) {
    Error err = e.error();
    if (options.fleet_redis.empty()) {
      err.file = f.file;
      err.line = f.line;
      err.col = f.col;
    } else {
      err.what = "--fleet-redis: " + err.what;
    }
    return err;
  }
  return std::nullopt;
}

}  // namespace

Result<std::unique_ptr<pipeline::Generation>> load_generation(const cli::Options& options) {
  auto loaded = config::load_rules(options.rule_files);
  if (!loaded) return loaded.error();
  auto g = std::make_unique<pipeline::Generation>();
  g->rules = std::make_unique<config::RuleSet>(std::move(*loaded));
  config::RuleSet& rules = *g->rules;
  if (auto e = check_fleet(options, rules)) return *e;
  if (options.time) rules.settings.time = *options.time;
  if (options.mode)
    for (auto& r : rules.rules)
      if (!r.mode_set) {
        r.mode = *options.mode;
        r.fingerprint = config::fingerprint(r);
      }
  if (!options.input.empty()) {
    // The command line wins over `format` everywhere, [[settings.input]] too.
    config::Settings& s = rules.settings;
    s.format = options.input == "text"     ? config::InputFormat::Text
               : options.input == "auto"   ? config::InputFormat::Auto
               : options.input == "cri"    ? config::InputFormat::Cri
               : options.input == "docker" ? config::InputFormat::Docker
                                           : config::InputFormat::Json;
    for (config::InputTime& in : s.inputs) in.format.reset();
    if (options.input == "journal") {
      // journalctl -o json: the entry's time is __REALTIME_TIMESTAMP, µs
      // since the epoch as a string of digits (16 today), which a timestamp
      // field reads by its digit count.
      s.timestamp = config::TimestampSpec{};
      s.timestamp.field = "__REALTIME_TIMESTAMP";
      s.timestamp.text = "{ field = \"__REALTIME_TIMESTAMP\" }";
      for (config::InputTime& in : s.inputs) in.timestamp.reset();
      // `match` and `ignore` look at MESSAGE, arrays of bytes are text.
      config::use_journal(rules);
      g->journal = true;
    }
  }
  if (rules.settings.time == config::TimeSource::Log) {
    // A reader of one timestamp setting; its errors point where it is written.
    auto make = [&](const config::TimestampSpec& spec, const config::TimezoneSpec& tz) -> Result<match::LogTime> {
      auto lt = match::LogTime::make(spec, tz, rules.settings.year);
      if (lt) return lt;
      Error e = lt.error();
      e.file = spec.file;
      e.line = spec.line;
      e.col = spec.col;
      return e;
    };
    auto lt = make(rules.settings.timestamp, rules.settings.timezone);
    if (!lt) return lt.error();
    g->logtime.emplace(std::move(*lt));
    for (const config::InputTime& in : rules.settings.inputs) {
      auto own = make(in.timestamp ? *in.timestamp : rules.settings.timestamp,
                      in.timezone ? *in.timezone : rules.settings.timezone);
      if (!own) return own.error();
      g->input_logtimes.push_back(std::move(*own));
    }
  }
  g->engine = std::make_unique<engine::Engine>(rules, engine::EngineOptions{options.passthrough, options.explain});
  return g;
}

}  // namespace swthrottle::app
