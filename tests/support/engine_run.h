// EngineRun: one Engine over one rules text, fed lines with explicit times
// (as a time = "log" replay feeds it), the records it writes as text:
//   alert|resolved t=T RULE key=K count=N counts=[..] suppressed=N [|LINE|]
//   summary t=T RULE key=K suppressed=N
// (lines that are written are left out). For the tests of watched rules and
// sequences (tests/unit/watch_*_test.cpp).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/rules.h"
#include "engine/engine.h"
#include "match/matcher.h"

namespace swthrottle::test {

inline std::string describe_record(const engine::Record& r) {
  using engine::RecordType;
  if (r.type == RecordType::Line) return "";
  std::string s =
      std::string(engine::to_string(r.type)) + " t=" + std::to_string(r.time_ms) + " " + r.rule->name + " key=" + r.key;
  if (r.type == RecordType::Summary) return s + " suppressed=" + std::to_string(r.suppressed) + "\n";
  s += " count=" + std::to_string(r.count) + " counts=[";
  for (std::size_t i = 0; i < r.counts.size(); ++i) s += (i ? "," : "") + std::to_string(r.counts[i]);
  s += "] suppressed=" + std::to_string(r.suppressed);
  if (r.has_line) s += " |" + std::string(r.line) + "|";
  return s + "\n";
}

class EngineRun {
 public:
  explicit EngineRun(const std::string& toml) {
    auto r = config::parse_rules(toml, "rules.toml");
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().str()) << "\n" << toml);
    rules_ = std::make_unique<config::RuleSet>(std::move(*r));
    auto m = match::Matcher::make(*rules_);
    REQUIRE(m.ok());
    matcher_.emplace(std::move(*m));
    engine_ = std::make_unique<engine::Engine>(*rules_, engine::EngineOptions{});
  }

  std::string line(const std::string& text, int64_t t, std::vector<engine::ExplainEntry>* explain = nullptr) {
    matcher_->match(text, m_);
    engine_->offer(engine::LineEvent{text, true, t}, m_, out_, explain);
    return records();
  }
  std::string tick(int64_t t) {
    engine_->tick(t, out_);
    return records();
  }
  std::string finish() {
    engine_->finish(out_);
    return records();
  }

  // The records of the last call (a line's view its text: keep it alive).
  const std::vector<engine::Record>& last() const { return out_; }
  engine::Engine& engine() { return *engine_; }
  const config::RuleSet& rules() const { return *rules_; }

 private:
  std::string records() {
    std::string s;
    for (const auto& r : out_) s += describe_record(r);
    return s;
  }
  std::unique_ptr<config::RuleSet> rules_;
  std::optional<match::Matcher> matcher_;
  std::unique_ptr<engine::Engine> engine_;
  match::MatchResult m_;
  std::vector<engine::Record> out_;
};

}  // namespace swthrottle::test
