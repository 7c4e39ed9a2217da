// Generation: one loaded rule set with its engine. Every line is matched and
// decided with the generation in force when it is read; a SIGHUP makes a new
// one (app/app.h), and old ones stay alive until exit because records and
// deciders may still point into them.
#pragma once

#include <fnmatch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/rules.h"
#include "engine/engine.h"
#include "fleet/rule_fleet.h"
#include "match/logtime.h"

namespace swthrottle::pipeline {

struct Generation {
  std::unique_ptr<config::RuleSet> rules;
  std::unique_ptr<engine::Engine> engine;
  std::optional<match::LogTime> logtime;  // time = log only; each matching thread copies it
  // time = log: one per [[settings.input]] entry (rules->settings.inputs), in order.
  std::vector<match::LogTime> input_logtimes;
  // --input journal: JSON fields that are arrays of bytes read as text.
  bool journal = false;
  // No `time` was set and the run decides by arrival time: why
  // (app/default_time.h), for the notice of timestamps that arrival time
  // ignores (ignored_stamps.h). Empty: `time` was set, or is log.
  std::string arrival_by_default;
  // Rules with `fleet`: the engine's link to the fleet (fleet/rule_fleet.h),
  // attached by the App. Null without fleet rules.
  std::unique_ptr<fleet::RuleFleet> fleet;

  // The settings of the input named `input` as the command line gives it
  // (called when a decider or a -j worker takes up a generation, not per
  // line): the first [[settings.input]] whose path matches decides, and what
  // it does not set comes from [settings].

  // The timestamp reader. Null with time = arrival.
  const match::LogTime* logtime_for(const std::string& input) const {
    if (!logtime) return nullptr;
    const config::InputTime* e = input_entry(input);
    if (e == nullptr) return &*logtime;
    return &input_logtimes[static_cast<std::size_t>(e - rules->settings.inputs.data())];
  }
  const config::TimestampSpec& timestamp_for(const std::string& input) const {
    return setting_for(input, &config::InputTime::timestamp, rules->settings.timestamp);
  }
  const config::TimezoneSpec& timezone_for(const std::string& input) const {
    return setting_for(input, &config::InputTime::timezone, rules->settings.timezone);
  }
  // How its lines are read.
  config::InputFormat format_for(const std::string& input) const {
    return setting_for(input, &config::InputTime::format, rules->settings.format);
  }
  // How its lines are grouped into events (input/event_grouper.h), whatever
  // time is.
  const config::MultilineSpec& multiline_for(const std::string& input) const {
    return setting_for(input, &config::InputTime::multiline, rules->settings.multiline);
  }

  // The first [[settings.input]] entry whose path matches `input` (null: none).
  const config::InputTime* input_entry(const std::string& input) const {
    for (const config::InputTime& e : rules->settings.inputs)
      if (::fnmatch(e.path.c_str(), input.c_str(), 0) == 0) return &e;
    return nullptr;
  }

 private:
  template <typename T>
  const T& setting_for(const std::string& input, std::optional<T> config::InputTime::*field, const T& fallback) const {
    const config::InputTime* e = input_entry(input);
    return e != nullptr && (e->*field) ? *(e->*field) : fallback;
  }
};

}  // namespace swthrottle::pipeline
