// Redaction: a message about a destination (an error libcurl gave, the
// first line of what a receiver answered) with the destination's secrets
// taken out before it reaches stderr, the stats or a dead letter. A
// receiver may echo a token it refuses; libcurl may name the URL.
#pragma once

#include <string>
#include <vector>

namespace swthrottle::delivery {

// `text` with every occurrence of each secret (Destination::secrets())
// replaced by "<redacted>", longest secrets first.
std::string redact(std::string text, std::vector<std::string> secrets);

}  // namespace swthrottle::delivery
