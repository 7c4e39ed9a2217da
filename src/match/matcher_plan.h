// Internal to src/match, not part of the public API (include match/matcher.h
// instead): the definition of Matcher::Plan, which Matcher::make compiles once
// per rule set's content and shares between threads, the types it holds, and
// the function that hands out the shared plan. Compiling a rule set into a
// plan and caching it (matcher_plan.cpp) is apart from matching lines with it
// (matcher.cpp, Matcher::Impl); both need the Plan's layout, so it lives here.
#pragma once

#include <re2/re2.h>
#include <re2/set.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/rules.h"
#include "match/matcher.h"
#include "match/prefilter.h"
#include "util/result.h"

namespace swthrottle::match {

namespace detail {

// RE2's default (8 MiB) is meant for one pattern; the set holds every pattern
// of every rule. This is a cap on the compiled program and DFA cache, not an
// allocation: memory grows only as lines need new DFA states.
constexpr int64_t kSetMaxMem = int64_t{64} << 20;

// One entry of an event's `fields`, compiled.
struct FieldCheck {
  std::size_t slot = 0;     // in JsonFields
  std::string equals;       // when !re
  std::unique_ptr<RE2> re;  // { match = '...' }
  // The Latin-1 reading of `re`, for a field whose text is not UTF-8 (as a
  // line's; journald's arrays of bytes are such text); null when none.
  std::unique_ptr<RE2> latin1;
  std::vector<std::pair<uint32_t, int>> slot_group;  // (index in capture_names, group number)
  int nsubmatch = 0;
};

// One compiled pattern of the set: an event of a rule, or its ignore.
struct Pattern {
  uint32_t rule = 0;
  int32_t event = -1;  // -1: the rule's `ignore`
};

// The set of one reading of a line (UTF-8 or Latin-1).
struct Encoding {
  std::unique_ptr<RE2::Set> set;         // compiled by the plan, then a thread's (Plan::spare_*)
  std::vector<uint32_t> set_to_pattern;  // set index -> pattern index
};

}  // namespace detail

// What Matcher::make compiles from a rule set, read-only once made: one Plan
// per rule set's content (PlanCache), shared by the decider and every -j
// worker (each Matcher holds it). A thread searches with RE2 objects of its
// own (Matcher::Impl), compiled when it first needs one, because an RE2
// shared between threads makes them fight over its DFA cache's lock (RE2
// issue #569). The Plan keeps no RE2 per pattern: with a thousand rules a
// thread compiles only the few its lines make it search (the prefilter
// names them), and the sets only when a line needs them.
struct Matcher::Plan {
  struct RuleInfo {
    uint32_t first_pattern = 0;  // events are first_pattern + i; ignore follows them
    uint32_t num_events = 0;
    uint32_t num_captures = 0;
    int32_t ignore_pattern = -1;  // the rule's `ignore`, if any
    bool needs_captures = false;
    bool has_fields = false;  // some event has `fields`
    // An `ignore` that looks at a JSON field (Rule::ignore_field), not in the set.
    std::optional<std::size_t> ignore_check;  // index into ignore_checks
    // "{.path}" capture slots: (index in capture_names, JsonFields slot).
    std::vector<std::pair<uint32_t, std::size_t>> json_captures;
  };
  // For each event pattern: where its named groups go.
  struct EventGroups {
    std::vector<std::pair<uint32_t, int>> slot_group;  // (index in capture_names, group number)
    int nsubmatch = 0;                                 // highest group number needed + 1; 0 = none
  };

  detail::Encoding utf8;
  detail::Encoding latin1;
  std::vector<std::string> texts;   // per pattern: its text, for a thread's own RE2 and sets
  std::vector<uint8_t> has_latin1;  // per pattern: it has a Latin-1 reading (in latin1.set)
  RE2::Options utf8_options;
  RE2::Options latin1_options;
  std::vector<detail::Pattern> patterns;  // in rule order, so sorting pattern ids sorts by rule
  std::vector<RuleInfo> rules;
  // Backtest: by rule, its candidate copies (config::Rule::matched_as), given its hits.
  std::vector<std::vector<uint32_t>> copies;
  bool has_copies = false;
  std::vector<EventGroups> groups;                      // per pattern (empty for ignore patterns)
  std::vector<std::vector<detail::FieldCheck>> checks;  // per pattern: its event's `fields` (each thread copies them)
  std::vector<detail::FieldCheck> ignore_checks;        // RuleInfo::ignore_check (likewise)
  std::vector<std::string> json_paths;                  // the JSON fields the rules name
  std::size_t max_captures = 0;
  int max_submatch = 0;

  std::optional<Prefilter> prefilter;   // each thread takes another() of it
  bool journal_rules = false;           // the rules' settings.journal (config::use_journal)
  std::vector<uint32_t> event_pattern;  // event number over all rules -> pattern index
  // Per pattern: the pattern itself when it is plain ASCII text without a
  // metacharacter, so that on an ASCII line "matches" is "contains"; else "".
  std::vector<std::string> literal;
  std::vector<uint8_t> fields_only;  // per pattern: an event with `fields` and no `match`

  // The compiled sets, for the first Matcher that needs a set: the others
  // compile their own (the lock guards only the hand-over).
  mutable std::mutex spare_mu;
  mutable std::unique_ptr<RE2::Set> spare_utf8;
  mutable std::unique_ptr<RE2::Set> spare_latin1;
};

namespace detail {

// The plan for (rules, all_captures, prefilter): the one in use when a plan
// of the same content is alive, else compiled now (matcher_plan.cpp).
Result<std::shared_ptr<const Matcher::Plan>> cached_plan(const config::RuleSet& rules, bool all_captures,
                                                         bool prefilter);

}  // namespace detail

}  // namespace swthrottle::match
