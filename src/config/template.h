// `key` and `message` templates: fmt-style "{name}" fields over captures and built-ins.
//
// Syntax: literal text; "{name}" inserts a field; "{name:SPEC}" applies an fmt
// format spec to the field's text (fill, align, width, precision-truncation:
// "{ip:>15}", "{line:.80}"); "{{" and "}}" are literal braces. Field values are
// always text. Everything is checked at parse time; render cannot fail.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace swthrottle::config {

class Template {
 public:
  Template() = default;

  // `resolve(name)` returns the field id (>= 0) for a known name, or -1.
  // On an unknown name the error lists the known names (`known_names`) and adds
  // a "did you mean" hint when one is close. Error::col is the 1-based offset in `text`.
  static Result<Template> parse(std::string_view text, const std::function<int(std::string_view)>& resolve,
                                std::span<const std::string> known_names);

  // Appends the rendered text to `out`. values[id] is the text of field `id`;
  // an id beyond values.size() renders as empty.
  void render(std::string& out, std::span<const std::string_view> values) const;

  bool uses(int field) const;  // does any segment insert `field`?
  bool empty() const { return segments_.empty(); }
  const std::string& text() const { return text_; }

  struct Segment {
    std::string literal;  // used when field < 0
    int field = -1;
    std::string spec;  // fmt spec without the colon; empty = none
  };

 private:
  std::string text_;
  std::vector<Segment> segments_;
  // Per segment: the fmt format string "{:SPEC}", built once at parse so that
  // render() allocates nothing but `out`; "" when the segment has no spec.
  std::vector<std::string> formats_;
};

}  // namespace swthrottle::config
