#include "config/rule_identity.h"

#include <fmt/format.h>

#include "config/rules.h"
#include "config/watch_parser.h"

namespace swthrottle::config {
namespace {

// `when` text with whitespace normalised, so that "a>5" and "a > 5" give one
// fingerprint: runs of name/number characters and runs of comparison
// characters are tokens; everything else is a one-character token.
std::string canonical_when(std::string_view s) {
  auto word = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  };
  auto cmp = [](char c) { return c == '<' || c == '>' || c == '=' || c == '!'; };
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    if (word(c)) {
      while (j < s.size() && word(s[j])) ++j;
    } else if (cmp(c)) {
      while (j < s.size() && cmp(s[j])) ++j;
    }
    if (!out.empty()) out += ' ';
    out.append(s.substr(i, j - i));
    i = j;
  }
  return out;
}

void add_field(std::string& out, std::string_view name, std::string_view value) {
  out += fmt::format("{}={}:{};", name, value.size(), value);
}

// What a window's counts mean. Lengths make the text unambiguous whatever
// the names and patterns hold.
std::string window_meaning(const Rule& r) {
  std::string id(to_string(r.kind));
  for (const Event& e : r.events) {
    id += "|" + e.name + "=" + std::to_string(e.match.size()) + ":" + e.match;
    // Only events with fields add text, so other rules keep their identity.
    for (const FieldCondition& c : e.fields) {
      id += fmt::format("&{}:{}{}{}:{}", c.path.size(), c.path, c.regex ? "~" : "=", c.value.size(), c.value);
    }
  }
  id += "|" + std::to_string(r.window_ms) + "/" + std::to_string(r.buckets);
  // Only when set, so other rules keep their identity: what a window holds
  // besides event counts (the previous window, distinct values, the values
  // a `new` rule remembers) is part of what it means.
  if (r.keeps_previous) id += "|previous";
  if (r.distinct) id += "|distinct=" + std::to_string(r.distinct->text().size()) + ":" + r.distinct->text();
  if (r.new_value) id += "|new=" + std::to_string(r.new_value->text().size()) + ":" + r.new_value->text();
  return id;
}

}  // namespace

std::string fingerprint(const Rule& r) {
  std::string fp;
  add_field(fp, "kind", to_string(r.kind));
  add_field(fp, "events", std::to_string(r.events.size()));
  for (const auto& e : r.events) {
    add_field(fp, "event", e.name);
    add_field(fp, "match", e.match);
    for (const FieldCondition& c : e.fields) {
      add_field(fp, "field", c.path);
      add_field(fp, c.regex ? "field_match" : "field_equals", c.value);
    }
  }
  add_field(fp, "ignore", r.ignore);
  add_field(fp, "window_ms", std::to_string(r.window_ms));
  add_field(fp, "buckets", std::to_string(r.buckets));
  add_field(fp, "mode", to_string(r.mode));
  add_field(fp, "when", r.threshold ? fmt::format("sum >= {}", *r.threshold) : canonical_when(r.when_text));
  // Part of the condition: a saved firing episode was opened under it. Only
  // when set, so the fingerprints of rules without it (and their state
  // files) stay as they were.
  if (r.resolve_when) add_field(fp, "resolve_when", canonical_when(r.resolve_when_text));
  // The distinct and first-seen settings, only when set (other rules' fingerprints stay as they were).
  if (r.distinct) add_field(fp, "distinct", r.distinct->text());
  if (r.new_value) {
    add_field(fp, "new", r.new_value->text());
    add_field(fp, "learn_ms", std::to_string(r.learn_ms));
  }
  // Conditions that last and sequences (watch_parser.h): a saved pending
  // time or armed key means something only under the same ones.
  if (r.for_ms > 0) add_field(fp, "for_ms", std::to_string(r.for_ms));
  if (r.then) {
    add_field(fp, "then", canonical_when(r.then_text));
    add_field(fp, "within_ms", std::to_string(r.within_ms));
  }
  return fp;
}

std::string fleet_identity(const Rule& r) {
  std::string id = window_meaning(r);
  add_field(id, "when", r.threshold ? fmt::format("sum >= {}", *r.threshold) : canonical_when(r.when_text));
  if (r.kind == RuleKind::Alert) add_field(id, "cooldown_ms", std::to_string(r.cooldown_ms));
  if (r.resolve_when) add_field(id, "resolve_when", canonical_when(r.resolve_when_text));
  return id;
}

bool windows_carry_over(const Rule& before, const Rule& after) {
  return window_meaning(before) == window_meaning(after) && before.key.has_value() == after.key.has_value() &&
         // A watched rule and a sequence keep state of their own beside each window.
         is_watched(before) == is_watched(after) && is_sequence(before) == is_sequence(after);
}

}  // namespace swthrottle::config
