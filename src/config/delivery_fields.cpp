#include "config/delivery_fields.h"

#include <algorithm>

namespace swthrottle::config {

const std::vector<std::string>& delivery_field_names() {
  static const std::vector<std::string> kNames = {
      "id",     "type",       "time",    "rule", "kind",  "key",  "count",   "counts", "threshold", "when",
      "window", "suppressed", "message", "line", "first", "last", "summary", "host",   "dedup_key"};
  return kNames;
}

int delivery_field(std::string_view name) {
  const auto& names = delivery_field_names();
  auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

}  // namespace swthrottle::config
