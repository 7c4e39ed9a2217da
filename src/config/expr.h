// `when` expressions: a small compiled language over a rule's event counts.
//
// Grammar (Python's precedence, loosest first):
//   or  ->  and ('or' and)*
//   and ->  not ('and' not)*
//   not ->  'not' not | cmp
//   cmp ->  sum (('>'|'>='|'<'|'<='|'=='|'!=') sum)*     chained like Python: a < b < c
//   sum ->  prod (('+'|'-') prod)*
//   prod -> unary (('*'|'/') unary)*
//   unary -> '-' unary | atom
//   atom -> NUMBER | EVENT_NAME | 'previous' '(' EVENT_NAME ')' | 'distinct' | '(' or ')'
// Numbers are decimal (integer or fraction, e.g. 0.05). Arithmetic is in double.
// previous(e) is e's count in the window just before the current one: with E
// events, counts[E + i] for event i (the rule's window keeps the previous
// window when its condition uses it). `distinct` (only in a rule that counts
// distinct values) is their count in the window: counts[E].
// A number in a boolean position (operand of and/or/not, or the whole
// expression) is true when != 0. A comparison in an arithmetic position is an error.
// Division by zero makes the comparison that contains it false (`!=` too), and a
// bare arithmetic value containing a division by zero is false.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace swthrottle::config {

// The names an expression may use: the rule's events, and `distinct` when
// the rule counts distinct values.
struct ExprNames {
  std::span<const std::string> events;
  bool distinct = false;
};

class Expr {
 public:
  Expr() = default;

  // As parse() below, with `distinct` too when names.distinct.
  static Result<Expr> parse(std::string_view text, const ExprNames& names);

  // Compiles `text`; identifiers must be in `event_names` (their index is the
  // index into the counts passed to eval). On error, Error::col is the 1-based
  // offset in `text` and the message names the problem, e.g.
  //   unknown event "eror" (events: request, error; did you mean "error"?)
  static Result<Expr> parse(std::string_view text, std::span<const std::string> event_names) {
    return parse(text, ExprNames{event_names});
  }

  // The condition a threshold stands for: sum of all `events` counts >= y.
  static Expr threshold(uint64_t y, std::size_t events);

  // Evaluates on the window's per-event counts. No allocation; safe to call
  // from several threads at once.
  bool eval(std::span<const uint64_t> counts) const;

  const std::string& text() const { return text_; }
  // Reads previous(e): the counts it needs are 2E, the window's then the previous window's.
  bool uses_previous() const { return uses_previous_; }
  // Reads `distinct`.
  bool uses_distinct() const { return uses_distinct_; }

  // The numbers written in it (a threshold: its Y), for probing what the
  // condition can do (config/condition_probe.h).
  std::vector<double> numbers() const;

  // Implementation detail, public for the implementation file only.
  struct Op {
    uint8_t code;
    uint32_t arg;  // event index or jump target
    double num;    // literal
  };

 private:
  std::string text_;
  std::vector<Op> code_;
  uint32_t max_stack_ = 0;
  bool uses_previous_ = false;
  bool uses_distinct_ = false;
};

}  // namespace swthrottle::config
