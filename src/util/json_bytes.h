// Bytes in a JSON document (the --state file, the delivery outbox): a JSON
// string when they are valid UTF-8, else {"base64":"..."}, so that any
// bytes (NUL, invalid UTF-8) read back exactly and the document stays valid
// for nlohmann's strict serializer.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace swthrottle {

nlohmann::ordered_json json_bytes(std::string_view s);

// The bytes of such a value into out; false when it is neither form (or the
// base64 is invalid).
bool read_json_bytes(const nlohmann::json& j, std::string& out);

}  // namespace swthrottle
