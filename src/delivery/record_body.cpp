#include "delivery/record_body.h"

#include <fmt/format.h>

#include "output/writer.h"
#include "util/digest.h"

namespace swthrottle::delivery {

std::string webhook_body(const engine::Record& r, std::string_view id) {
  std::string json;
  output::render_with_id(json, r, id);
  json.pop_back();  // the record's "\n": a body is the object alone
  return json;
}

std::string batch_key(const std::vector<std::string_view>& ids) {
  if (ids.size() == 1) return std::string(ids[0]);
  std::string all;
  for (std::string_view id : ids) {
    all += id;
    all += '\n';
  }
  return digest(all);
}

}  // namespace swthrottle::delivery
