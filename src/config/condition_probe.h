// What a `when` (or `then`) can do, found by trying it on counts: whether it
// can hold at all, and whether it holds only on an empty window. For the
// warnings of --check (man page: SILENCE AND SEQUENCES): a rule whose
// condition never holds passes every other check and yet never alerts.
//
// A probe, not a proof: the condition is evaluated on every combination of
// a set of counts (0 to 10, and around each number the condition names)
// while there are at most kProbeCombinations, else on that many drawn from
// them with a fixed seed. A condition that holds only on counts outside them
// (`a == 123456789 * b`) reads as "never holds": the warning says "found no".
#pragma once

#include <cstddef>
#include <cstdint>

#include "config/expr.h"

namespace swthrottle::config {

inline constexpr std::size_t kProbeCombinations = 100'000;

struct ConditionProbe {
  bool holds_somewhere = false;        // some counts make it true
  bool holds_when_empty = false;       // all counts 0 make it true
  bool holds_only_when_empty = false;  // true at all 0, and on no other counts tried
};

// `events`: how many counts the condition reads (the rule's events, 1..64).
ConditionProbe probe_condition(const Expr& e, std::size_t events);

}  // namespace swthrottle::config
