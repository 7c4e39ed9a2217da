// JsonFields: the fields rules name (`fields`, "{.path}" templates), read
// from one JSON log line with simdjson's on-demand parser (DESIGN.md §1).
//
// One pass over the line's top-level object reads only the keys on the way
// to a named path; every other value is skipped unparsed. What counts:
// - A line is JSON when, after blanks, it starts with '{' and is one object
//   the parser walks to its end without error (keys are unescaped before
//   they are compared; only the values on a named path are fully checked).
// - A field's text: a string's unescaped text (\u escapes and surrogate
//   pairs decoded); a number, true, false or null as its JSON text ("500",
//   "1.5e3", "true", "null"). An array or object has no text: conditions on
//   it do not hold and "{.path}" renders it "".
// - With set_byte_arrays(true) (journal input), an array of integers 0-255
//   has text: those bytes (journald sends a MESSAGE that is not UTF-8 as
//   [104,105,255]). Any other array still has none. An empty array is "".
// - Paths are dotted: "a.b" is {"a":{"b":..}}. A key that itself holds a dot
//   cannot be named.
// - Duplicate keys: the first occurrence wins (per named path).
// - Lenient strings (Read::Repaired): a line that is an object but for what
//   is inside its strings (bytes that are not UTF-8, overlong forms,
//   encoded surrogates, raw control bytes such as ESC, a lone \ud800 or
//   another escape JSON does not have, \uZZZZ) is read all the same, so that
//   one bad byte in a field a client controls (a user name, a user agent)
//   does not hide the line from every field rule. Its strings are decoded
//   as far as they can be: the escapes JSON has are decoded, a lone
//   surrogate escape reads as U+FFFD (it has no UTF-8 form), any other bad
//   escape stays as written (backslash included), and bad bytes stay as they
//   are, to be matched as UTF-8 and as Latin-1 as a line is. Anything wrong
//   outside a string (the structure) still makes the line Invalid.
//
// Allocation: the line is copied into a padded buffer that only grows
// (simdjson reads up to SIMDJSON_PADDING bytes past a document), and the
// parser reuses its own buffers: steady state allocates nothing (a repaired
// line's decoded strings go to buffers that only grow too).
//
// Not thread-safe: one JsonFields per Matcher.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace swthrottle::match {

class JsonFields {
 public:
  // Slot i of text() is paths[i] (dotted, without a leading ".").
  explicit JsonFields(std::span<const std::string> paths);
  JsonFields(JsonFields&&) noexcept;
  JsonFields& operator=(JsonFields&&) noexcept;
  ~JsonFields();

  enum class Read {
    Text,      // does not start with '{' (after blanks): not tried
    Json,      // an object; text() holds its named fields
    Repaired,  // an object but for its strings, read leniently (above); text() holds its named fields
    Invalid,   // starts with '{' but is not a JSON object
  };
  // Reads `line` (without its '\n'). After anything but Json or Repaired,
  // every slot is missing.
  Read read(std::string_view line);

  // The text of slot i after read() returned Json or Repaired, or nullopt when the line
  // lacks the field or it is an array or object. Valid until the next read().
  std::optional<std::string_view> text(std::size_t slot) const;

  // Arrays of integers 0-255 read as bytes (journald's form for text that is
  // not UTF-8); off by default, when an array never has text.
  void set_byte_arrays(bool on);

  // The slot of `path`, or -1.
  int slot_of(std::string_view path) const;

  // True when `line` starts, after blanks, with '{': what "auto" tries as JSON.
  static bool looks_like_json(std::string_view line);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace swthrottle::match
