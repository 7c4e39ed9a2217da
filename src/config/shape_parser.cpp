// The keys of the distinct, first-seen and previous-window rules: distinct,
// new with remember, learn and max_values, and what they ask of the rest of
// the rule (sections of parse_rule, rule_parser.cpp).
#include "config/shape_parser.h"

#include <cstdint>

#include <fmt/format.h>

#include "config/duration.h"
#include "config/expr.h"

namespace swthrottle::config {
namespace {

// What a `new` rule takes no part of: it raises one alert per new value.
constexpr const char* kNotForNew[] = {"threshold",    "window",   "when",    "cooldown", "resolve",
                                      "resolve_when", "distinct", "buckets", "max_keys"};

// The settings of a `new` rule that are durations: remember and learn.
Result<int64_t> new_rule_duration(const RuleTable& r, const char* key, int64_t fallback, std::string& text,
                                  bool zero_ok) {
  const toml::node* n = r.t.get(key);
  if (n == nullptr) return fallback;
  if (zero_ok && n->is_string() && n->as_string()->get() == "0") {
    text = "0";
    return 0;
  }
  auto d = r.in.duration(*n, key);
  if (!d) return d.error();
  text = trim_blanks(n->as_string()->get());
  return *d;
}

}  // namespace

// distinct = TEMPLATE (alert rules): the rule also counts the distinct
// values it renders per window, `distinct` in its condition. Read before
// the condition, which may name it.
MaybeError parse_distinct(RuleTable& r, PendingRule& out) {
  const toml::node* n = r.t.get("distinct");
  if (n == nullptr) return std::nullopt;
  Rule& rule = out.rule;
  if (!r.alert)
    return r.in.err(
        *n, fmt::format("{} is a throttle rule; distinct applies to alert rules (a throttle counts lines)", r.label));
  for (const Event& e : rule.events) {
    if (e.name == "distinct")
      return r.in.err(*n, fmt::format("{} counts distinct values, so no event of it may be named \"distinct\": in its "
                                      "condition that name is the count of distinct values",
                                      r.label));
  }
  add_json_field_captures(r.t, "distinct", rule);
  const KeyFields f = key_fields(rule);
  auto tpl = parse_template(r.in, *n, "distinct", f.names, f.ids);
  if (!tpl) return tpl.error();
  if (tpl->empty()) return r.in.err(*n, "distinct must not be empty (a template such as \"{ip}\")");
  rule.distinct = std::move(*tpl);
  return std::nullopt;
}

// new = TEMPLATE (alert rules) with remember, learn and max_values: an
// alert once per value not seen within `remember`, none while learning.
MaybeError parse_new_value(RuleTable& r, PendingRule& out) {
  const toml::node* n = r.t.get("new");
  if (n == nullptr) {
    for (const char* key : {"remember", "learn", "max_values"})
      if (const toml::node* v = r.t.get(key))
        return r.in.err(*v, fmt::format("{} applies to rules with new = \"TEMPLATE\" (first-seen values)", key));
    return std::nullopt;
  }
  Rule& rule = out.rule;
  if (!r.alert) return r.in.err(*n, fmt::format("{} is a throttle rule; new applies to alert rules", r.label));
  for (const char* key : kNotForNew)
    if (const toml::node* v = r.t.get(key))
      return r.in.err(*v, fmt::format("{} has new: it raises one alert per value not seen within remember, so it takes "
                                      "no {}",
                                      r.label, key));
  add_json_field_captures(r.t, "new", rule);
  const KeyFields f = key_fields(rule);
  auto tpl = parse_template(r.in, *n, "new", f.names, f.ids);
  if (!tpl) return tpl.error();
  if (tpl->empty()) return r.in.err(*n, "new must not be empty (a template such as \"{ua}\")");
  rule.new_value = std::move(*tpl);
  std::string remember_text = "30d", learn_text = "1d";
  auto remember = new_rule_duration(r, "remember", 30 * 86'400'000LL, remember_text, false);
  if (!remember) return remember.error();
  auto learn = new_rule_duration(r, "learn", 86'400'000LL, learn_text, true);
  if (!learn) return learn.error();
  if (const toml::node* m = r.t.get("max_values")) {
    auto v = r.in.integer(*m, "max_values", 1, INT64_MAX);
    if (!v) return v.error();
    rule.max_values = static_cast<uint64_t>(*v);
  }
  // One alert per value: threshold 1 in a window of `remember`, one bucket.
  rule.window_ms = *remember;
  rule.window_text = remember_text;
  rule.learn_ms = *learn;
  rule.learn_text = learn_text;
  rule.threshold = 1;
  rule.when = Expr::threshold(1, rule.events.size());
  out.buckets = 1;
  const toml::node* at = r.t.get("remember");
  out.window_pos = pos_of((at != nullptr ? at : n)->source());
  return std::nullopt;
}

// What the distinct, first-seen and previous-window rules ask of the rest of
// the rule, once it is all read.
MaybeError check_shapes(RuleTable& r, PendingRule& out) {
  const Rule& rule = out.rule;
  const toml::node* when = r.t.get("when");
  const toml::node* at = when != nullptr ? when : r.t.get("resolve_when");
  if (rule.keeps_previous && rule.distinct)
    return r.in.err(*at, fmt::format("{} counts distinct values, and a rule that does keeps no previous window: "
                                     "previous() needs a rule without distinct",
                                     r.label));
  // The window's and the previous window's counts are read together, in 64 at most.
  if (rule.keeps_previous && rule.events.size() > 32)
    return r.in.err(*at, fmt::format("{} uses previous() with {} events; previous() takes a rule of at most 32",
                                     r.label, rule.events.size()));
  if (rule.fleet == FleetMode::Off) return std::nullopt;
  // Fleet windows share event counts through Redis; values and previous
  // windows are not in them. Refused rather than counted on this host alone.
  const char* what = rule.distinct ? "distinct" : rule.new_value ? "new" : rule.keeps_previous ? "previous()" : nullptr;
  if (what == nullptr) return std::nullopt;
  return r.in.err(out.fleet_pos,
                  fmt::format("{} uses {}, which fleet windows do not keep (they share event counts through Redis); "
                              "remove fleet to decide on this host's windows",
                              r.label, what));
}

// The distinct, first-seen and previous-window rules keep their own state per
// key, as a watched rule or a sequence does its own: one rule is one kind.
// Before parse_watch, whose errors assume a rule of neither.
MaybeError check_one_kind(RuleTable& r, PendingRule& out) {
  const Rule& rule = out.rule;
  const char* what = rule.distinct ? "distinct" : rule.new_value ? "new" : rule.keeps_previous ? "previous()" : nullptr;
  if (what == nullptr) return std::nullopt;
  for (const char* key : {"for", "forget", "then", "within"}) {
    if (const toml::node* n = r.t.get(key))
      return r.in.err(
          *n, fmt::format("{} uses {}, which {} cannot be combined with; split it into two rules", r.label, what, key));
  }
  return std::nullopt;
}

}  // namespace swthrottle::config
