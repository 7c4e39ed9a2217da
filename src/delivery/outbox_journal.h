// The outbox journal's codec (outbox.h has the format and what each entry
// means): a Delivery to a journal line and back, and a whole journal's text
// to the entries it holds. Pure: no file, no state; Outbox does both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "delivery/delivery.h"

namespace swthrottle::delivery {

enum class EntryKind { Add, Done, Try };

struct JournalEntry {
  EntryKind kind = EntryKind::Add;
  Delivery d;  // id and destination always; the rest as the kind has them
  // An add of an earlier version, whose "to" held the URL ("webhook URL"):
  // read as its preset and origin; the journal is rewritten without it.
  bool legacy_to = false;
};

// One line each, with its final "\n".
std::string add_line(const Delivery& d);
std::string done_line(const std::string& id, uint32_t destination);
std::string try_line(const Delivery& d);

// One journal line (without its "\n"), or nullopt when it is not an entry:
// not JSON, or not one of the three shapes with every member it needs.
std::optional<JournalEntry> parse_entry(std::string_view line);

// What a journal's text holds. Only lines that end in "\n" count; the last
// one is also dropped when it is not an entry (a crash cut it short, or a
// write that failed could not be cut back). A bad line in the middle cannot
// come from a crash: it is skipped and counted, the rest kept.
struct JournalText {
  std::vector<JournalEntry> entries;   // in file order
  std::size_t keep_bytes = 0;          // up to the end of the last whole entry: the rest is a torn tail
  std::size_t lines = 0;               // entries and the bad lines between them
  std::size_t skipped = 0;             // bad lines before the last entry
  std::size_t first_skipped_line = 0;  // 1-based; 0: none
  bool legacy_to = false;              // some entry's legacy_to
};
JournalText read_journal(std::string_view text);

}  // namespace swthrottle::delivery
