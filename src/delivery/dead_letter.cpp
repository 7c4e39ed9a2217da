#include "delivery/dead_letter.h"

#include <nlohmann/json.hpp>

#include "util/base64.h"
#include "util/json.h"
#include "util/utf8.h"

namespace swthrottle::delivery {

std::string dead_letter_line(const Delivery& d, const std::string& why, int64_t now_wall_ms) {
  using nlohmann::ordered_json;
  auto time = [](int64_t ms) {
    std::string t;
    append_rfc3339_ms(t, ms);
    return t;
  };
  ordered_json j = ordered_json::object();
  j["id"] = d.id;
  j["dest"] = d.destination;
  j["to"] = d.label;
  j["kind"] = to_string(d.kind);
  j["created"] = time(d.created_ms);
  j["attempts"] = d.attempts;
  j["why"] = why;
  j["time"] = time(now_wall_ms);
  j["body"] = d.body;
  if (!is_valid_utf8(d.body)) {
    std::string b64;
    append_base64(b64, d.body);
    j["body_base64"] = std::move(b64);
  }
  // `replace`: the body's invalid UTF-8 (and an id's or a why's) as U+FFFD.
  std::string s = j.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
  s += '\n';
  return s;
}

}  // namespace swthrottle::delivery
