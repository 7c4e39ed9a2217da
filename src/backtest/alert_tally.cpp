#include "backtest/alert_tally.h"

namespace swthrottle::backtest {

bool AlertTally::write(std::span<const engine::Record> records, std::string_view /*explain*/) {
  std::lock_guard lock(mu_);
  for (const engine::Record& r : records) {
    if (r.type != engine::RecordType::Alert || r.rule == nullptr) continue;
    alert_ = true;
    const auto index = static_cast<std::size_t>(r.rule - rules_.rules.data());
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

}  // namespace swthrottle::backtest
