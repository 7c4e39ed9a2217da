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

  // The timestamp reader of the input named `input` as the command line
  // gives it: the first [[settings.input]] whose path matches, else
  // [settings]'s. Null with time = arrival. Called when a decider or a -j
  // worker takes up a generation, not per line.
  const match::LogTime* logtime_for(const std::string& input) const {
    if (!logtime) return nullptr;
    const int i = input_entry(input);
    return i < 0 ? &*logtime : &input_logtimes[static_cast<std::size_t>(i)];
  }

  // The timestamp and timezone settings of that input (as logtime_for's).
  const config::TimestampSpec& timestamp_for(const std::string& input) const {
    const int i = input_entry(input);
    const auto& entries = rules->settings.inputs;
    return i >= 0 && entries[static_cast<std::size_t>(i)].timestamp ? *entries[static_cast<std::size_t>(i)].timestamp
                                                                    : rules->settings.timestamp;
  }
  const config::TimezoneSpec& timezone_for(const std::string& input) const {
    const int i = input_entry(input);
    const auto& entries = rules->settings.inputs;
    return i >= 0 && entries[static_cast<std::size_t>(i)].timezone ? *entries[static_cast<std::size_t>(i)].timezone
                                                                   : rules->settings.timezone;
  }

  // How the lines of `input` are read: the first [[settings.input]] whose
  // path matches, if it sets `format`, else [settings]'s.
  config::InputFormat format_for(const std::string& input) const {
    for (const config::InputTime& entry : rules->settings.inputs) {
      if (::fnmatch(entry.path.c_str(), input.c_str(), 0) != 0) continue;
      if (entry.format) return *entry.format;
      break;
    }
    return rules->settings.format;
  }

  // How the lines of that input are grouped into events (input/event_grouper.h):
  // the first [[settings.input]] whose path matches, if it sets multiline,
  // else [settings]'s. (All entries count here, whatever time is.)
  const config::MultilineSpec& multiline_for(const std::string& input) const {
    for (const auto& e : rules->settings.inputs) {
      if (::fnmatch(e.path.c_str(), input.c_str(), 0) != 0) continue;
      if (e.multiline) return *e.multiline;
      break;
    }
    return rules->settings.multiline;
  }

  // The first [[settings.input]] entry whose path matches `input` (-1: none).
  int input_entry(const std::string& input) const {
    const auto& entries = rules->settings.inputs;
    for (std::size_t i = 0; i < entries.size() && i < input_logtimes.size(); ++i) {
      if (::fnmatch(entries[i].path.c_str(), input.c_str(), 0) == 0) return static_cast<int>(i);
    }
    return -1;
  }
};

}  // namespace swthrottle::pipeline
