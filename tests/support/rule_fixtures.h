// Hand-built rules for tests of code that reads a Rule but does not load one
// (output rendering, exec jobs): the fields those readers use, nothing else.
#pragma once

#include <cstdint>
#include <string>

#include "config/rules.h"
#include "engine/record.h"

namespace swthrottle::test {

inline constexpr int64_t kT0 = 1'795'255'205'000;  // 2026-11-21T10:00:05.000Z

inline config::Rule make_ssh() {
  config::Rule r;
  r.name = "ssh-bruteforce";
  r.window_text = "1m";
  r.threshold = 5;
  r.event_names = {"failed", "invalid"};
  return r;
}

inline config::Rule make_ratio() {
  config::Rule r;
  r.name = "nginx-5xx-ratio";
  r.window_text = "5m";
  r.when_text = "error / request > 0.05 and request >= 100";
  r.event_names = {"request", "error"};
  return r;
}

inline config::Rule make_flood() {
  config::Rule r;
  r.name = "flood";
  r.kind = config::RuleKind::Throttle;
  r.window_text = "10s";
  r.threshold = 100;
  r.event_names = {"any"};
  return r;
}

// A record of `rule` for the delivery tests: count 7 (events 5 and 2), 3 held back.
inline engine::Record delivery_record(const config::Rule& rule, engine::RecordType type, int64_t t,
                                      std::string key = "10.0.0.1") {
  engine::Record r;
  r.type = type;
  r.time_ms = t;
  r.rule = &rule;
  r.key = std::move(key);
  r.count = 7;
  r.counts = {5, 2};
  r.suppressed = 3;
  return r;
}

}  // namespace swthrottle::test
