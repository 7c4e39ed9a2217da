// The delivery fields of a record (config/delivery_fields.h): the values a
// `body`, an annotation or a generator_url template inserts, and the dedup
// key of a rule and key.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/record.h"

namespace swthrottle::delivery {

// By config::DeliveryField id; raw text (a body's serializer escapes it).
std::vector<std::string> record_fields(const engine::Record& r, std::string_view id, std::string_view host);

// 32 hex digits of the rule's name and the key: the same for an alert and
// its resolved record, on every host and across restarts, so PagerDuty's
// dedup_key and Opsgenie's alias close what they opened.
std::string dedup_key(const engine::Record& r);

}  // namespace swthrottle::delivery
