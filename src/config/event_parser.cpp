#include "config/event_parser.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "config/regex_lint.h"

namespace swthrottle::config {
namespace {

constexpr std::size_t kMaxEvents = 64;

const std::vector<std::string> kEventKeys{"name", "match", "fields"};
const std::vector<std::string> kFieldKeys{"match"};
const std::vector<std::string> kWhenKeywords{"and", "or", "not"};
static_assert(kFieldFirstCapture == 8, "kBuiltinFields must list every built-in Field");

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
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

}  // namespace

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

}  // namespace swthrottle::config
