// The App's part of a snapshot (man page: METRICS): the counters of the
// current generation's engine and what each owner says about itself.
// RunMetrics (run_metrics.h) adds the process's and the inputs' figures.
#include "app/app.h"

namespace swthrottle::app {

namespace {

bool groups_events(const config::Settings& s) {
  if (s.multiline.kind != config::MultilineSpec::Kind::Off) return true;
  for (const auto& in : s.inputs)
    if (in.multiline && in.multiline->kind != config::MultilineSpec::Kind::Off) return true;
  return false;
}

// The engine's counters: the lines of every input together, and each rule's.
void add_engine_counts(const pipeline::Generation& g, metrics::Snapshot& s) {
  const engine::Engine& e = *g.engine;
  s.counts = e.stats().values();
  s.groups_events = groups_events(g.rules->settings);
  for (std::size_t r = 0; r < g.rules->rules.size(); ++r) {
    const config::Rule& rule = g.rules->rules[r];
    metrics::RuleCounters c;
    c.rule = rule.name;
    c.kind = std::string(config::to_string(rule.kind));
    c.counts = e.rule_stats(r).values();
    c.keys_now = e.key_count(r);
    if (rule.new_value) c.values_now = e.values_remembered(r);
    c.forgets_keys = rule.forget_ms > 0;
    c.fleet = rule.fleet != config::FleetMode::Off;
    s.rules.push_back(std::move(c));
  }
}

}  // namespace

void App::add_snapshot_parts(metrics::Snapshot& s) {
  const pipeline::Generation& g = *current();
  add_engine_counts(g, s);
  s.exec = exec_.stats();
  s.delivery = deliveries_.stats();
  if (auto counts = fleet_.stats()) {
    const config::FleetSettings& f = g.rules->settings.fleet;
    s.fleet = metrics::FleetState{*counts, f.redis, f.namespace_name, f.host};
  }
}

}  // namespace swthrottle::app
