// Hand-built rules for tests of code that reads a Rule but does not load one
// (output rendering, exec jobs): the fields those readers use, nothing else.
#pragma once

#include <cstdint>

#include "config/rules.h"

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

}  // namespace swthrottle::test
