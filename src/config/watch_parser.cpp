#include "config/watch_parser.h"

#include <array>
#include <cstdint>

#include <fmt/format.h>

namespace swthrottle::config {

bool holds_when_empty(const Rule& rule) {
  static constexpr std::array<uint64_t, 64> kZeros{};
  return rule.when.eval(std::span<const uint64_t>(kZeros.data(), rule.events.size()));
}

bool is_sequence(const Rule& rule) { return rule.then.has_value(); }

bool is_watched(const Rule& rule) {
  // The distinct, first-seen and previous-window rules are kinds of their own
  // (the parser refuses for, forget, then and within on them).
  if (rule.distinct || rule.new_value || rule.keeps_previous) return false;
  return rule.kind == RuleKind::Alert && !is_sequence(rule) && (rule.for_ms > 0 || holds_when_empty(rule));
}

namespace {

// `then` and `within`: a sequence.
std::optional<Error> parse_then(const TomlReader& in, const toml::table& t, const std::string& label, Rule& rule) {
  const toml::node* then = t.get("then");
  const toml::node* within = t.get("within");
  if (then == nullptr) {
    if (within != nullptr)
      return in.err(*within, fmt::format("{} has within but no then; within says how long `then` may take", label));
    return std::nullopt;
  }
  if (rule.threshold) {
    return in.err(*then, fmt::format("{} has then: a sequence names its first step with window = \"X\" and "
                                     "when = \"EXPR\", not threshold (which counts every event, the second step's too)",
                                     label));
  }
  for (const char* key : {"resolve", "resolve_when", "for", "forget"}) {
    if (const toml::node* n = t.get(key)) {
      return in.err(*n, fmt::format("{} has then: a sequence alerts once its second step comes, so it has nothing "
                                    "to resolve and nothing that lasts; remove {}",
                                    label, key));
    }
  }
  const auto* s = then->as_string();
  if (s == nullptr) {
    return in.err(*then, fmt::format("then must be a string such as \"accepted >= 1\", not {}", describe(*then)));
  }
  auto ex = Expr::parse(s->get(), rule.event_names);
  if (!ex) return in.err_in(*then, ex.error().col, "then: " + ex.error().what);
  rule.then = std::move(*ex);
  rule.then_text = s->get();
  rule.within_ms = rule.window_ms;
  if (within != nullptr) {
    auto w = in.duration(*within, "within");
    if (!w) return w.error();
    rule.within_ms = *w;
  }
  return std::nullopt;
}

// `for` and `forget`: a watched rule.
std::optional<Error> parse_for(const TomlReader& in, const toml::table& t, const std::string& label, Rule& rule) {
  if (const toml::node* f = t.get("for")) {
    auto d = in.duration(*f, "for");
    if (!d) return d.error();
    rule.for_ms = *d;
  }
  const toml::node* forget = t.get("forget");
  if (!is_watched(rule)) {
    if (forget != nullptr) {
      return in.err(*forget, fmt::format("{} is not checked at every boundary, so it keeps no silent keys to forget: "
                                         "forget applies to a rule with for, or whose when holds on an empty window",
                                         label));
    }
    return std::nullopt;
  }
  if (rule.fleet != FleetMode::Off) {
    const toml::node* at = t.get("for") != nullptr ? t.get("for") : t.get("when");
    return in.err(*at, fmt::format("{} is checked at every boundary (for, or a when that holds on an empty "
                                   "window), which a fleet rule is not: the fleet decides on lines; remove fleet",
                                   label));
  }
  if (!rule.key) {
    if (forget != nullptr)
      return in.err(*forget, fmt::format("{} has no key: its one window is never forgotten; remove forget", label));
    return std::nullopt;
  }
  rule.forget_ms = kDefaultForgetWindows * rule.window_ms;
  if (forget != nullptr) {
    auto d = in.duration(*forget, "forget");
    if (!d) return d.error();
    if (*d < rule.window_ms) {
      return in.err(*forget, fmt::format("forget must be at least the window ({}): a key forgotten sooner is gone "
                                         "before its silence could be reported",
                                         rule.window_text));
    }
    rule.forget_ms = *d;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Error> parse_watch_keys(const TomlReader& in, const toml::table& t, const std::string& label,
                                      Rule& rule) {
  if (rule.kind == RuleKind::Throttle) {
    for (const char* key : {"for", "forget", "then", "within"}) {
      if (const toml::node* n = t.get(key))
        return in.err(*n, fmt::format("{} is a throttle rule; {} applies to alert rules only", label, key));
    }
    return std::nullopt;
  }
  if (auto e = parse_then(in, t, label, rule)) return e;
  if (is_sequence(rule) && rule.fleet != FleetMode::Off) {
    return in.err(*t.get("then"),
                  fmt::format("{} is a sequence (then), which a fleet rule cannot be: the fleet window counts "
                              "events, not what came after what; remove fleet",
                              label));
  }
  if (is_sequence(rule)) return std::nullopt;
  return parse_for(in, t, label, rule);
}

}  // namespace swthrottle::config
