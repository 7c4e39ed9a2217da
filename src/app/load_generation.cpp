#include "app/load_generation.h"

#include <algorithm>

namespace swthrottle::app {

bool uses_exec(const config::RuleSet& rules) {
  return std::any_of(rules.rules.begin(), rules.rules.end(), [](const auto& r) { return !r.exec.empty(); });
}

Result<std::unique_ptr<pipeline::Generation>> load_generation(const cli::Options& options) {
  auto loaded = config::load_rules(options.rule_files);
  if (!loaded) return loaded.error();
  auto g = std::make_unique<pipeline::Generation>();
  g->rules = std::make_unique<config::RuleSet>(std::move(*loaded));
  config::RuleSet& rules = *g->rules;
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
    s.format = options.input == "text"   ? config::InputFormat::Text
               : options.input == "auto" ? config::InputFormat::Auto
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
      g->journal = true;
    }
  }
  if (rules.settings.time == config::TimeSource::Log) {
    auto lt = match::LogTime::make(rules.settings.timestamp, rules.settings.timezone, rules.settings.year);
    if (!lt) {
      Error e = lt.error();
      e.file = rules.settings.timestamp.file;
      e.line = rules.settings.timestamp.line;
      e.col = rules.settings.timestamp.col;
      return e;
    }
    g->logtime.emplace(std::move(*lt));
    for (const config::InputTime& in : rules.settings.inputs) {
      const config::TimestampSpec& spec = in.timestamp ? *in.timestamp : rules.settings.timestamp;
      auto own = match::LogTime::make(spec, in.timezone ? *in.timezone : rules.settings.timezone, rules.settings.year);
      if (!own) {
        Error e = own.error();
        e.file = spec.file;
        e.line = spec.line;
        e.col = spec.col;
        return e;
      }
      g->input_logtimes.push_back(std::move(*own));
    }
  }
  g->engine = std::make_unique<engine::Engine>(rules, engine::EngineOptions{options.passthrough, options.explain});
  return g;
}

}  // namespace swthrottle::app
