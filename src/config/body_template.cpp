#include "config/body_template.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "config/delivery_fields.h"
#include "util/json.h"

namespace swthrottle::config {
namespace {

using nlohmann::ordered_json;

bool is_label_name(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// The offsets of the string values (not keys) of valid JSON text, in
// document order: where a template's error points.
std::vector<std::size_t> string_value_offsets(std::string_view text) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '"') continue;
    const std::size_t start = i;
    for (++i; i < text.size() && text[i] != '"'; ++i)
      if (text[i] == '\\') ++i;
    std::size_t next = i + 1;
    while (next < text.size() && (text[next] == ' ' || text[next] == '\t' || text[next] == '\n' || text[next] == '\r'))
      ++next;
    if (next >= text.size() || text[next] != ':') out.push_back(start);
  }
  return out;
}

// Calls f on every string value of j, in document order.
template <typename J, typename F>
void each_string(J& j, F&& f) {
  if (j.is_string()) {
    f(j);
  } else if (j.is_structured()) {
    for (auto& member : j) each_string(member, f);
  }
}

}  // namespace

Result<BodyTemplate> BodyTemplate::parse(std::string_view json) {
  BodyTemplate t;
  t.text_ = std::string(json);
  ordered_json parsed;
  try {
    parsed = ordered_json::parse(json);
  } catch (const ordered_json::parse_error& e) {
    Error err;
    err.col = static_cast<int>(std::min<std::size_t>(e.byte, json.size()));
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error ..." -> from "syntax error"
    if (auto colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
    err.what = "body is not JSON: " + what;
    return err;
  }
  if (!parsed.is_object() && !parsed.is_array()) {
    Error err;
    err.col = 1;
    err.what = "body must be a JSON object or array, such as '{\"text\": \"{summary}\"}'";
    return err;
  }
  const std::vector<std::size_t> offsets = string_value_offsets(json);
  const auto& names = delivery_field_names();
  std::vector<std::string> known = names;
  known.push_back("labels.NAME");
  known.push_back("annotations.NAME");
  std::optional<Error> failed;
  std::size_t index = 0;
  each_string(parsed, [&](const ordered_json& s) {
    if (failed) return;
    auto resolve = [&](std::string_view name) -> int {
      if (int id = delivery_field(name); id >= 0) return id;
      for (std::string_view prefix : {"labels.", "annotations."}) {
        if (!name.starts_with(prefix) || !is_label_name(name.substr(prefix.size()))) continue;
        for (std::size_t i = 0; i < t.attributes_.size(); ++i)
          if (t.attributes_[i].name == name) return kDeliveryFieldCount + static_cast<int>(i);
        const int base = index < offsets.size() ? static_cast<int>(offsets[index]) + 2 : 0;
        t.attributes_.push_back({std::string(name), base});
        return kDeliveryFieldCount + static_cast<int>(t.attributes_.size() - 1);
      }
      return -1;
    };
    auto tpl = Template::parse(s.get<std::string>(), resolve, known);
    if (!tpl) {
      Error e = tpl.error();
      // Exact when no escape comes before the error inside the string.
      e.col = index < offsets.size() ? static_cast<int>(offsets[index]) + 1 + e.col : 0;
      e.what = "body: " + e.what;
      failed = std::move(e);
      return;
    }
    t.strings_.push_back(std::move(*tpl));
    ++index;
  });
  if (failed) return *failed;
  t.skeleton_ = std::make_shared<const ordered_json>(std::move(parsed));
  return t;
}

std::string BodyTemplate::render(std::span<const std::string> fields,
                                 const std::function<std::string(std::string_view)>& attribute) const {
  std::vector<std::string> attribute_values;
  attribute_values.reserve(attributes_.size());
  for (const Attribute& a : attributes_) attribute_values.push_back(attribute(a.name));
  std::vector<std::string_view> values(fields.begin(), fields.end());
  values.insert(values.end(), attribute_values.begin(), attribute_values.end());

  ordered_json body = *skeleton_;
  std::size_t index = 0;
  std::string text, repaired;
  each_string(body, [&](ordered_json& s) {
    text.clear();
    strings_[index++].render(text, values);
    repaired.clear();
    append_utf8_repaired(repaired, text);
    s = repaired;
  });
  return body.dump();
}

}  // namespace swthrottle::config
