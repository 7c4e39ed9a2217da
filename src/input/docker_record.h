// Docker's json-file log format (DESIGN.md §1 `format = "docker"`): what
// dockerd writes to /var/lib/docker/containers/ID/ID-json.log, one JSON
// object per line, its keys in this order:
//
//   {"log":"TEXT\n","stream":"stdout","attrs":{...},"time":"2026-01-01T00:00:00.123456789Z"}
//
// "log" is the container's line with its "\n", JSON-escaped (dockerd also
// escapes <, > and & as \u003c...); a line longer than dockerd's 16 KiB
// buffer is split into records whose "log" has no "\n" until the last. Keys
// that would be empty are left out ("log", "stream"); "attrs" comes only
// with --log-opt labels/env/tag; "time" is UTC with nanoseconds.
#pragma once

#include <string>
#include <string_view>

#include "input/envelope_record.h"

namespace swthrottle::input {

// Reads one line (without its "\n") as a json-file record: true, with `rec`
// and the unescaped log text appended to `text` (without the "\n" that ends
// a whole line, nor a "\r" before it); false, with `text` as it was, when
// the line is not one.
bool read_docker(std::string_view line, EnvelopeRecord& rec, std::string& text);

}  // namespace swthrottle::input
