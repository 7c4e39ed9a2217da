#include "backtest/report_json.h"

#include <nlohmann/json.hpp>

#include "util/json.h"

namespace swthrottle::backtest {

namespace {

using nlohmann::json;

json time_of(int64_t ms) {
  if (ms < 0) return nullptr;
  std::string s;
  append_rfc3339_ms(s, ms);
  return s;
}

void put_outcome(json& j, const Outcome& o) {
  j["lines"] = o.lines;
  j["events"] = o.events;
  j["alerts"] = o.alerts;
  j["resolved"] = o.resolved;
  j["passed"] = o.passed;
  j["suppressed"] = o.suppressed;
  j["summaries"] = o.summaries;
  j["late"] = o.late;
}

json marks_of(const std::vector<AlertMark>& marks) {
  json a = json::array();
  for (const AlertMark& m : marks) a.push_back({{"time", time_of(m.t_ms)}, {"key", m.key}, {"count", m.count}});
  return a;
}

std::string_view kind_of(DiffChange::Kind k) {
  switch (k) {
    case DiffChange::Kind::Added: return "added";
    case DiffChange::Kind::Removed: return "removed";
    case DiffChange::Kind::Moved: break;
  }
  return "moved";
}

}  // namespace

std::string render_json(const Report& r) {
  json j;
  j["inputs"] = r.inputs;
  j["rule_files"] = r.rule_files;
  j["lines"] = r.lines;
  j["matched"] = r.matched;
  j["untimed"] = r.untimed;
  j["untrusted"] = r.untrusted;
  j["first"] = time_of(r.first_ms);
  j["last"] = time_of(r.last_ms);
  j["rules"] = json::array();
  for (const RuleResult& rr : r.rules) {
    json x;
    x["rule"] = rr.name;
    x["kind"] = std::string(config::to_string(rr.kind));
    x["condition"] = rr.condition;
    x["window"] = rr.window;
    x["threshold"] = rr.threshold ? json(*rr.threshold) : json(nullptr);
    x["keyed"] = rr.keyed;
    x["keys"] = rr.keys;
    put_outcome(x, rr.outcome);
    const Distribution& d = rr.distribution;
    x["distribution"] = {{"samples", d.samples}, {"max", d.max}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}};
    x["top_keys"] = json::array();
    for (const KeyPeak& k : rr.top_keys) {
      x["top_keys"].push_back({{"key", k.key},
                               {"peak", k.peak},
                               {"peak_time", time_of(k.peak_t_ms)},
                               {"lines", k.events},
                               {"alerts", k.alerts}});
    }
    x["alert_times"] = marks_of(rr.alerts);
    x["series"] = {{"start", time_of(rr.series.max.empty() ? -1 : rr.series.start_ms)},
                   {"step_ms", rr.series.step_ms},
                   {"max", rr.series.max}};
    x["sweep"] = json::array();
    for (const Candidate& c : rr.sweep) {
      json y;
      y["threshold"] = c.value;
      y["window"] = c.window;
      y["current"] = c.current;
      put_outcome(y, c.outcome);
      y["alert_times"] = marks_of(c.alerts);
      x["sweep"].push_back(std::move(y));
    }
    if (!rr.not_swept.empty()) x["not_swept"] = rr.not_swept;
    if (!rr.suggestion.empty()) x["suggestion"] = rr.suggestion;
    j["rules"].push_back(std::move(x));
  }
  if (!r.against.empty()) {
    j["against"] = r.against;
    j["diff"] = json::array();
    for (const RuleDiff& d : r.diff) {
      json x{
          {"rule", d.rule},           {"status", d.status}, {"old_alerts", d.old_alerts}, {"new_alerts", d.new_alerts},
          {"unchanged", d.unchanged}, {"added", d.added},   {"removed", d.removed},       {"moved", d.moved}};
      x["changes"] = json::array();
      for (const DiffChange& c : d.changes) {
        x["changes"].push_back({{"change", std::string(kind_of(c.kind))},
                                {"key", c.key},
                                {"old_time", c.kind == DiffChange::Kind::Added ? json(nullptr) : time_of(c.old_ms)},
                                {"new_time", c.kind == DiffChange::Kind::Removed ? json(nullptr) : time_of(c.new_ms)}});
      }
      j["diff"].push_back(std::move(x));
    }
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace swthrottle::backtest
