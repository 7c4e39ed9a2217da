// One [[rule]] table while it is read, and what the sections that read it
// share: each section (rule_parser.cpp, shape_parser.cpp) reads the keys of
// one concern from `t` into a PendingRule, in the order their checks depend
// on (events before the condition that names them, captures before templates).
// Internal to src/config/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/rules.h"
#include "config/template.h"
#include "config/toml_walk.h"

namespace swthrottle::config {

struct RuleTable {
  const TomlReader& in;
  const toml::table& t;
  std::string label;  // "[[rule]] \"name\"", for messages
  bool alert = false;
};

// `s` without its leading and trailing blanks (spaces, tabs).
std::string trim_blanks(std::string_view s);

// "{.path}" in the template at key `which` is the text of a JSON field: each
// takes a capture slot of its own, named with the leading "." no regex group
// can have.
void add_json_field_captures(const toml::table& t, const char* which, Rule& rule);

// The fields of a template rendered per line without a record (key,
// distinct, new): {rule}, {event} and the captures.
struct KeyFields {
  std::vector<std::string> names;
  std::vector<int> ids;
};
KeyFields key_fields(const Rule& rule);

// A template at `v` (key `key`) over the fields `known`, whose ids are `ids`.
Result<Template> parse_template(const TomlReader& in, const toml::node& v, std::string_view key,
                                const std::vector<std::string>& known, const std::vector<int>& ids);

}  // namespace swthrottle::config
