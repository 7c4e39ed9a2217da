#include "output/record_id.h"

#include <fmt/format.h>

#include "util/digest.h"

namespace swthrottle::output {

std::string record_id(const engine::Record& r) {
  std::string what =
      fmt::format("swthrottle-record-1\n{}\n{}\n", engine::to_string(r.type), r.rule ? r.rule->name : "");
  what += r.key;
  what +=
      fmt::format("\n{}\n{}\n{}\n{}\n{}\n", r.has_time ? r.time_ms : -1, r.count, r.suppressed, r.first_ms, r.last_ms);
  for (uint64_t c : r.counts) what += fmt::format("{},", c);
  return digest(what);
}

}  // namespace swthrottle::output
