// The CRI log format (DESIGN.md §1 `format = "cri"`): what the kubelet's
// container runtimes (containerd, CRI-O) write to /var/log/pods/.../N.log,
// one record per line:
//
//   TIMESTAMP SP STREAM SP TAGS SP CONTENT
//   2026-01-01T00:00:00.123456789Z stderr F {"level":"error",...}
//
// TIMESTAMP is RFC 3339 with nanoseconds and an offset (the node's zone:
// "Z" or "+01:00"); STREAM is stdout or stderr; TAGS are ':'-separated and
// the first is F (the line ends here) or P (partial: containerd splits a
// line longer than max_container_log_line_size, 16 KiB by default, into P
// records closed by an F, and writes a last line that has no newline as a
// lone P). CONTENT is the rest of the line, possibly empty.
#pragma once

#include <string_view>

#include "input/envelope_record.h"

namespace swthrottle::input {

// Reads one line (without its "\n") as a CRI record: true, with `rec` and
// `content` (a view into `line`), or false when the line is not one.
bool read_cri(std::string_view line, EnvelopeRecord& rec, std::string_view& content);

}  // namespace swthrottle::input
