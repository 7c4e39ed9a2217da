#include "engine/rule_records.h"

#include <algorithm>
#include <array>
#include <string>

#include "engine/rule_state.h"

namespace swthrottle::engine {
namespace {

void fill_counts(Record& r, const RuleState& rs, std::span<const uint64_t> counts) {
  r.counts.assign(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(rs.rule->events.size()));
  r.count = 0;
  for (uint64_t c : r.counts) r.count += c;
}

// Renders the rule's message (if any) into r; values are the template fields
// of the line (count, suppressed and key are filled in from r).
void render_message(const RuleState& rs, Record& r, std::span<std::string_view> values) {
  const config::Rule& rule = *rs.rule;
  if (!rule.message) return;
  const std::string count_text = std::to_string(r.count), suppressed_text = std::to_string(r.suppressed);
  values[config::kFieldCount] = count_text;
  values[config::kFieldSuppressed] = suppressed_text;
  values[config::kFieldKey] = r.key;
  const std::size_t n = config::kFieldFirstCapture + std::min<std::size_t>(rule.capture_names.size(), 64);
  rule.message->render(r.message, values.first(std::min(n, values.size())));
  r.has_message = true;
}

}  // namespace

void rule_values(const RuleState& rs, std::span<std::string_view> values) {
  values[config::kFieldRule] = rs.rule->name;
  values[config::kFieldWindow] = rs.rule->window_text;
  values[config::kFieldThreshold] = rs.threshold_text;
}

Record make_record(RecordType type, const RuleState& rs, std::string_view key, int64_t now) {
  Record r;
  r.type = type;
  r.has_time = now >= 0;
  r.time_ms = now < 0 ? 0 : now;
  r.rule = rs.rule;
  r.key.assign(key);
  return r;
}

Record alert_record(RecordType type, RuleState& rs, std::string_view key, int64_t now, std::span<const uint64_t> counts,
                    uint64_t suppressed, std::span<std::string_view> values, std::string_view line, bool has_line) {
  Record r = make_record(type, rs, key, now);
  fill_counts(r, rs, counts);
  r.suppressed = suppressed;
  r.line = line;
  r.has_line = has_line;
  render_message(rs, r, values);
  (type == RecordType::Alert ? rs.stats().alerts : rs.stats().resolveds).add();
  return r;
}

Record resolved_record(RuleState& rs, std::string_view key, int64_t now, std::span<const uint64_t> counts,
                       uint64_t suppressed) {
  // No line at a boundary check: {line}, {event} and captures are empty.
  FieldValues values{};
  rule_values(rs, values);
  return alert_record(RecordType::Resolved, rs, key, now, counts, suppressed, values);
}

Record summary_record(const RuleState& rs, std::string_view key, int64_t now, const window::Summary& s,
                      std::span<const uint64_t> counts) {
  Record r = make_record(RecordType::Summary, rs, key, now);
  r.suppressed = s.suppressed;
  r.first_ms = s.first_ms;
  r.last_ms = s.last_ms;
  // Per event of the suppressed lines. A one-event rule's windows tally none:
  // every suppressed line matched its event. A tally missing for a rule of
  // more (pending from a state file of an older swthrottle) reads as zeros,
  // as the window writes it.
  const std::size_t n = rs.rule->events.size();
  if (n == 1) {
    r.counts.assign(1, s.suppressed);
  } else {
    r.counts.assign(n, 0);
    std::copy_n(counts.begin(), std::min(n, counts.size()), r.counts.begin());
  }
  return r;
}

void take_summary(RuleState& rs, window::Window& w, std::string_view key, int64_t now, std::vector<Record>& out) {
  std::array<uint64_t, 64> counts;
  const std::span<uint64_t> tally(counts.data(), rs.tallied_events);
  const window::Summary s = w.take_pending(tally);
  if (s.suppressed == 0) return;
  rs.stats().summaries.add();
  out.push_back(summary_record(rs, key, now, s, tally));
}

}  // namespace swthrottle::engine
