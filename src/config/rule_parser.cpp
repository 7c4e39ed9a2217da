#include "config/rule_parser.h"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

#include "config/delivery_fields.h"
#include "config/delivery_parser.h"
#include "config/duration.h"
#include "config/event_parser.h"
#include "config/fleet_parser.h"
#include "config/regex_lint.h"
#include "config/rule_condition.h"
#include "config/rule_identity.h"
#include "config/rule_table.h"
#include "config/settings_parser.h"
#include "config/shape_parser.h"
#include "config/watch_parser.h"

namespace swthrottle::config {
namespace {

bool is_rule_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
  });
}

// Bucket counts that would fit `window_ms`, for the error message: the
// nearest divisor below the asked count and the two nearest above it (more
// buckets means finer expiry, so those are the likelier wish), filled up from
// the other side when one side has too few.
std::vector<int64_t> near_divisors(int64_t window_ms, int64_t asked) {
  std::vector<int64_t> below, above;
  for (int64_t b = std::min(asked - 1, kMaxBuckets); b >= 1 && below.size() < 3; --b) {
    if (window_ms % b == 0) below.push_back(b);
  }
  for (int64_t b = asked + 1; b <= kMaxBuckets && above.size() < 3; ++b) {
    if (window_ms % b == 0) above.push_back(b);
  }
  std::size_t take_below = std::min<std::size_t>(1, below.size());
  std::size_t take_above = std::min<std::size_t>(3 - take_below, above.size());
  take_below = std::min<std::size_t>(3 - take_above, below.size());
  std::vector<int64_t> out(below.begin(), below.begin() + static_cast<std::ptrdiff_t>(take_below));
  out.insert(out.end(), above.begin(), above.begin() + static_cast<std::ptrdiff_t>(take_above));
  std::sort(out.begin(), out.end());
  return out;
}

// name and kind.
MaybeError parse_identity(RuleTable& r, PendingRule& out) {
  const TomlReader& in = r.in;
  Rule& rule = out.rule;
  const toml::node* name = r.t.get("name");
  if (name == nullptr) return in.err(r.t, r.label + " has no name");
  if (!name->is_string()) return in.err(*name, fmt::format("name must be a string, not {}", describe(*name)));
  rule.name = name->as_string()->get();
  out.name_pos = pos_of(name->source());
  if (!is_rule_name(rule.name)) {
    return in.err(
        *name, fmt::format("rule name {} may contain only letters, digits, \"_\", \".\" and \"-\"", quote(rule.name)));
  }
  const toml::node* kind = r.t.get("kind");
  if (kind == nullptr) {
    return in.err(r.t, r.label +
                           " has no kind; add kind = \"alert\" (raise alerts) or kind = \"throttle\" "
                           "(pass at most Y lines, suppress the rest)");
  }
  auto k = in.choose(*kind, "kind", std::array{RuleKind::Alert, RuleKind::Throttle});
  if (!k) return k.error();
  rule.kind = *k;
  r.alert = rule.kind == RuleKind::Alert;
  return std::nullopt;
}

MaybeError parse_rule_events(RuleTable& r, PendingRule& out) {
  return parse_events(r.in, r.t.get("event"), r.t, r.label, out.rule);
}

// threshold = "Y per X", the window it implies and its `when`.
MaybeError parse_threshold_condition(RuleTable& r, const toml::node& threshold, PendingRule& out) {
  const auto* s = threshold.as_string();
  if (s == nullptr) {
    return r.in.err(threshold,
                    fmt::format("threshold must be a string such as \"5 per 1m\", not {}", describe(threshold)));
  }
  auto th = parse_threshold(s->get());
  if (!th) return r.in.err_in(threshold, th.error().col, th.error().what);
  Rule& rule = out.rule;
  rule.threshold = th->count;
  rule.window_ms = th->window_ms;
  rule.window_text = th->window_text;
  rule.when = threshold_condition(rule, th->count);
  out.window_pos = pos_of(threshold.source());
  return std::nullopt;
}

// window = "X" with when = "EXPR".
MaybeError parse_when_condition(RuleTable& r, const toml::node& window, const toml::node& when, PendingRule& out) {
  const TomlReader& in = r.in;
  Rule& rule = out.rule;
  auto w = in.duration(window, "window");
  if (!w) return w.error();
  rule.window_ms = *w;
  rule.window_text = trim_blanks(window.as_string()->get());
  out.window_pos = pos_of(window.source());
  const auto* s = when.as_string();
  if (s == nullptr) {
    return in.err(when,
                  fmt::format("when must be a string such as \"error / request > 0.05\", not {}", describe(when)));
  }
  auto ex = parse_rule_condition(rule, s->get());
  if (!ex) return in.err_in(when, ex.error().col, "when: " + ex.error().what);
  rule.keeps_previous = rule.keeps_previous || ex->uses_previous();
  rule.when = std::move(*ex);
  rule.when_text = s->get();
  return std::nullopt;
}

// The condition: threshold, or window + when; a throttle takes only threshold.
MaybeError parse_condition(RuleTable& r, PendingRule& out) {
  const TomlReader& in = r.in;
  const std::string& label = r.label;
  // A `new` rule's condition is its own (parse_new_value).
  if (r.t.get("new") != nullptr) return std::nullopt;
  const toml::node* threshold = r.t.get("threshold");
  const toml::node* window = r.t.get("window");
  const toml::node* when = r.t.get("when");
  if (!r.alert && when != nullptr) {
    return in.err(*when, fmt::format("{} is a throttle rule: it takes threshold = \"Y per X\", not when "
                                     "(a throttle passes at most Y lines per window)",
                                     label));
  }
  if (!r.alert && window != nullptr) {
    return in.err(*window, fmt::format("{} is a throttle rule: its window comes from threshold = \"Y per X\"; "
                                       "remove window",
                                       label));
  }
  if (threshold != nullptr && (window != nullptr || when != nullptr)) {
    return in.err(window != nullptr ? *window : *when,
                  fmt::format("{} has both threshold and {}; use threshold = \"Y per X\", or window = \"X\" with "
                              "when = \"EXPR\", not both",
                              label, window != nullptr ? "window" : "when"));
  }
  if (threshold != nullptr) return parse_threshold_condition(r, *threshold, out);
  if (window == nullptr && when == nullptr) {
    return in.err(r.t, r.alert
                           ? fmt::format("{} has no condition; add threshold = \"Y per X\", or window = \"X\" with "
                                         "when = \"EXPR\"",
                                         label)
                           : fmt::format("{} has no threshold; a throttle rule needs threshold = \"Y per X\"", label));
  }
  if (when == nullptr) {
    return in.err(*window, fmt::format("{} has window but no when; add when = \"EXPR\" (or use threshold = \"Y per X\" "
                                       "instead of window)",
                                       label));
  }
  if (window == nullptr) {
    return in.err(*when, fmt::format("{} has when but no window; add window = \"X\", e.g. window = \"5m\"", label));
  }
  return parse_when_condition(r, *window, *when, out);
}

MaybeError parse_ignore(RuleTable& r, PendingRule& out) {
  const toml::node* ignore = r.t.get("ignore");
  if (ignore == nullptr) return std::nullopt;
  if (!ignore->is_string()) {
    return r.in.err(*ignore, fmt::format("ignore must be a string (an RE2 pattern), not {}", describe(*ignore)));
  }
  if (ignore->as_string()->get().empty()) {
    return r.in.err(*ignore, "ignore must not be empty: an empty pattern matches every line, so nothing would count");
  }
  auto re = compile_regex(r.in, *ignore, RegexUse::Ignore);
  if (!re) return re.error();
  out.rule.ignore = ignore->as_string()->get();
  return std::nullopt;
}

// key and message: fmt-style templates over the built-in fields and the
// captures.
MaybeError parse_templates(RuleTable& r, PendingRule& out) {
  Rule& rule = out.rule;
  for (const char* which : {"key", "message"}) add_json_field_captures(r.t, which, rule);
  // Template fields: built-ins by Field id, then the captures.
  const KeyFields key = key_fields(rule);
  std::vector<std::string> message_names = kBuiltinFields;
  std::vector<int> message_ids;
  for (int i = 0; i < kFieldFirstCapture; ++i) message_ids.push_back(i);
  // {distinct} and {previous}: in the rules that count them.
  if (rule.distinct) {
    message_names.emplace_back("distinct");
    message_ids.push_back(kFieldDistinct);
  }
  if (rule.keeps_previous) {
    message_names.emplace_back("previous");
    message_ids.push_back(kFieldPrevious);
  }
  for (std::size_t i = 0; i < rule.capture_names.size(); ++i) {
    message_names.push_back(rule.capture_names[i]);
    message_ids.push_back(kFieldFirstCapture + static_cast<int>(i));
  }
  if (const toml::node* key_node = r.t.get("key")) {
    auto tpl = parse_template(r.in, *key_node, "key", key.names, key.ids);
    if (!tpl) return tpl.error();
    rule.key = std::move(*tpl);
  }
  if (const toml::node* message = r.t.get("message")) {
    auto tpl = parse_template(r.in, *message, "message", message_names, message_ids);
    if (!tpl) return tpl.error();
    rule.message = std::move(*tpl);
  }
  return std::nullopt;
}

MaybeError parse_cooldown(RuleTable& r, PendingRule& out) {
  const toml::node* cooldown = r.t.get("cooldown");
  if (cooldown == nullptr) return std::nullopt;
  if (!r.alert) {
    return r.in.err(*cooldown, fmt::format("{} is a throttle rule; cooldown applies to alert rules only", r.label));
  }
  // "0": alert on every event while the condition holds. parse_duration
  // rejects zero, which is right for windows but not for a cooldown.
  if (cooldown->is_string() && cooldown->as_string()->get() == "0") {
    out.rule.cooldown_ms = 0;
  } else {
    auto c = r.in.duration(*cooldown, "cooldown");
    if (!c) return c.error();
    out.rule.cooldown_ms = *c;
  }
  out.cooldown_set = true;
  out.rule.cooldown_set = true;
  return std::nullopt;
}

// resolve and resolve_when: when an alert rule writes a resolved record.
MaybeError parse_resolve(RuleTable& r, PendingRule& out) {
  const TomlReader& in = r.in;
  Rule& rule = out.rule;
  const toml::node* resolve = r.t.get("resolve");
  if (resolve != nullptr) {
    if (!r.alert) {
      return in.err(*resolve, fmt::format("{} is a throttle rule; resolve applies to alert rules only", r.label));
    }
    if (!resolve->is_boolean()) {
      return in.err(*resolve, fmt::format("resolve must be true or false, not {}", describe(*resolve)));
    }
    rule.resolve = resolve->as_boolean()->get();
  }
  const toml::node* resolve_when = r.t.get("resolve_when");
  if (resolve_when == nullptr) return std::nullopt;
  if (!r.alert) {
    return in.err(*resolve_when,
                  fmt::format("{} is a throttle rule; resolve_when applies to alert rules only", r.label));
  }
  const auto* s = resolve_when->as_string();
  if (s == nullptr) {
    return in.err(*resolve_when,
                  fmt::format("resolve_when must be a string such as \"error < 3\", not {}", describe(*resolve_when)));
  }
  auto ex = parse_rule_condition(rule, s->get());
  if (!ex) return in.err_in(*resolve_when, ex.error().col, "resolve_when: " + ex.error().what);
  rule.keeps_previous = rule.keeps_previous || ex->uses_previous();
  // resolve_when only says when a resolved record is written: asking for it
  // asks for resolves, and turning them off beside it is a contradiction.
  if (resolve != nullptr && !rule.resolve) {
    return in.err(*resolve, fmt::format("{} has resolve_when but resolve = false; resolve_when decides when the "
                                        "resolved record is written: remove one of them",
                                        r.label));
  }
  rule.resolve = true;
  rule.resolve_when = std::move(*ex);
  rule.resolve_when_text = s->get();
  return std::nullopt;
}

// exec, webhook and alertmanager: where the rule's records go besides stdout.
MaybeError parse_actions(RuleTable& r, PendingRule& out) {
  const TomlReader& in = r.in;
  Rule& rule = out.rule;
  if (const toml::node* exec = r.t.get("exec")) {
    const auto* arr = exec->as_array();
    if (arr == nullptr || arr->empty()) {
      return in.err(*exec, fmt::format("exec must be a non-empty array of strings (the program and its arguments, "
                                       "run without a shell), e.g. exec = [\"notify-send\", \"alert\"], not {}",
                                       describe(*exec)));
    }
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::node& arg = *arr->get(i);
      if (!arg.is_string()) return in.err(arg, fmt::format("exec[{}] must be a string, not {}", i, describe(arg)));
      if (i == 0 && arg.as_string()->get().empty()) return in.err(arg, "exec[0] (the program) must not be empty");
      rule.exec.push_back(arg.as_string()->get());
    }
  }
  for (const char* key : {"webhook", "alertmanager"}) {
    if (const toml::node* v = r.t.get(key)) {
      if (key[0] == 'a' && !r.alert)
        return in.err(*v, fmt::format("{} is a throttle rule; alertmanager takes alerts", r.label));
      if (auto e = read_urls(in, *v, key, key[0] == 'w' ? rule.webhooks : rule.alertmanagers)) return e;
    }
  }
  return std::nullopt;
}

// A template over the delivery fields (config/delivery_fields.h).
Result<Template> parse_delivery_template(const TomlReader& in, const toml::node& v, std::string_view key) {
  if (!v.is_string())
    return in.err(v, fmt::format("{} must be a string (a template such as \"{{summary}}\"), not {}", key, describe(v)));
  auto t = Template::parse(v.as_string()->get(), delivery_field, delivery_field_names());
  if (!t) return in.err_in(v, t.error().col, fmt::format("{}: {}", key, t.error().what));
  return std::move(*t);
}

// labels, annotations and generator_url: what Alertmanager and the presets
// get for this rule's alerts besides the built-in ones.
MaybeError parse_alert_attributes(RuleTable& r, PendingRule& out) {
  const TomlReader& in = r.in;
  Rule& rule = out.rule;
  if (const toml::node* labels = r.t.get("labels")) {
    if (auto e = read_labels(in, *labels, "label", rule.labels)) return e;
    for (const auto& [name, value] : rule.labels)
      if (name == "alertname" || name == "key" || name == "kind")
        return in.err(*labels,
                      fmt::format("label {} is swthrottle's own (the rule's name, its key, its kind)", quote(name)));
  }
  if (const toml::node* annotations = r.t.get("annotations")) {
    const auto* t = annotations->as_table();
    if (t == nullptr)
      return in.err(*annotations, "annotations must be a table: annotations = { runbook_url = \"https://...\" }");
    for (auto [k, v] : ordered(*t)) {
      if (std::string why = label_name_problem(k->str()); !why.empty())
        return in.err(*k, fmt::format("annotation {}: {}", quote(std::string(k->str())), why));
      auto tpl = parse_delivery_template(in, *v, fmt::format("annotation {}", quote(std::string(k->str()))));
      if (!tpl) return tpl.error();
      rule.annotations.emplace_back(std::string(k->str()), std::move(*tpl));
    }
  }
  if (const toml::node* url = r.t.get("generator_url")) {
    auto tpl = parse_delivery_template(in, *url, "generator_url");
    if (!tpl) return tpl.error();
    rule.generator_url = std::move(*tpl);
  }
  return std::nullopt;
}

// mode, fleet, buckets and max_keys: how the rule's windows are kept.
MaybeError parse_window_options(RuleTable& r, PendingRule& out) {
  const TomlReader& in = r.in;
  if (const toml::node* mode = r.t.get("mode")) {
    auto m = read_mode(in, *mode);
    if (!m) return m.error();
    out.mode = *m;
  }
  if (const toml::node* fleet = r.t.get("fleet")) {
    auto m = read_fleet_mode(in, *fleet);
    if (!m) return m.error();
    out.rule.fleet = *m;
    out.fleet_pos = pos_of(fleet->source());
  }
  if (const toml::node* buckets = r.t.get("buckets")) {
    auto b = read_buckets(in, *buckets);
    if (!b) return b.error();
    out.buckets = *b;
    out.buckets_pos = pos_of(buckets->source());
  }
  if (const toml::node* max_keys = r.t.get("max_keys")) {
    auto m = in.integer(*max_keys, "max_keys", 1, INT64_MAX);
    if (!m) return m.error();
    out.max_keys = static_cast<uint64_t>(*m);
  }
  return std::nullopt;
}

// for, forget, then and within (config/watch_parser.h): after everything
// they depend on (the condition, resolve, fleet).
MaybeError parse_watch(RuleTable& r, PendingRule& out) { return parse_watch_keys(r.in, r.t, r.label, out.rule); }

// The sections of a [[rule]] table, in the order they are read. A new rule
// setting is a section here (and its key in kRuleKeys).
using Section = MaybeError (*)(RuleTable&, PendingRule&);
constexpr Section kSections[] = {
    parse_identity,         parse_rule_events,    parse_distinct, parse_condition, parse_ignore,
    parse_templates,        parse_new_value,      parse_cooldown, parse_resolve,   parse_actions,
    parse_alert_attributes, parse_window_options, check_one_kind, parse_watch,     check_shapes};

}  // namespace

MaybeError parse_rule(const TomlReader& in, const toml::table& t, std::size_t index, PendingRule& out) {
  out.rule.file = in.file();
  out.rule.line = pos_of(t.source()).line;
  const toml::node* name = t.get("name");
  RuleTable r{in, t,
              name != nullptr && name->is_string() ? fmt::format("[[rule]] {}", quote(name->as_string()->get()))
                                                   : fmt::format("[[rule]] #{}", index + 1)};
  if (auto e = in.unknown_keys(t, kRuleKeys, r.label)) return e;
  for (Section section : kSections) {
    if (auto e = section(r, out)) return e;
  }
  return std::nullopt;
}

// Applies the settings' defaults and checks what depends on them.
Result<Rule> finish_rule(PendingRule&& p, const Settings& s) {
  Rule r = std::move(p.rule);
  r.buckets = p.buckets.value_or(s.buckets);
  r.mode = p.mode.value_or(s.mode);
  r.mode_set = p.mode.has_value();
  r.max_keys = p.max_keys.value_or(s.max_keys);
  if (r.window_ms % r.buckets != 0 || r.window_ms / r.buckets < 1) {
    Pos at = p.buckets ? p.buckets_pos : p.window_pos;
    std::vector<std::string> fits;
    for (int64_t b : near_divisors(r.window_ms, r.buckets)) fits.push_back(std::to_string(b));
    return Error{r.file, at.line, at.col,
                 fmt::format("window {} ({} ms) does not divide into {} buckets; bucket counts that fit near {}: {}",
                             quote(r.window_text), r.window_ms, r.buckets, r.buckets, join(fits, ", "))};
  }
  if (r.distinct && r.buckets > kMaxDistinctBuckets) {
    Pos at = p.buckets ? p.buckets_pos : p.window_pos;
    return Error{r.file, at.line, at.col,
                 fmt::format("a rule with distinct has at most {} buckets (each may hold a 4 KiB sketch per key), "
                             "not {}",
                             kMaxDistinctBuckets, r.buckets)};
  }
  if (r.kind == RuleKind::Alert && !p.cooldown_set) r.cooldown_ms = r.window_ms;
  if (r.fleet != FleetMode::Off) {
    if (std::string problem = fleet_rule_problem(r); !problem.empty())
      return Error{r.file, p.fleet_pos.line, p.fleet_pos.col, problem};
  }
  r.fingerprint = fingerprint(r);
  return r;
}

}  // namespace swthrottle::config
