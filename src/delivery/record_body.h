// A record as a webhook gets it (man page: DELIVERY): the JSON body, and
// the Idempotency-Key of a batch.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/record.h"

namespace swthrottle::delivery {

// The record as --format json writes it (DESIGN.md §5), one object, with "id"
// (output/record_id.h) first; no final newline.
std::string webhook_body(const engine::Record& r, std::string_view id);

// A batch's Idempotency-Key: the id itself for one record, else a digest of
// the ids in order.
std::string batch_key(const std::vector<std::string_view>& ids);

}  // namespace swthrottle::delivery
