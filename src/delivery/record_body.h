// A record as a destination gets it (man page: DELIVERY): its stable id, and
// a webhook's JSON body.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/record.h"

namespace swthrottle::delivery {

// 32 hex digits from what the record says (type, rule, key, time, counts):
// the same record decided again (a restart that replays, another host with
// the same log) gets the same id, so a receiver can drop it.
std::string record_id(const engine::Record& r);

// The record as --format json writes it (DESIGN.md §5), one object, with "id"
// first; no final newline.
std::string webhook_body(const engine::Record& r, std::string_view id);

// Several bodies as one JSON array (a batch).
std::string json_array(const std::vector<std::string_view>& bodies);

// A batch's Idempotency-Key: the id itself for one record, else a digest of
// the ids in order.
std::string batch_key(const std::vector<std::string_view>& ids);

}  // namespace swthrottle::delivery
