// CountObserver: what `swthrottle backtest` watches of the engine
// (backtest/count_profile.h): the window count each decision left. The
// engine calls it only when one is set (Engine::observe), on the deciding
// thread, for every timed line a rule counted (not late ones).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

namespace swthrottle::engine {

class CountObserver {
 public:
  virtual ~CountObserver() = default;
  // Rule `rule` (an index into the engine's RuleSet) counted a line of `key`
  // at t_ms; its window now holds `count` (alert rules: all events summed).
  // `memo`, when not null, is a word the engine keeps with that rule's key
  // for the observer (0 until the observer writes it): where the observer
  // keeps the key, found again without a lookup. Only the observer reads or
  // writes it, on the deciding threads.
  virtual void counted(uint32_t rule, std::string_view key, int64_t t_ms, uint64_t count,
                       std::atomic<uint32_t>* memo) = 0;
  // Whether counted() and will_count() are wanted for rule `rule`: asked
  // once per rule, when the observer is set.
  virtual bool observes(uint32_t /*rule*/) const { return true; }
  // Rule `rule` found the key whose word is `memo` and will count a line of
  // it once it has decided: the observer may start fetching what it keeps.
  virtual void will_count(uint32_t /*rule*/, const std::atomic<uint32_t>& /*memo*/) {}
};

}  // namespace swthrottle::engine
