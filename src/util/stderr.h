// Messages on stderr, each one line in one write(2), so that lines of several
// threads never interleave mid-line.
#pragma once

#include <string>
#include <string_view>

#include "util/write_all.h"

namespace swthrottle {

inline void print_error(std::string_view message) {
  std::string line(message);
  if (line.empty() || line.back() != '\n') line += '\n';
  (void)write_all(2, line);
}

// One of swthrottle's own messages: "swthrottle: " + message.
inline void print_message(std::string_view message) { print_error("swthrottle: " + std::string(message)); }

}  // namespace swthrottle
