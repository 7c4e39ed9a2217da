#include "backtest/alert_tally.h"

namespace swthrottle::backtest {

bool AlertTally::write(std::span<const engine::Record> records, std::string_view /*explain*/) {
  std::lock_guard lock(mu_);
  for (const engine::Record& r : records) {
    if (r.rule == nullptr) continue;
    const auto index = static_cast<std::size_t>(r.rule - rules_.rules.data());
    if (r.type == engine::RecordType::Summary && index < summaries_.size()) {
      ++summaries_[index][r.key];
      continue;
    }
    if (r.type != engine::RecordType::Alert) continue;
    alert_ = true;
    if (index >= marks_.size() || marks_[index].size() >= kMaxMarks) continue;
    marks_[index].push_back(AlertMark{r.time_ms, r.key, r.count});
  }
  return true;
}

bool AlertTally::wrote_alert() {
  std::lock_guard lock(mu_);
  return alert_;
}

std::vector<AlertMark> AlertTally::take(std::size_t r) {
  std::lock_guard lock(mu_);
  return r < marks_.size() ? std::move(marks_[r]) : std::vector<AlertMark>{};
}

uint64_t AlertTally::summaries(std::size_t r, std::string_view key) {
  std::lock_guard lock(mu_);
  if (r >= summaries_.size()) return 0;
  const auto it = summaries_[r].find(std::string(key));
  return it == summaries_[r].end() ? 0 : it->second;
}

}  // namespace swthrottle::backtest
