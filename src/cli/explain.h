// --explain: a line's rule hits and what each rule decided, phrased for a
// person. The engine hands over values (engine::ExplainedLine, Decision);
// every sentence is made here.
#pragma once

#include <string>

#include "engine/engine.h"

namespace swthrottle::cli {

// The block for one line that matched at least one rule.
std::string explain_line(const engine::ExplainedLine& line);

// One rule's decision, as the text after " -> ".
std::string explain_decision(const config::RuleSet& rules, const engine::ExplainEntry& e);

}  // namespace swthrottle::cli
