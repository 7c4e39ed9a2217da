// The fingerprint of a rule: the --state identity (SPEC §6: "a rule whose
// definition changed starts fresh").
#pragma once

#include <string>

namespace swthrottle::config {

struct Rule;

// The --state identity of a rule as it is now (after --mode overrides, say).
std::string fingerprint(const Rule& rule);

}  // namespace swthrottle::config
