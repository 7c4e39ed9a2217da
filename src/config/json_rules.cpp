// Rules over JSON lines: the literal a `fields` event leaves for the
// prefilter (its stand-in), so the matcher skips lines it cannot match
// before parsing them; under --input journal, `match` and `ignore` become
// conditions on the MESSAGE field and the stand-ins are made again.
#include <algorithm>

#include <re2/re2.h>

#include "config/rules.h"

namespace swthrottle::config {
namespace {

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

}  // namespace

std::string make_stand_in(const Event& e, bool journal) {
  if (!e.match.empty()) return "";
  // The longest equality the raw line must hold verbatim, or "\u00" (an
  // escape may spell it differently): the matcher then skips lines with
  // neither before it reads them as JSON. Without one, the empty pattern:
  // every line is a candidate.
  const FieldCondition* best = nullptr;
  for (const FieldCondition& c : e.fields) {
    if (is_envelope_path(c.path)) continue;  // on an envelope's line, not in its text
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
