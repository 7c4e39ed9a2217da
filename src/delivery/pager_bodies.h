// The requests paging presets send (man page: DELIVERY, "Presets"):
// PagerDuty's Events API v2 and Opsgenie's Alert API. An alert record opens
// an alert, its resolved record closes it, by a key of the rule and the
// record's key (dedup_key()) that both carry. Built as JSON values from a
// RecordView; every text is within the service's limits.
#pragma once

#include <string>

#include "delivery/record_view.h"

namespace swthrottle::delivery {

// PagerDuty, an alert record: {"event_action": "trigger", "dedup_key",
// "payload": {"summary", "source", "severity", "timestamp", "component",
// "custom_details"}, "client", "links"}; a resolved record:
// {"event_action": "resolve", "dedup_key"}. No routing_key: the request
// builder puts it in when it sends, so that no outbox or dead letter holds
// it. severity: the `severity` label when it is critical, error, warning
// or info, else error.
std::string pagerduty_body(const RecordView& v);

// Opsgenie, an alert record (POST /v2/alerts): {"message", "alias",
// "description", "details", "entity", "source"}.
std::string opsgenie_create_body(const RecordView& v);
// Opsgenie, a resolved record: the body and path of a close by alias,
// POST /v2/alerts/ALIAS/close?identifierType=alias.
std::string opsgenie_close_body(const RecordView& v);
std::string opsgenie_close_path(const RecordView& v);

}  // namespace swthrottle::delivery
