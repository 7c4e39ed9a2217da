// The line matcher: which events of which rules a line is (DESIGN.md §1), minus
// `ignore`, plus the capture values that key and message templates need.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "config/rules.h"
#include "match/envelope_fields.h"
#include "match/prefilter.h"
#include "util/result.h"

namespace swthrottle::match {

struct RuleHit {
  uint32_t rule = 0;           // index into RuleSet::rules
  uint64_t events = 0;         // bit i: rule.events[i] matched (<= 64 events per rule)
  uint32_t first_capture = 0;  // index into MatchResult::captures of this hit's capture values
};

struct MatchResult {
  // Rules with >= 1 event matched and not ignored, in rule order.
  std::vector<RuleHit> hits;
  // Per hit: rule.capture_names.size() views into the line ("" when absent);
  // only filled when the rule needs captures (Matcher::needs_captures), so a
  // hit of a rule that needs none owns no slots here.
  std::vector<std::string_view> captures;
  // The text of captures taken from JSON fields (unescaped, so not in the
  // line); a vector so that moving a MatchResult keeps the views valid.
  std::vector<char> owned_text;

  // Keeps the capacity: a MatchResult reused across lines stops allocating.
  void clear();
};

// Matches lines against every event and `ignore` pattern of a RuleSet at once.
//
// Contract:
// - A line counts for every event of a rule whose `match` finds it anywhere in
//   the line (unanchored; `^`/`$` are the ends of the line, which has no `\n`;
//   a multi-line event (input/event_grouper.h) is one "line" whose lines are
//   joined by `\n`: `^`/`$` are then its ends, and `.` stops at a `\n`),
//   unless the rule's `ignore` also finds it: then the rule gets no hit at all.
// - Bytes are bytes: NUL is an ordinary character. A line that is valid UTF-8
//   is matched with UTF-8 semantics (`.` is one code point, `\p{L}` works). A
//   line that is not valid UTF-8 is matched both as UTF-8 and byte-wise as
//   Latin-1, and a pattern matches if either reading finds it. RE2 in UTF-8
//   mode lets no class match a stray byte, so `from \S+ port` would otherwise
//   silently miss "from j\xF6rg port"; the Latin-1 reading sees every byte as
//   one character, as fail2ban's decoding with replacement does, while the
//   UTF-8 reading keeps `caf. ok` matching "café ok" on such a line. The
//   same holds for a JSON field's text (`fields`, and under --input journal
//   `match` and `ignore` on MESSAGE, whose arrays of bytes are often not
//   UTF-8).
// - Captures (only for rules whose key or message template uses one): each
//   name takes its value from the first matched event, in event order, that
//   defines the name and where the group took part in the match; else "".
// - Never misses a match: if RE2's set DFA runs out of memory on a line, that
//   line is matched pattern by pattern instead (RE2 falls back to its NFA).
// - Allocation: our own buffers are reused, so steady state allocates nothing
//   here. RE2 itself allocates a small index set inside RE2::Set::Match when a
//   line matches something (no API avoids it in RE2 2022-06-01), and its
//   capture engines may use scratch memory.
//
// Not thread-safe, and not to be shared: give each thread its own Matcher.
// RE2 objects are safe to share, but their lazily built DFA state is guarded
// by one mutex per object, which threads then fight over (RE2 issue #569).
// What is read-only is shared, though: make() compiles a rule set once (the
// pattern table, the checks, the prefilter's vectorscan database) and every
// Matcher made for a rule set of the same content while one is alive shares
// it (the decider and each -j worker of a generation). Each Matcher compiles
// the RE2 objects it searches with on first use, so a line that only ever
// needs a few of a thousand patterns compiles only those.
class Matcher {
 public:
  // Compiles all event and ignore patterns of all rules. The patterns were
  // validated at load, so an error here means RE2 ran out of memory for the set.
  // With all_captures (for --explain), every rule gets its capture values.
  // With prefilter, match_batch() runs the literal prefilter (prefilter.h)
  // ahead of RE2 when it can help; results are the same either way.
  static Result<Matcher> make(const config::RuleSet& rules, bool all_captures = false, bool prefilter = true);

  // What make() compiles once per rule set and shares (matcher_plan.h).
  struct Plan;

  Matcher(Matcher&&) noexcept;
  Matcher& operator=(Matcher&&) noexcept;
  ~Matcher();
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;

  // Matches one line (without its `\n`); `out` is cleared and refilled, and
  // its views point into `line`. `stream`: the line's, when it is the
  // payload of a container runtime's log (envelope_fields.h).
  void match(std::string_view line, MatchResult& out, Stream stream = Stream::None);

  // Matches every line of a batch: `text` holds the lines, each followed by
  // a '\n' that `lines` excludes; out[i] (out.size() >= lines.size()) gets
  // what match() would give for line i. Lines the prefilter rules out cost
  // one shared SIMD pass over the batch and no RE2 search.
  // `streams`, if not empty, holds each line's Stream (as its uint8_t).
  void match_batch(std::string_view text, std::span<const LineSpan> lines, std::span<MatchResult> out,
                   std::span<const uint8_t> streams = {});

  // The pod of this input's container log ({.k8s.namespace}, ...), from
  // its path (input/k8s_path.h); lines with a stream answer with it.
  void set_origin(PodOrigin origin);

  // How this matcher's input is read (DESIGN.md §1 `format`): Text never reads
  // lines as JSON; Auto reads those that start with '{'; Json reads every
  // line, and one that is not a JSON object counts in invalid_json().
  // Either way a line that is not JSON is matched as text: its `fields`
  // conditions do not hold, `match` still does. A line that is JSON but for
  // what is inside its strings is read leniently (json_fields.h) and counts
  // in take_repaired_json() instead.
  void set_format(config::InputFormat format);

  // Journal input (--input journal): a field that is an array of integers
  // 0-255 reads as those bytes (JsonFields::set_byte_arrays). Meant for
  // rules through config::use_journal; for others, it turns the literal
  // prefilter off (it would not know of such fields).
  void set_byte_arrays(bool on);

  // Lines read as JSON that were not, since the last call (only lines some
  // rule's `fields` or "{.path}" asked about are read); resets the count.
  uint64_t take_invalid_json();
  // Lines read as JSON whose strings held what JSON does not allow (a byte
  // that is not UTF-8, a raw control byte, a bad escape), read leniently
  // (JsonFields::Read::Repaired), since the last call; resets the count.
  uint64_t take_repaired_json();

  // True when rule r needs capture values (its key or message template uses a
  // capture field).
  bool needs_captures(uint32_t r) const;

 private:
  struct Impl;
  friend struct MatcherTestPeer;  // tests force the out-of-memory fallback path

  explicit Matcher(std::unique_ptr<Impl> impl);
  // Matches every line pattern by pattern, as after the set ran out of memory
  // (which no small test can provoke: RE2 checks the set's DFA budget at Compile).
  void force_fallback_for_test(bool on);

  std::unique_ptr<Impl> impl_;
};

}  // namespace swthrottle::match
