// The settings of conditions that last, silence and sequences (man page:
// SILENCE AND SEQUENCES): a rule's `for`, `forget`, `then` and `within`,
// and the kind of alert rule they make.
//
//  watched   an alert rule whose condition is evaluated at every boundary
//            check, not only on its lines: it has `for`, or its `when`
//            holds on an empty window ("hb < 1"), so silence can fire it.
//  sequence  an alert rule with `then`: `when` arms a key, and `then`
//            must hold on the events that come after, within `within`.
//
// Internal to src/config/ but for the two predicates, which the engine and
// the reports ask.
#pragma once

#include <string>

#include "config/rules.h"
#include "config/toml_walk.h"

namespace swthrottle::config {

// Keyed watched rules forget a key after this many windows without an event,
// unless `forget` says otherwise.
inline constexpr int64_t kDefaultForgetWindows = 3;

// Reads for, forget, then and within from the rule table t into `rule`, whose
// kind, events, condition, resolve and fleet are read already; checks how
// they go together and sets the defaults (within: the window; forget:
// kDefaultForgetWindows windows for a keyed watched rule).
std::optional<Error> parse_watch_keys(const TomlReader& in, const toml::table& t, const std::string& label, Rule& rule);

// Does the rule's `when` hold when every count of the window is 0?
bool holds_when_empty(const Rule& rule);
// Evaluated at every boundary check (see above).
bool is_watched(const Rule& rule);
bool is_sequence(const Rule& rule);

}  // namespace swthrottle::config
