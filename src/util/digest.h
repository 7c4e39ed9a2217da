// digest: 32 hex digits naming a text: two FNV-1a 64-bit hashes of it, with
// different offsets. Stable on every host and build, so hosts agree on it
// (fleet hash keys) and a restart agrees with the run before (delivery ids).
// Not a security boundary: anyone can make two texts with one digest.
#pragma once

#include <string>
#include <string_view>

namespace swthrottle {

std::string digest(std::string_view text);

}  // namespace swthrottle
