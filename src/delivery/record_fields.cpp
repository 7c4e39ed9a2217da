#include "delivery/record_fields.h"

#include <fmt/format.h>

#include "config/delivery_fields.h"
#include "util/digest.h"
#include "util/json.h"

namespace swthrottle::delivery {
namespace {

std::string rfc3339(int64_t ms) {
  std::string out;
  append_rfc3339_ms(out, ms);
  return out;
}

std::string counts_text(const engine::Record& r, const config::Rule& rule) {
  std::string out;
  for (std::size_t i = 0; i < r.counts.size() && i < rule.event_names.size(); ++i) {
    if (i > 0) out += ", ";
    out += fmt::format("{}={}", rule.event_names[i], r.counts[i]);
  }
  return out;
}

std::string summary_text(const engine::Record& r, const config::Rule& rule) {
  if (r.type == engine::RecordType::Summary)
    return fmt::format("{}: {} suppressed in {}", rule.name, r.suppressed, rule.window_text);
  if (r.has_message) return r.message;
  return fmt::format("{}: {} in {}", rule.name, r.count, rule.window_text);
}

}  // namespace

std::string dedup_key(const engine::Record& r) {
  return digest(fmt::format("swthrottle-alert-1\n{}\n{}", r.rule != nullptr ? r.rule->name : "", r.key));
}

std::vector<std::string> record_fields(const engine::Record& r, std::string_view id, std::string_view host) {
  using namespace config;
  static const Rule kNoRule;
  const Rule& rule = r.rule != nullptr ? *r.rule : kNoRule;
  std::vector<std::string> f(kDeliveryFieldCount);
  f[kDfId] = std::string(id);
  f[kDfType] = std::string(engine::to_string(r.type));
  f[kDfTime] = r.has_time ? rfc3339(r.time_ms) : "";
  f[kDfRule] = rule.name;
  f[kDfKind] = std::string(to_string(rule.kind));
  f[kDfKey] = r.key;
  f[kDfCount] = std::to_string(r.count);
  f[kDfCounts] = counts_text(r, rule);
  f[kDfThreshold] = rule.threshold ? std::to_string(*rule.threshold) : "";
  f[kDfWhen] = rule.when_text;
  f[kDfWindow] = rule.window_text;
  f[kDfSuppressed] = std::to_string(r.suppressed);
  f[kDfMessage] = r.has_message ? r.message : "";
  f[kDfLine] = r.type == engine::RecordType::Alert && r.has_line ? std::string(r.line) : "";
  f[kDfFirst] = r.type == engine::RecordType::Summary ? rfc3339(r.first_ms) : "";
  f[kDfLast] = r.type == engine::RecordType::Summary ? rfc3339(r.last_ms) : "";
  f[kDfSummary] = summary_text(r, rule);
  f[kDfHost] = std::string(host);
  f[kDfDedupKey] = dedup_key(r);
  return f;
}

}  // namespace swthrottle::delivery
