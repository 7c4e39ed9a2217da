#include "delivery/record_view.h"

#include <fmt/format.h>

#include "config/delivery_fields.h"

namespace swthrottle::delivery {
namespace {

using config::DeliveryField;

const std::string& field(const RecordView& v, DeliveryField f) { return v.fields[static_cast<std::size_t>(f)]; }

// Labels and annotations that are not the record's own fields again.
bool built_in_label(const std::string& name) { return name == "alertname" || name == "key" || name == "kind"; }
bool built_in_annotation(const std::string& name) {
  return name == "summary" || name == "count" || name == "threshold" || name == "when" || name == "window" ||
         name == "suppressed" || name == "counts";
}

}  // namespace

std::string record_title(const RecordView& v) {
  std::string t = fmt::format("{} {}", field(v, config::kDfType), field(v, config::kDfRule));
  if (!v.record.key.empty()) t += " key=" + field(v, config::kDfKey);
  return t;
}

std::string record_text(const RecordView& v) {
  const engine::Record& r = v.record;
  if (r.type == engine::RecordType::Summary)
    return fmt::format("{} line{} suppressed from {} to {}", r.suppressed, r.suppressed == 1 ? "" : "s",
                       field(v, config::kDfFirst), field(v, config::kDfLast));
  // A resolved record's message is rendered without the line that made the
  // alert (its captures are empty): the count says more.
  if (r.type == engine::RecordType::Resolved) return fmt::format("{} in {} now", r.count, field(v, config::kDfWindow));
  if (r.has_message) return field(v, config::kDfMessage);
  if (r.has_line) return field(v, config::kDfLine);
  return fmt::format("{} in {}", r.count, field(v, config::kDfWindow));
}

std::vector<std::pair<std::string, std::string>> record_facts(const RecordView& v) {
  std::vector<std::pair<std::string, std::string>> out;
  auto add = [&](std::string name, const std::string& value) {
    if (!value.empty()) out.emplace_back(std::move(name), value);
  };
  const bool summary = v.record.type == engine::RecordType::Summary;
  if (!summary) add("count", field(v, config::kDfCount));
  add("threshold", field(v, config::kDfThreshold));
  add("when", field(v, config::kDfWhen));
  add("window", field(v, config::kDfWindow));
  add("suppressed", field(v, config::kDfSuppressed));
  if (v.record.rule != nullptr && v.record.rule->event_names.size() > 1) add("counts", field(v, config::kDfCounts));
  add("time", field(v, config::kDfTime));
  add("host", field(v, config::kDfHost));
  for (const auto& [name, value] : v.labels)
    if (!built_in_label(name)) add(name, value);
  for (const auto& [name, value] : v.annotations)
    if (!built_in_annotation(name)) add(name, value);
  return out;
}

std::string cut_text(std::string_view s, std::size_t max_chars) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;  // a continuation byte
    if (++chars == max_chars) {
      // s[i] starts the last character there is room for: is there more after it?
      std::size_t end = i + 1;
      while (end < s.size() && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) ++end;
      if (end == s.size()) return std::string(s);
      return std::string(s.substr(0, i)) + "\u2026";
    }
  }
  return std::string(s);
}

}  // namespace swthrottle::delivery
