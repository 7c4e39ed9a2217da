// BodyTemplate: a destination's `body` (man page: DELIVERY, "Templates"):
// a JSON value whose strings are templates (config/template.h) over the
// delivery fields (config/delivery_fields.h) and the rule's labels and
// annotations, "{labels.team}", "{annotations.runbook_url}".
//
// The JSON is parsed once, at load; a rendered value is set as a string of
// that structure and the whole written by a JSON serializer, so whatever a
// log line holds is escaped and can neither break the body nor add to it.
// Keys, numbers, booleans and null are taken as written; only string
// values are templates (a count is "7", a string). Everything that can be
// wrong (not JSON, an unknown field, a bad spec) is an error at load.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/template.h"
#include "util/result.h"

namespace swthrottle::config {

class BodyTemplate {
 public:
  // Error::col: the 1-based byte offset in `json` (0: no place in it).
  static Result<BodyTemplate> parse(std::string_view json);

  // A "labels.NAME" or "annotations.NAME" the templates name, and where.
  struct Attribute {
    std::string name;  // "labels.team"
    int col = 0;       // 1-based offset in text()
  };
  const std::vector<Attribute>& attributes() const { return attributes_; }
  const std::string& text() const { return text_; }

  // The body: `fields` by DeliveryField id, `attribute(name)` the value of
  // each attribute() name; both as they are to be inserted (a preset that
  // escapes does so first). Invalid UTF-8 is repaired to U+FFFD.
  std::string render(std::span<const std::string> fields,
                     const std::function<std::string(std::string_view)>& attribute) const;

 private:
  std::string text_;
  std::shared_ptr<const nlohmann::ordered_json> skeleton_;  // the parsed JSON
  std::vector<Template> strings_;                           // its string values, in document order
  std::vector<Attribute> attributes_;                       // template ids kDeliveryFieldCount + i
};

}  // namespace swthrottle::config
