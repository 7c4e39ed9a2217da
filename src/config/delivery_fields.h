// The fields of a record as delivery templates see them (man page:
// DELIVERY, "Templates"): a destination's `body`, a rule's `annotations` and
// `generator_url`. Unlike `key` and `message`, which the engine renders
// from a line's captures, these are rendered when a record is delivered,
// from what the record says.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace swthrottle::config {

enum DeliveryField : int {
  kDfId = 0,     // the record's id (output/record_id.h)
  kDfType,       // alert | resolved | summary
  kDfTime,       // RFC 3339 UTC, or "" before any log time
  kDfRule,       // the rule's name
  kDfKind,       // the rule's kind: alert | throttle
  kDfKey,        // "" for a rule without key
  kDfCount,      // alert, resolved: the window's count
  kDfCounts,     // "failed=5, invalid=2", every event of the rule
  kDfThreshold,  // Y of threshold ("" with when)
  kDfWhen,       // the when text ("" with threshold)
  kDfWindow,     // as written
  kDfSuppressed,
  kDfMessage,  // the rendered message ("" without one)
  kDfLine,     // an alert's triggering line ("" else)
  kDfFirst,    // summary: the first and last suppressed line's times
  kDfLast,
  kDfSummary,   // the message, or else "RULE: COUNT in WINDOW" (summaries: "RULE: N suppressed")
  kDfHost,      // this machine's host name
  kDfDedupKey,  // stable per rule and key: what PagerDuty and Opsgenie dedup on
  kDeliveryFieldCount,
};

// Names by DeliveryField id.
const std::vector<std::string>& delivery_field_names();

// The id of a field name, or -1.
int delivery_field(std::string_view name);

}  // namespace swthrottle::config
