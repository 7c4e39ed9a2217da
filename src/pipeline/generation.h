// Generation: one loaded rule set with its engine. Every line is matched and
// decided with the generation in force when it is read; a SIGHUP makes a new
// one (app/app.h), and old ones stay alive until exit because records and
// deciders may still point into them.
#pragma once

#include <memory>
#include <optional>

#include "config/rules.h"
#include "engine/engine.h"
#include "match/logtime.h"

namespace swthrottle::pipeline {

struct Generation {
  std::unique_ptr<config::RuleSet> rules;
  std::unique_ptr<engine::Engine> engine;
  std::optional<match::LogTime> logtime;  // time = log only; each matching thread copies it
};

}  // namespace swthrottle::pipeline
