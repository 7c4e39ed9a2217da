// RecordView: a record as the presets see it (man page: DELIVERY,
// "Presets"), and the words they show people: a title, a text and facts.
// Pure; the presets build their bodies from it.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "delivery/alert_attributes.h"
#include "engine/record.h"

namespace swthrottle::delivery {

struct RecordView {
  const engine::Record& record;
  std::span<const std::string> fields;  // record_fields()
  Attributes labels;                    // alert_labels()
  Attributes annotations;               // alert_annotations()
  std::string generator_url;            // "" : none
};

// "alert ssh-bruteforce key=203.0.113.9" (" key=..." left out for "").
std::string record_title(const RecordView& v);

// What happened, in a line: for an alert the message, else the triggering
// line, else "7 in 1m"; for a resolved record "0 in 1m now" (its message
// is rendered without a line, so its captures are empty); for a summary
// "120 lines suppressed from T1 to T2".
std::string record_text(const RecordView& v);

// count (or, for a summary, suppressed), threshold or when, window,
// suppressed, counts, time, host, then the labels the rules and [delivery]
// give and the rule's own annotations, in that order; empty values left out.
std::vector<std::pair<std::string, std::string>> record_facts(const RecordView& v);

// The first `max_chars` code points of valid UTF-8 `s`, with "…" as the
// last of them when it was cut.
std::string cut_text(std::string_view s, std::size_t max_chars);

}  // namespace swthrottle::delivery
