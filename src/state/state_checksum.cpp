#include "state/state_checksum.h"

#include <xxhash.h>

#include <cstdint>

#include <fmt/format.h>

namespace swthrottle::state {

namespace {

// What comes before the hex digits, and after them.
constexpr std::string_view kHead = ",\n\"checksum\":\"xxh3-64:";
constexpr std::string_view kTail = "\"}\n";
constexpr std::size_t kDigits = 16;

std::string hex_of(std::string_view bytes) {
  return fmt::format("{:016x}", static_cast<uint64_t>(XXH3_64bits(bytes.data(), bytes.size())));
}

bool lower_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// Whether `text` has a "checksum" member name anywhere: a quote that no
// backslash escapes (inside a JSON string every quote is escaped), the
// word, a quote, then blanks and a colon.
bool names_checksum(std::string_view text) {
  constexpr std::string_view kName = "\"checksum\"";
  for (std::size_t at = text.find(kName); at != std::string_view::npos; at = text.find(kName, at + 1)) {
    if (at > 0 && text[at - 1] == '\\') continue;
    std::size_t after = at + kName.size();
    while (after < text.size() &&
           (text[after] == ' ' || text[after] == '\t' || text[after] == '\n' || text[after] == '\r'))
      ++after;
    if (after < text.size() && text[after] == ':') return true;
  }
  return false;
}

// Whether `text` has the start of a checksum's value, "xxh3-64:, outside a
// string (inside one, its quote would be escaped).
bool has_marker(std::string_view text) {
  constexpr std::string_view kMarker = "\"xxh3-64:";
  for (std::size_t at = text.find(kMarker); at != std::string_view::npos; at = text.find(kMarker, at + 1))
    if (at == 0 || text[at - 1] != '\\') return true;
  return false;
}

}  // namespace

std::string seal(std::string text) {
  // "...}\n": the object's members, then the checksum of all of them.
  if (text.size() >= 2 && text.compare(text.size() - 2, 2, "}\n") == 0) text.resize(text.size() - 2);
  const std::string hex = hex_of(text);
  text += kHead;
  text += hex;
  text += kTail;
  return text;
}

SealCheck check_seal(std::string_view text) {
  const std::size_t sealed = kHead.size() + kDigits + kTail.size();
  if (text.size() >= sealed && text.substr(text.size() - kTail.size()) == kTail &&
      text.substr(text.size() - sealed, kHead.size()) == kHead) {
    const std::string_view body = text.substr(0, text.size() - sealed);
    const std::string_view digits = text.substr(text.size() - kTail.size() - kDigits, kDigits);
    if (!lower_hex(digits)) return {Seal::Bad, "its checksum is not 16 hex digits"};
    const std::string want = hex_of(body);
    if (digits != want)
      return {Seal::Bad, fmt::format("its content does not match its checksum (xxh3-64 {} in the file, {} of the "
                                     "content): it was changed after it was saved",
                                     digits, want)};
    return {Seal::Good, {}};
  }
  // A member named "checksum", or its value (one byte of the name damaged),
  // anywhere else: not a file from before checksums.
  if (names_checksum(text) || has_marker(text))
    return {Seal::Bad, "its \"checksum\" member is not the last line swthrottle writes (edited or reformatted?)"};
  return {Seal::Missing, {}};
}

}  // namespace swthrottle::state
