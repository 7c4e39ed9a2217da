#include "delivery/record_body.h"

#include <fmt/format.h>

#include "delivery/delivery.h"
#include "output/writer.h"
#include "util/digest.h"

namespace swthrottle::delivery {

uint32_t destination_number(std::string_view target) {
  return static_cast<uint32_t>(std::stoul(digest(target).substr(0, 8), nullptr, 16));
}

std::string record_id(const engine::Record& r) {
  std::string what =
      fmt::format("swthrottle-record-1\n{}\n{}\n", engine::to_string(r.type), r.rule ? r.rule->name : "");
  what += r.key;
  what +=
      fmt::format("\n{}\n{}\n{}\n{}\n{}\n", r.has_time ? r.time_ms : -1, r.count, r.suppressed, r.first_ms, r.last_ms);
  for (uint64_t c : r.counts) what += fmt::format("{},", c);
  return digest(what);
}

std::string webhook_body(const engine::Record& r, std::string_view id) {
  std::string json;
  output::render(json, r, output::Format::Json);
  while (!json.empty() && json.back() == '\n') json.pop_back();
  // {"type":...} -> {"id":"...","type":...}: the id first, where a receiver looks.
  std::string out = fmt::format("{{\"id\":\"{}\"", id);
  if (json.size() > 2) out += ',';
  out.append(json, 1);
  return out;
}

std::string json_array(const std::vector<std::string_view>& bodies) {
  std::string out = "[";
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (i > 0) out += ',';
    out += bodies[i];
  }
  out += ']';
  return out;
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
