// The checksum of a --state file (DESIGN.md §7: never a silent wrong answer):
// a state file that was changed after it was saved (a digit flipped by a
// disk, an editor, a careless script) is damage, moved aside like a file
// that is not JSON, rather than loaded to change what the next run writes.
// Range and order checks (state_validation.h) catch values no run writes;
// only a checksum catches a plausible one (alert_suppressed 3 where it was 2).
//
// Format: the file's JSON object (state_codec.h) ends with one more member,
// written last, on a line of its own:
//
//   ...,
//   "checksum":"xxh3-64:0123456789abcdef"}
//
// the XXH3 64-bit hash (xxHash, seed 0) of every byte of the file before the
// ",\n" that starts that line, in lowercase hex. Not a signature: anyone can
// write a matching one; it tells damage from data.
//
// Files written before the checksum existed have none. Such a file is loaded
// once with a notice (the next save adds one), so that an upgrade does not
// throw away the windows of every running throttle; see the man page
// (FILES). One whose "checksum" member is not the one swthrottle writes
// (edited, reformatted by jq) is damage.
#pragma once

#include <string>
#include <string_view>

namespace swthrottle::state {

// `text`, one JSON object ending in "}\n", with the checksum member added.
std::string seal(std::string text);

enum class Seal {
  Good,     // the checksum matches the bytes before it
  Missing,  // no checksum member: a file from before it existed
  Bad,      // a checksum that does not match, or a "checksum" member not as written
};
struct SealCheck {
  Seal seal = Seal::Missing;
  std::string why;  // Bad: what is wrong, for "state file PATH: WHY; moved aside ..."
};
SealCheck check_seal(std::string_view text);

}  // namespace swthrottle::state
