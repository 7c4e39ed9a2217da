#include "config/destination_parser.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "config/http_url.h"

namespace swthrottle::config {
namespace {

bool is_destination_name(std::string_view s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
  });
}

// An HTTP header name: an RFC 9110 token.
bool is_header_name(std::string_view s) {
  static constexpr std::string_view kSpecials = "!#$%&'*+-.^_`|~";
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           kSpecials.find(c) != std::string_view::npos;
  });
}

Result<std::string> path_of(const TomlReader& in, const toml::node& v, std::string_view key) {
  if (!v.is_string() || v.as_string()->get().empty())
    return in.err(v, fmt::format("{} must be the path of a file", key));
  return v.as_string()->get();
}

MaybeError read_header(const TomlReader& in, const toml::key& k, const toml::node& v, HeaderSpec& h) {
  h.name = std::string(k.str());
  if (!is_header_name(h.name)) return in.err(k, fmt::format("header name {} is not an HTTP token", quote(h.name)));
  if (const auto* s = v.as_string()) {
    h.value = s->get();
    if (h.value.find_first_of("\r\n") != std::string::npos)
      return in.err(v, fmt::format("header {} must be one line", quote(h.name)));
    return std::nullopt;
  }
  const auto* t = v.as_table();
  if (t == nullptr)
    return in.err(v, fmt::format("header {} must be a string, or {{ file = \"PATH\" }} for a secret", quote(h.name)));
  if (auto e = in.unknown_keys(*t, {"file", "prefix"}, fmt::format("header {}", quote(h.name)))) return e;
  const toml::node* file = t->get("file");
  if (file == nullptr) return in.err(v, fmt::format("header {} needs file = \"PATH\"", quote(h.name)));
  auto path = path_of(in, *file, "file");
  if (!path) return path.error();
  h.file = *path;
  if (const toml::node* prefix = t->get("prefix")) {
    if (!prefix->is_string()) return in.err(*prefix, "prefix must be a string, such as \"Bearer \"");
    h.prefix = prefix->as_string()->get();
  }
  return std::nullopt;
}

MaybeError read_headers(const TomlReader& in, const toml::node& v, DestinationSpec& d) {
  const auto* t = v.as_table();
  if (t == nullptr) return in.err(v, "headers must be a table: headers = { \"X-Team\" = \"db\" }");
  for (auto [k, hv] : ordered(*t)) {
    HeaderSpec h;
    if (auto e = read_header(in, *k, *hv, h)) return e;
    d.headers.push_back(std::move(h));
  }
  return std::nullopt;
}

MaybeError read_rules(const TomlReader& in, const toml::node& v, DestinationSpec& d) {
  const auto* arr = v.as_array();
  if (arr == nullptr || arr->empty())
    return in.err(v, "rules must be a non-empty array of rule names, such as rules = [\"db-down\"]");
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const toml::node& n = *arr->get(i);
    if (!n.is_string()) return in.err(n, fmt::format("rules[{}] must be a rule name, not {}", i, describe(n)));
    d.rules.push_back(n.as_string()->get());
  }
  return std::nullopt;
}

MaybeError read_body(const TomlReader& in, const toml::node& v, DestinationSpec& d) {
  if (!v.is_string()) return in.err(v, fmt::format("body must be a string of JSON, not {}", describe(v)));
  if (d.preset == Preset::Alertmanager)
    return in.err(v, "an alertmanager destination takes no body: Alertmanager's API says what it is");
  auto body = BodyTemplate::parse(v.as_string()->get());
  if (!body) return in.err_in(v, body.error().col, body.error().what);
  d.body = std::make_shared<const BodyTemplate>(std::move(*body));
  return std::nullopt;
}

// url, url_file and key_file, and which of them the preset needs.
MaybeError read_where(const TomlReader& in, const toml::table& t, DestinationSpec& d) {
  const toml::node* url = t.get("url");
  const toml::node* url_file = t.get("url_file");
  if (url != nullptr && url_file != nullptr)
    return in.err(*url_file, "give url or url_file, not both (a secret URL belongs in url_file)");
  if (url != nullptr) {
    if (!url->is_string()) return in.err(*url, fmt::format("url must be a URL, not {}", describe(*url)));
    d.url = url->as_string()->get();
    if (std::string why = http_url_problem(d.url); !why.empty()) return in.err(*url, "url: " + why);
  }
  if (url_file != nullptr) {
    auto p = path_of(in, *url_file, "url_file");
    if (!p) return p.error();
    d.url_file = *p;
  }
  const bool keyed = d.preset == Preset::PagerDuty || d.preset == Preset::Opsgenie;
  const bool has_default_url = keyed;
  if (url == nullptr && url_file == nullptr && !has_default_url)
    return in.err(
        t, fmt::format("destination {} ({}) needs url_file = \"PATH\" (or url)", quote(d.name), to_string(d.preset)));
  const toml::node* key_file = t.get("key_file");
  if (key_file != nullptr && !keyed)
    return in.err(*key_file, fmt::format("key_file is for pagerduty (the routing key) and opsgenie (the API key), "
                                         "not {}",
                                         to_string(d.preset)));
  if (key_file == nullptr && keyed)
    return in.err(t,
                  fmt::format("destination {} ({}) needs key_file = \"PATH\" ({})", quote(d.name), to_string(d.preset),
                              d.preset == Preset::PagerDuty ? "the integration's routing key" : "the API key"));
  if (key_file != nullptr) {
    auto p = path_of(in, *key_file, "key_file");
    if (!p) return p.error();
    d.key_file = *p;
  }
  return std::nullopt;
}

MaybeError parse_destination(const TomlReader& in, const toml::table& t, std::size_t index, DestinationSpec& d) {
  const std::string where = fmt::format("[[delivery.destination]] #{}", index + 1);
  if (auto e = in.unknown_keys(t, kDestinationKeys, where)) return e;
  const Pos at = pos_of(t.source());
  d.file = in.file();
  d.line = at.line;
  d.col = at.col;
  const toml::node* name = t.get("name");
  if (name == nullptr)
    return in.err(t, where + " has no name; add name = \"ops-slack\" (what messages say, never the URL)");
  if (!name->is_string() || !is_destination_name(name->as_string()->get()))
    return in.err(*name, "a destination's name is 1 to 64 letters, digits, \"_\", \".\" or \"-\"");
  d.name = name->as_string()->get();
  if (const toml::node* preset = t.get("preset")) {
    std::vector<std::string> names(kPresetNames.begin(), kPresetNames.end());
    auto p = in.choose(*preset, "preset", names);
    if (!p) return p.error();
    d.preset = static_cast<Preset>(*p);
  }
  if (auto e = read_where(in, t, d)) return e;
  if (const toml::node* rules = t.get("rules"))
    if (auto e = read_rules(in, *rules, d)) return e;
  if (const toml::node* body = t.get("body"))
    if (auto e = read_body(in, *body, d)) return e;
  if (const toml::node* headers = t.get("headers"))
    if (auto e = read_headers(in, *headers, d)) return e;
  return std::nullopt;
}

std::set<std::string> label_names(const RuleSet& set) {
  std::set<std::string> out{"alertname", "key", "kind"};
  for (const auto& [name, value] : set.settings.delivery.labels) out.insert(name);
  for (const Rule& r : set.rules)
    for (const auto& [name, value] : r.labels) out.insert(name);
  return out;
}

std::set<std::string> annotation_names(const RuleSet& set) {
  std::set<std::string> out{"summary", "count", "threshold", "when", "window", "suppressed", "counts"};
  for (const Rule& r : set.rules)
    for (const auto& [name, value] : r.annotations) out.insert(name);
  return out;
}

}  // namespace

MaybeError parse_destinations(const TomlReader& in, const toml::node& v, std::vector<DestinationSpec>& out) {
  const auto* arr = v.as_array();
  if (arr == nullptr)
    return in.err(v, "destination must be written [[delivery.destination]] (an array of tables, one per destination)");
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const toml::node& n = *arr->get(i);
    const auto* t = n.as_table();
    if (t == nullptr) return in.err(n, "each [[delivery.destination]] must be a table");
    DestinationSpec d;
    if (auto e = parse_destination(in, *t, i, d)) return e;
    for (const DestinationSpec& before : out)
      if (before.name == d.name)
        return in.err(*t->get("name"), fmt::format("duplicate destination name {} (first at {}:{}:{})", quote(d.name),
                                                   before.file, before.line, before.col));
    out.push_back(std::move(d));
  }
  return std::nullopt;
}

MaybeError check_destinations(const RuleSet& set) {
  std::vector<std::string> rule_names;
  for (const Rule& r : set.rules) rule_names.push_back(r.name);
  const std::set<std::string> labels = label_names(set);
  const std::set<std::string> annotations = annotation_names(set);
  for (const DestinationSpec& d : set.settings.delivery.destinations) {
    auto here = [&](std::string what) { return Error{d.file, d.line, d.col, std::move(what)}; };
    for (const std::string& r : d.rules)
      if (std::find(rule_names.begin(), rule_names.end(), r) == rule_names.end())
        return here(
            fmt::format("destination {}: rules names {}, which no rules file defines", quote(d.name), quote(r)));
    if (!d.body) continue;
    for (const BodyTemplate::Attribute& a : d.body->attributes()) {
      const bool is_label = a.name.starts_with("labels.");
      const std::string name = a.name.substr(a.name.find('.') + 1);
      if ((is_label ? labels : annotations).count(name) == 0)
        return here(fmt::format("destination {}: body uses {{{}}}, but no rule has {} {} (nor [delivery] labels)",
                                quote(d.name), a.name, is_label ? "label" : "annotation", quote(name)));
    }
  }
  return std::nullopt;
}

}  // namespace swthrottle::config
