#include "config/rule_parser.h"

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "config/delivery_parser.h"
#include "config/duration.h"
#include "config/fleet_parser.h"
#include "config/regex_lint.h"
#include "config/rule_identity.h"
#include "config/settings_parser.h"

namespace swthrottle::config {
namespace {

constexpr std::size_t kMaxEvents = 64;

const std::vector<std::string> kEventKeys{"name", "match", "fields"};
const std::vector<std::string> kFieldKeys{"match"};
const std::vector<std::string> kWhenKeywords{"and", "or", "not"};
// Indexed by Field: the template names of the built-in fields.
const std::vector<std::string> kBuiltinFields{"rule",   "event", "count", "threshold",
                                              "window", "key",   "line",  "suppressed"};
static_assert(kFieldFirstCapture == 8, "kBuiltinFields must list every built-in Field");

bool is_rule_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
  });
}

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return std::string(s);
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

Result<Template> parse_template(const TomlReader& in, const toml::node& v, std::string_view key,
                                const std::vector<std::string>& known, const std::vector<int>& ids) {
  const auto* s = v.as_string();
  if (s == nullptr) {
    return in.err(v, fmt::format("{} must be a string (a template such as \"{{ip}}\"), not {}", key, describe(v)));
  }
  auto resolve = [&](std::string_view name) -> int {
    auto it = std::find(known.begin(), known.end(), name);
    return it == known.end() ? -1 : ids[static_cast<std::size_t>(it - known.begin())];
  };
  auto t = Template::parse(s->get(), resolve, known);
  if (!t) return in.err_in(v, t.error().col, fmt::format("{}: {}", key, t.error().what));
  return std::move(*t);
}

// The "{.path}" fields of a template's text, each with its leading ".";
// "{{" is a literal brace. Template::parse checks the rest of the syntax.
std::vector<std::string> json_field_refs(std::string_view text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') continue;
    if (i + 1 < text.size() && text[i + 1] == '{') {
      ++i;
      continue;
    }
    const std::size_t end = text.find_first_of(":}", i + 1);
    if (end == std::string_view::npos) break;
    const std::string_view name = text.substr(i + 1, end - i - 1);
    if (name.size() > 1 && name.front() == '.') out.emplace_back(name);
    i = end;
  }
  return out;
}

// Printable ASCII without '"', '\\' or '/': text that a JSON string or
// number holds verbatim in the raw line, unless the writer spelled a letter
// as "\u00XX" (the only other way to write these characters in JSON; '/'
// also has "\/").
bool verbatim_in_json(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7F && c != '"' && c != '\\' && c != '/';
  });
}

// An event's `fields`: { path = "text" } (equality) or { path = { match = 'RE2' } }.
MaybeError parse_fields(const TomlReader& in, const toml::node& node, const std::string& ev_label, Event& ev) {
  const auto* t = node.as_table();
  if (t == nullptr) {
    return in.err(node, fmt::format("fields must be a table such as {{ level = \"error\" }}, not {}", describe(node)));
  }
  if (t->empty()) return in.err(node, ev_label + ": fields is empty; name at least one field");
  for (const auto& [key, value] : *t) {
    FieldCondition c;
    c.path = std::string(key.str());
    const bool bad_path =
        c.path.empty() || c.path.front() == '.' || c.path.back() == '.' || c.path.find("..") != std::string::npos;
    if (bad_path) {
      return in.err(value,
                    fmt::format("field path {} must be names joined by \".\" (\"service.name\")", quote(c.path)));
    }
    if (const auto* text = value.as_string()) {
      c.value = text->get();
    } else if (const auto* sub = value.as_table()) {
      if (auto e = in.unknown_keys(*sub, kFieldKeys, fmt::format("field {} of {}", quote(c.path), ev_label))) return e;
      const toml::node* m = sub->get("match");
      if (m == nullptr) return in.err(value, fmt::format("field {} has no match", quote(c.path)));
      if (!m->is_string()) {
        return in.err(*m, fmt::format("match must be a string (an RE2 pattern), not {}", describe(*m)));
      }
      auto re = compile_regex(in, *m, RegexUse::Event);
      if (!re) return re.error();
      auto captures = event_captures(in, *m, **re, kBuiltinFields);
      if (!captures) return captures.error();
      for (const std::string& name : *captures) {
        if (std::find(ev.captures.begin(), ev.captures.end(), name) != ev.captures.end()) {
          return in.err(*m, fmt::format("capture group name {} is used twice in one event", quote(name)));
        }
        ev.captures.push_back(name);
      }
      c.regex = true;
      c.value = m->as_string()->get();
      c.captures = std::move(*captures);
    } else {
      // Numbers, booleans and null compare by their JSON text; TOML's typed
      // values would make 500 and 500.0 look alike where JSON text does not.
      return in.err(value, fmt::format("field {} must be a string (the field's text, e.g. \"500\" or \"true\") "
                                       "or {{ match = 'RE2' }}, not {}",
                                       quote(c.path), describe(value)));
    }
    ev.fields.push_back(std::move(c));
  }
  ev.stand_in = make_stand_in(ev, false);
  return std::nullopt;
}

MaybeError parse_events(const TomlReader& in, const toml::node* events_node, const toml::table& rule_table,
                        const std::string& label, Rule& rule) {
  if (events_node == nullptr) {
    return in.err(rule_table,
                  fmt::format("{} has no events; add at least one [[rule.event]] with name and match", label));
  }
  const auto* arr = events_node->as_array();
  if (arr == nullptr) {
    if (events_node->is_table()) {
      return in.err(*events_node, "[rule.event] must be written [[rule.event]] (an array of tables, one per event)");
    }
    return in.err(*events_node,
                  fmt::format("event must be an array of tables ([[rule.event]]), not {}", describe(*events_node)));
  }
  if (arr->empty()) {
    return in.err(*events_node,
                  fmt::format("{} has no events; add at least one [[rule.event]] with name and match", label));
  }
  std::map<std::string, Pos> seen;
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const toml::node& node = *arr->get(i);
    if (i == kMaxEvents) {
      return in.err(node, fmt::format("{} has more than {} events", label, kMaxEvents));
    }
    const auto* et = node.as_table();
    if (et == nullptr) {
      return in.err(node, fmt::format("each [[rule.event]] must be a table, not {}", describe(node)));
    }
    const toml::node* name = et->get("name");
    std::string ev_label = name != nullptr && name->is_string()
                               ? fmt::format("[[rule.event]] {} of {}", quote(name->as_string()->get()), label)
                               : fmt::format("[[rule.event]] #{} of {}", i + 1, label);
    if (auto e = in.unknown_keys(*et, kEventKeys, ev_label)) return e;
    if (name == nullptr) return in.err(node, ev_label + " has no name");
    if (!name->is_string()) return in.err(*name, fmt::format("event name must be a string, not {}", describe(*name)));
    Event ev;
    ev.name = name->as_string()->get();
    if (!is_identifier(ev.name)) {
      return in.err(*name, fmt::format("event name {} must start with a letter or \"_\" and hold only letters, "
                                       "digits and \"_\" (when refers to events by name)",
                                       quote(ev.name)));
    }
    if (std::find(kWhenKeywords.begin(), kWhenKeywords.end(), ev.name) != kWhenKeywords.end()) {
      return in.err(
          *name, fmt::format("event name {} is a keyword of when (and, or, not); choose another name", quote(ev.name)));
    }
    Pos here = pos_of(name->source());
    auto [it, fresh] = seen.emplace(ev.name, here);
    if (!fresh) {
      return in.err(here, fmt::format("duplicate event name {} in {} (first defined at {}:{}:{})", quote(ev.name),
                                      label, in.file(), it->second.line, it->second.col));
    }
    const toml::node* match = et->get("match");
    const toml::node* fields = et->get("fields");
    if (match == nullptr && fields == nullptr)
      return in.err(node, ev_label + " has no match; give match (an RE2 pattern) or fields (on JSON lines)");
    if (match != nullptr) {
      if (!match->is_string()) {
        return in.err(*match, fmt::format("match must be a string (an RE2 pattern), not {}", describe(*match)));
      }
      ev.match = match->as_string()->get();
      auto re = compile_regex(in, *match, RegexUse::Event);
      if (!re) return re.error();
      auto captures = event_captures(in, *match, **re, kBuiltinFields);
      if (!captures) return captures.error();
      ev.captures = std::move(*captures);
    }
    if (fields != nullptr) {
      if (auto e = parse_fields(in, *fields, ev_label, ev)) return e;
    }
    for (const std::string& capture : ev.captures) {
      if (std::find(rule.capture_names.begin(), rule.capture_names.end(), capture) == rule.capture_names.end()) {
        rule.capture_names.push_back(capture);
      }
    }
    rule.event_names.push_back(ev.name);
    rule.events.push_back(std::move(ev));
  }
  return std::nullopt;
}

}  // namespace

MaybeError parse_rule(const TomlReader& in, const toml::table& t, std::size_t index, PendingRule& out) {
  Rule& rule = out.rule;
  rule.file = in.file();
  rule.line = pos_of(t.source()).line;
  const toml::node* name = t.get("name");
  std::string label = name != nullptr && name->is_string() ? fmt::format("[[rule]] {}", quote(name->as_string()->get()))
                                                           : fmt::format("[[rule]] #{}", index + 1);
  if (auto e = in.unknown_keys(t, kRuleKeys, label)) return e;

  if (name == nullptr) return in.err(t, label + " has no name");
  if (!name->is_string()) return in.err(*name, fmt::format("name must be a string, not {}", describe(*name)));
  rule.name = name->as_string()->get();
  out.name_pos = pos_of(name->source());
  if (!is_rule_name(rule.name)) {
    return in.err(
        *name, fmt::format("rule name {} may contain only letters, digits, \"_\", \".\" and \"-\"", quote(rule.name)));
  }

  const toml::node* kind = t.get("kind");
  if (kind == nullptr) {
    return in.err(t, label +
                         " has no kind; add kind = \"alert\" (raise alerts) or kind = \"throttle\" "
                         "(pass at most Y lines, suppress the rest)");
  }
  auto k = in.choose(*kind, "kind", std::array{RuleKind::Alert, RuleKind::Throttle});
  if (!k) return k.error();
  rule.kind = *k;
  const bool alert = rule.kind == RuleKind::Alert;

  if (auto e = parse_events(in, t.get("event"), t, label, rule)) return e;

  // The condition: threshold, or window + when; a throttle takes only threshold.
  const toml::node* threshold = t.get("threshold");
  const toml::node* window = t.get("window");
  const toml::node* when = t.get("when");
  if (!alert && when != nullptr) {
    return in.err(*when, fmt::format("{} is a throttle rule: it takes threshold = \"Y per X\", not when "
                                     "(a throttle passes at most Y lines per window)",
                                     label));
  }
  if (!alert && window != nullptr) {
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
  if (threshold != nullptr) {
    const auto* s = threshold->as_string();
    if (s == nullptr) {
      return in.err(*threshold,
                    fmt::format("threshold must be a string such as \"5 per 1m\", not {}", describe(*threshold)));
    }
    auto th = parse_threshold(s->get());
    if (!th) return in.err_in(*threshold, th.error().col, th.error().what);
    rule.threshold = th->count;
    rule.window_ms = th->window_ms;
    rule.window_text = th->window_text;
    rule.when = Expr::threshold(th->count, rule.events.size());
    out.window_pos = pos_of(threshold->source());
  } else if (window == nullptr && when == nullptr) {
    return in.err(t, alert ? fmt::format("{} has no condition; add threshold = \"Y per X\", or window = \"X\" with "
                                         "when = \"EXPR\"",
                                         label)
                           : fmt::format("{} has no threshold; a throttle rule needs threshold = \"Y per X\"", label));
  } else if (when == nullptr) {
    return in.err(*window, fmt::format("{} has window but no when; add when = \"EXPR\" (or use threshold = \"Y per X\" "
                                       "instead of window)",
                                       label));
  } else if (window == nullptr) {
    return in.err(*when, fmt::format("{} has when but no window; add window = \"X\", e.g. window = \"5m\"", label));
  } else {
    auto w = in.duration(*window, "window");
    if (!w) return w.error();
    rule.window_ms = *w;
    rule.window_text = trim(window->as_string()->get());
    out.window_pos = pos_of(window->source());
    const auto* s = when->as_string();
    if (s == nullptr) {
      return in.err(*when,
                    fmt::format("when must be a string such as \"error / request > 0.05\", not {}", describe(*when)));
    }
    auto ex = Expr::parse(s->get(), rule.event_names);
    if (!ex) return in.err_in(*when, ex.error().col, "when: " + ex.error().what);
    rule.when = std::move(*ex);
    rule.when_text = s->get();
  }

  if (const toml::node* ignore = t.get("ignore")) {
    if (!ignore->is_string()) {
      return in.err(*ignore, fmt::format("ignore must be a string (an RE2 pattern), not {}", describe(*ignore)));
    }
    if (ignore->as_string()->get().empty()) {
      return in.err(*ignore, "ignore must not be empty: an empty pattern matches every line, so nothing would count");
    }
    auto re = compile_regex(in, *ignore, RegexUse::Ignore);
    if (!re) return re.error();
    rule.ignore = ignore->as_string()->get();
  }

  // "{.path}" in a template is the text of a JSON field: it takes a capture
  // slot of its own, named with the leading "." no regex group can have.
  for (const char* which : {"key", "message"}) {
    const toml::node* n = t.get(which);
    if (n == nullptr || !n->is_string()) continue;
    for (const std::string& path : json_field_refs(n->as_string()->get())) {
      if (std::find(rule.capture_names.begin(), rule.capture_names.end(), path) == rule.capture_names.end()) {
        rule.capture_names.push_back(path);
      }
    }
  }

  // Template fields: built-ins by Field id, then the captures.
  std::vector<std::string> key_names{kBuiltinFields[kFieldRule], kBuiltinFields[kFieldEvent]};
  std::vector<int> key_ids{kFieldRule, kFieldEvent};
  std::vector<std::string> message_names = kBuiltinFields;
  std::vector<int> message_ids;
  for (int i = 0; i < kFieldFirstCapture; ++i) message_ids.push_back(i);
  for (std::size_t i = 0; i < rule.capture_names.size(); ++i) {
    key_names.push_back(rule.capture_names[i]);
    key_ids.push_back(kFieldFirstCapture + static_cast<int>(i));
    message_names.push_back(rule.capture_names[i]);
    message_ids.push_back(kFieldFirstCapture + static_cast<int>(i));
  }
  if (const toml::node* key = t.get("key")) {
    auto tpl = parse_template(in, *key, "key", key_names, key_ids);
    if (!tpl) return tpl.error();
    rule.key = std::move(*tpl);
  }
  if (const toml::node* message = t.get("message")) {
    auto tpl = parse_template(in, *message, "message", message_names, message_ids);
    if (!tpl) return tpl.error();
    rule.message = std::move(*tpl);
  }

  if (const toml::node* cooldown = t.get("cooldown")) {
    if (!alert) {
      return in.err(*cooldown, fmt::format("{} is a throttle rule; cooldown applies to alert rules only", label));
    }
    // "0": alert on every event while the condition holds. parse_duration
    // rejects zero, which is right for windows but not for a cooldown.
    if (cooldown->is_string() && cooldown->as_string()->get() == "0") {
      rule.cooldown_ms = 0;
    } else {
      auto c = in.duration(*cooldown, "cooldown");
      if (!c) return c.error();
      rule.cooldown_ms = *c;
    }
    out.cooldown_set = true;
    rule.cooldown_set = true;
  }
  if (const toml::node* resolve = t.get("resolve")) {
    if (!alert) {
      return in.err(*resolve, fmt::format("{} is a throttle rule; resolve applies to alert rules only", label));
    }
    if (!resolve->is_boolean()) {
      return in.err(*resolve, fmt::format("resolve must be true or false, not {}", describe(*resolve)));
    }
    rule.resolve = resolve->as_boolean()->get();
  }
  if (const toml::node* resolve_when = t.get("resolve_when")) {
    if (!alert) {
      return in.err(*resolve_when,
                    fmt::format("{} is a throttle rule; resolve_when applies to alert rules only", label));
    }
    const auto* s = resolve_when->as_string();
    if (s == nullptr) {
      return in.err(*resolve_when, fmt::format("resolve_when must be a string such as \"error < 3\", not {}",
                                               describe(*resolve_when)));
    }
    auto ex = Expr::parse(s->get(), rule.event_names);
    if (!ex) return in.err_in(*resolve_when, ex.error().col, "resolve_when: " + ex.error().what);
    // resolve_when only says when a resolved record is written: asking for it
    // asks for resolves, and turning them off beside it is a contradiction.
    const toml::node* resolve = t.get("resolve");
    if (resolve != nullptr && !rule.resolve) {
      return in.err(*resolve, fmt::format("{} has resolve_when but resolve = false; resolve_when decides when the "
                                          "resolved record is written: remove one of them",
                                          label));
    }
    rule.resolve = true;
    rule.resolve_when = std::move(*ex);
    rule.resolve_when_text = s->get();
  }
  if (const toml::node* exec = t.get("exec")) {
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
    if (const toml::node* v = t.get(key)) {
      if (key[0] == 'a' && !alert)
        return in.err(*v, fmt::format("{} is a throttle rule; alertmanager takes alerts", label));
      if (auto e = read_urls(in, *v, key, key[0] == 'w' ? rule.webhooks : rule.alertmanagers)) return e;
    }
  }
  if (const toml::node* mode = t.get("mode")) {
    auto m = read_mode(in, *mode);
    if (!m) return m.error();
    out.mode = *m;
  }
  if (const toml::node* fleet = t.get("fleet")) {
    auto m = read_fleet_mode(in, *fleet);
    if (!m) return m.error();
    rule.fleet = *m;
    out.fleet_pos = pos_of(fleet->source());
  }
  if (const toml::node* buckets = t.get("buckets")) {
    auto b = read_buckets(in, *buckets);
    if (!b) return b.error();
    out.buckets = *b;
    out.buckets_pos = pos_of(buckets->source());
  }
  if (const toml::node* max_keys = t.get("max_keys")) {
    auto m = in.integer(*max_keys, "max_keys", 1, INT64_MAX);
    if (!m) return m.error();
    out.max_keys = static_cast<uint64_t>(*m);
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
  if (r.kind == RuleKind::Alert && !p.cooldown_set) r.cooldown_ms = r.window_ms;
  if (r.fleet != FleetMode::Off) {
    if (std::string problem = fleet_rule_problem(r); !problem.empty())
      return Error{r.file, p.fleet_pos.line, p.fleet_pos.col, problem};
  }
  r.fingerprint = fingerprint(r);
  return r;
}

std::string make_stand_in(const Event& e, bool journal) {
  if (!e.match.empty()) return "";
  // The longest equality the raw line must hold verbatim, or "\u00" (an
  // escape may spell it differently): the matcher then skips lines with
  // neither before it reads them as JSON. Without one, the empty pattern:
  // every line is a candidate.
  const FieldCondition* best = nullptr;
  for (const FieldCondition& c : e.fields) {
    // A pattern without metacharacters is a literal the field must contain,
    // so it serves as well as an equality.
    const bool literal = !c.regex || c.value.find_first_of(".+*?()|[]{}^$") == std::string::npos;
    if (literal && verbatim_in_json(c.value) && (best == nullptr || c.value.size() > best->value.size())) best = &c;
  }
  if (best == nullptr) return "";
  return RE2::QuoteMeta(best->value) + (journal ? "|\\\\u00|\\[" : "|\\\\u00");
}

void use_journal(RuleSet& rules) {
  rules.settings.journal = true;
  for (Rule& rule : rules.rules) {
    for (Event& e : rule.events) {
      if (!e.match.empty()) {
        FieldCondition c;
        c.path = "MESSAGE";
        c.regex = true;
        c.value = std::move(e.match);
        e.match.clear();
        e.fields.insert(e.fields.begin(), std::move(c));
      }
      e.stand_in = make_stand_in(e, true);
    }
    if (!rule.ignore.empty()) rule.ignore_field = "MESSAGE";
  }
}

}  // namespace swthrottle::config
