// Base64 (RFC 4648 §4, the standard alphabet, padded): how the state file
// stores strings that are not UTF-8.
#pragma once

#include <string>
#include <string_view>

namespace swthrottle {

// Appends the padded encoding of `bytes`.
void append_base64(std::string& out, std::string_view bytes);

// Decodes `text` into `out` (replacing its content). Strict, so that every
// byte string has exactly one encoding: padded to a multiple of 4, no
// whitespace, and the bits below the last character must be zero. Returns
// false (with `out` unspecified) for anything else.
bool decode_base64(std::string_view text, std::string& out);

}  // namespace swthrottle
