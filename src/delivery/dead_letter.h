// A dead letter: one line of the outbox's STATE.dead (outbox.h), for people
// and tools, so every field is readable text.
#pragma once

#include <cstdint>
#include <string>

#include "delivery/delivery.h"

namespace swthrottle::delivery {

// {"id":...,"dest":N,"to":LABEL,"kind":PRESET,"created":RFC3339,"attempts":N,"why":...,"time":RFC3339,
//  "body":"..."}
// and its "\n". "time" is `now_wall_ms`. The body is a string always, with
// invalid UTF-8 shown as U+FFFD; when that changed it, "body_base64" holds
// its exact bytes as well.
std::string dead_letter_line(const Delivery& d, const std::string& why, int64_t now_wall_ms);

}  // namespace swthrottle::delivery
