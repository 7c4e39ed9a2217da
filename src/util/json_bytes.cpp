#include "util/json_bytes.h"

#include "util/base64.h"
#include "util/utf8.h"

namespace swthrottle {

nlohmann::ordered_json json_bytes(std::string_view s) {
  if (is_valid_utf8(s)) return std::string(s);
  std::string b64;
  append_base64(b64, s);
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["base64"] = std::move(b64);
  return j;
}

bool read_json_bytes(const nlohmann::json& j, std::string& out) {
  if (j.is_string()) {
    out = j.get_ref<const std::string&>();
    return true;
  }
  if (!j.is_object() || j.size() != 1) return false;
  auto it = j.find("base64");
  return it != j.end() && it->is_string() && decode_base64(it->get_ref<const std::string&>(), out);
}

}  // namespace swthrottle
