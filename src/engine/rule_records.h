// The records a rule writes (DESIGN.md §5), built from its state: alerts,
// resolveds and summaries with their counts, template fields and message.
// The one place a rule's pending summary is taken (end of input, eviction,
// reload). Internal to src/engine/.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "config/rules.h"
#include "engine/record.h"
#include "window/window.h"

namespace swthrottle::engine {

struct RuleState;

// Room for a rule's template fields: the built-ins, then up to 64 captures.
using FieldValues = std::array<std::string_view, 64 + config::kFieldFirstCapture>;

// {rule}, {window} and {threshold} of the rule's templates.
void rule_values(const RuleState& rs, std::span<std::string_view> values);

Record make_record(RecordType type, const RuleState& rs, std::string_view key, int64_t now);

// An alert or resolved record with the window's `counts`, its held-back
// `suppressed` and, for an alert, the line that raised it; counted in the
// rule's stats. `values`: the template fields of the line (none at a
// boundary check).
Record alert_record(RecordType type, RuleState& rs, std::string_view key, int64_t now, std::span<const uint64_t> counts,
                    uint64_t suppressed, std::span<std::string_view> values, std::string_view line = {},
                    bool has_line = false);

// A resolved record at a boundary check (no line), counted.
Record resolved_record(RuleState& rs, std::string_view key, int64_t now, std::span<const uint64_t> counts,
                       uint64_t suppressed);

// A throttle's summary. `counts`: its per-event counts, as the window wrote
// them (unread for a rule of one event, whose windows tally none).
Record summary_record(const RuleState& rs, std::string_view key, int64_t now, const window::Summary& s,
                      std::span<const uint64_t> counts);

// A throttle window's pending summary, taken out of `w` and appended to
// `out` (counted), if any line was held back.
void take_summary(RuleState& rs, window::Window& w, std::string_view key, int64_t now, std::vector<Record>& out);

}  // namespace swthrottle::engine
