// `timestamp = "%..."` (DESIGN.md §4, man page "Timestamps"): our own strptime
// subset, compiled once into a list of steps and applied at the start of a
// text. Reading allocates nothing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "match/stamp_fields.h"
#include "util/result.h"

namespace swthrottle::match::stamp {

class StrptimeFormat {
 public:
  // The steps of format `fmt`, or an error that says what is wrong with it
  // (only `what` is set: "invalid timestamp format \"...\": why").
  static Result<StrptimeFormat> compile(const std::string& fmt);

  // Reads the format at the start of s into f (text after it is ignored).
  // False when s does not fit the format; f is checked later (settle_time()).
  bool read(std::string_view s, Fields& f) const;

 private:
  // One step of a compiled format.
  struct Op {
    char code;     // conversion letter; ' ' = a run of whitespace; 'L' = a literal
    char literal;  // for 'L'
  };

  std::vector<Op> ops_;
};

}  // namespace swthrottle::match::stamp
