// Prefilter: which lines of a batch could match an event of any rule, found
// by one pass over the whole batch instead of one RE2 search per line.
//
// RE2's FilteredRE2 works out, from each event pattern as RE2 itself parses
// it, an AND/OR formula over literal strings ("atoms") that every match must
// contain: `ERROR .* timeout` needs "error " and " timeout". vectorscan
// (Hyperscan) finds every occurrence of every atom in the batch in one SIMD
// scan; a line is a candidate when the atoms it contains satisfy the formula
// of at least one pattern. Only candidates go on to the RE2 set, so RE2 stays
// the semantics: the prefilter can only say "this line cannot match".
//
// Why that never drops a match:
// - FilteredRE2 guarantees that a pattern with a formula cannot match a text
//   in which the formula is false, with atoms matched case-insensitively.
//   vectorscan's caseless literal mode folds ASCII only, so:
// - a line with any byte >= 0x80 is always a candidate (Unicode case folding
//   maps e.g. the Kelvin sign to "k", and the Latin-1 reading of invalid
//   UTF-8 is a different parse of the line altogether);
// - the prefilter is off (every line a candidate) when any event pattern has
//   no formula (`\d+ ms`: nothing literal is required) or an atom holds a
//   byte >= 0x80, when the set has no events, when vectorscan cannot compile
//   the atoms or does not support this CPU.
// - Lines are scanned with a '\n' after each, so an atom can only be seen
//   across two lines (a needless candidate), never missed inside one.
//
// An event's `fields` (JSON lines) add literals too: a field's text is in
// the raw line, JSON-escaped. Each field gives the literals of its pattern
// (or its equality's value) when they are all printable ASCII but '/';
// atoms holding '"' or '\' are scanned in both spellings (as is, and as
// JSON escapes them: a needless candidate at worst). Else the field gives
// its key ("msg" as "\"msg\"", when it is plain). Since any character may
// be written "\u00XX", a line holding "\u" is a candidate for every event,
// and so, under --input journal (fields may be arrays of bytes), is a line
// holding '[' then a digit or a blank. An event with only `fields` and none
// of these has no formula: the prefilter is off.
//
// Allocation: scan() reuses its buffers; the formulas are evaluated once per
// new combination of atoms (FilteredRE2 allocates there) and the answer is
// remembered, up to kMemoEntries combinations.
//
// Not thread-safe: one Prefilter per thread (each has its own scratch and
// memo). What make() compiles (the formulas, the vectorscan database) is
// read-only and shared: another() gives a thread its own Prefilter over it
// without compiling again, which is what keeps a large rule set's start-up
// and memory from growing with -j.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/rules.h"

namespace swthrottle::match {

// A line of a batch: its offset in the batch text and its length.
using LineSpan = std::pair<std::size_t, std::size_t>;

class Prefilter {
 public:
  static constexpr std::size_t kMemoEntries = 4096;

  // Never fails: a Prefilter that cannot help is inactive (see reason()).
  // The vectorscan database is compiled at the first scan() of any Prefilter
  // sharing it, not here (--check lists the literals without it); should
  // that fail, active() turns false and every line is a candidate.
  static Prefilter make(const config::RuleSet& rules);

  Prefilter(Prefilter&&) noexcept;
  Prefilter& operator=(Prefilter&&) noexcept;
  ~Prefilter();
  Prefilter(const Prefilter&) = delete;
  Prefilter& operator=(const Prefilter&) = delete;

  // A Prefilter over the same compiled database and formulas, with a scratch
  // and memo of its own: for another thread. Safe to call while this one scans.
  Prefilter another() const;

  // False: every line is a candidate, and scan() need not be called.
  bool active() const;
  // Why it is inactive ("" when active), for --stats and tests.
  const std::string& reason() const;
  // The literals scanned for (lowercase), for tests and --check.
  const std::vector<std::string>& atoms() const;

  // What scan() found for one line.
  static constexpr int32_t kNone = -1;  // no event can match it
  static constexpr int32_t kAll = -2;   // any event may match it (bytes >= 0x80; inactive prefilter)
  // Otherwise: an index for potentials().

  // `text` holds the batch's lines, each followed by a '\n' (which `lines`
  // excludes). verdict[i] is set for line i (resized to lines.size()).
  void scan(std::string_view text, std::span<const LineSpan> lines, std::vector<int32_t>& verdict);

  // The events whose formula line i's atoms satisfy, for a verdict >= 0: event
  // numbers counted over all rules in file order (rule 0's events first),
  // ascending, never empty. Valid until the Prefilter is destroyed.
  std::span<const uint32_t> potentials(int32_t verdict) const;

 private:
  struct Compiled;
  struct Impl;
  explicit Prefilter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace swthrottle::match
