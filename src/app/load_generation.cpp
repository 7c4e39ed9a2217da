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
