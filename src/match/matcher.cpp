#include "match/matcher.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "match/json_fields.h"
#include "util/utf8.h"

namespace swthrottle::match {

namespace {

// RE2's default (8 MiB) is meant for one pattern; the set holds every pattern
// of every rule. This is a cap on the compiled program and DFA cache, not an
// allocation: memory grows only as lines need new DFA states.
constexpr int64_t kSetMaxMem = int64_t{64} << 20;

// How a pattern matched the current line (a bit set).
constexpr uint8_t kViaUtf8 = 1;
constexpr uint8_t kViaLatin1 = 2;

// One entry of an event's `fields`, compiled.
struct FieldCheck {
  std::size_t slot = 0;     // in JsonFields
  std::string equals;       // when !re
  std::unique_ptr<RE2> re;  // { match = '...' }
  // The Latin-1 reading of `re`, for a field whose text is not UTF-8 (as a
  // line's; journald's arrays of bytes are such text); null when none.
  std::unique_ptr<RE2> latin1;
  std::vector<std::pair<uint32_t, int>> slot_group;  // (index in capture_names, group number)
  int nsubmatch = 0;
};

// One compiled pattern of the set: an event of a rule, or its ignore.
struct Pattern {
  uint32_t rule = 0;
  int32_t event = -1;  // -1: the rule's `ignore`
};

// The set of one reading of a line (UTF-8 or Latin-1).
struct Encoding {
  std::unique_ptr<RE2::Set> set;         // compiled by the plan, then a thread's (Plan::spare_*)
  std::vector<uint32_t> set_to_pattern;  // set index -> pattern index
};

}  // namespace

// What Matcher::make compiles from a rule set, read-only once made: one Plan
// per rule set's content (PlanCache), shared by the decider and every -j
// worker (each Matcher holds it). A thread searches with RE2 objects of its
// own (Matcher::Impl), compiled when it first needs one, because an RE2
// shared between threads makes them fight over its DFA cache's lock (RE2
// issue #569). The Plan keeps no RE2 per pattern: with a thousand rules a
// thread compiles only the few its lines make it search (the prefilter
// names them), and the sets only when a line needs them.
struct Matcher::Plan {
  struct RuleInfo {
    uint32_t first_pattern = 0;  // events are first_pattern + i; ignore follows them
    uint32_t num_events = 0;
    uint32_t num_captures = 0;
    int32_t ignore_pattern = -1;  // the rule's `ignore`, if any
    bool needs_captures = false;
    bool has_fields = false;  // some event has `fields`
    // An `ignore` that looks at a JSON field (Rule::ignore_field), not in the set.
    std::optional<std::size_t> ignore_check;  // index into ignore_checks
    // "{.path}" capture slots: (index in capture_names, JsonFields slot).
    std::vector<std::pair<uint32_t, std::size_t>> json_captures;
  };
  // For each event pattern: where its named groups go.
  struct EventGroups {
    std::vector<std::pair<uint32_t, int>> slot_group;  // (index in capture_names, group number)
    int nsubmatch = 0;                                 // highest group number needed + 1; 0 = none
  };

  Encoding utf8;
  Encoding latin1;
  std::vector<std::string> texts;   // per pattern: its text, for a thread's own RE2 and sets
  std::vector<uint8_t> has_latin1;  // per pattern: it has a Latin-1 reading (in latin1.set)
  RE2::Options utf8_options;
  RE2::Options latin1_options;
  std::vector<Pattern> patterns;  // in rule order, so sorting pattern ids sorts by rule
  std::vector<RuleInfo> rules;
  // Backtest: by rule, its candidate copies (config::Rule::matched_as), given its hits.
  std::vector<std::vector<uint32_t>> copies;
  bool has_copies = false;
  std::vector<EventGroups> groups;              // per pattern (empty for ignore patterns)
  std::vector<std::vector<FieldCheck>> checks;  // per pattern: its event's `fields` (each thread copies them)
  std::vector<FieldCheck> ignore_checks;        // RuleInfo::ignore_check (likewise)
  std::vector<std::string> json_paths;          // the JSON fields the rules name
  std::size_t max_captures = 0;
  int max_submatch = 0;

  std::optional<Prefilter> prefilter;   // each thread takes another() of it
  bool journal_rules = false;           // the rules' settings.journal (config::use_journal)
  std::vector<uint32_t> event_pattern;  // event number over all rules -> pattern index
  // Per pattern: the pattern itself when it is plain ASCII text without a
  // metacharacter, so that on an ASCII line "matches" is "contains"; else "".
  std::vector<std::string> literal;
  std::vector<uint8_t> fields_only;  // per pattern: an event with `fields` and no `match`

  // The compiled sets, for the first Matcher that needs a set: the others
  // compile their own (the lock guards only the hand-over).
  mutable std::mutex spare_mu;
  mutable std::unique_ptr<RE2::Set> spare_utf8;
  mutable std::unique_ptr<RE2::Set> spare_latin1;
};

namespace {

// A copy of a field check with RE2 objects of its own.
FieldCheck copy_check(const FieldCheck& c) {
  FieldCheck out;
  out.slot = c.slot;
  out.equals = c.equals;
  if (c.re) out.re = std::make_unique<RE2>(c.re->pattern(), c.re->options());
  if (c.latin1) out.latin1 = std::make_unique<RE2>(c.latin1->pattern(), c.latin1->options());
  out.slot_group = c.slot_group;
  out.nsubmatch = c.nsubmatch;
  return out;
}

}  // namespace

struct Matcher::Impl {
  using RuleInfo = Plan::RuleInfo;
  using EventGroups = Plan::EventGroups;

  std::shared_ptr<const Plan> plan;
  // The plan's, under the names the code below has always used.
  const std::vector<Pattern>& patterns;
  const std::vector<RuleInfo>& rules;
  const std::vector<std::vector<uint32_t>>& copies;
  const bool has_copies;
  const std::vector<EventGroups>& groups;
  const std::vector<uint32_t>& event_pattern;
  const std::vector<std::string>& literal;
  const std::vector<uint8_t>& fields_only;
  const bool journal_rules;

  // This thread's: sets made on first use, an RE2 per pattern (UTF-8
  // reading) made on first use, the field checks copied.
  std::unique_ptr<RE2::Set> own_set[2];  // [0] UTF-8, [1] Latin-1
  bool own_set_failed[2] = {false, false};
  std::vector<std::unique_ptr<RE2>> own_utf8;
  std::vector<std::unique_ptr<RE2>> own_latin1;
  std::vector<std::vector<FieldCheck>> checks;  // per pattern: its event's `fields`
  std::vector<FieldCheck> ignore_checks;        // RuleInfo::ignore_check

  // The JSON fields the rules name; empty when no rule names one.
  std::optional<JsonFields> json;
  config::InputFormat format = config::InputFormat::Auto;
  uint64_t invalid_json = 0;
  // The current line's JSON, read at most once and only when a rule asks.
  bool json_done = false;
  JsonFields::Read json_read = JsonFields::Read::Text;
  // Capture values that live in the parser's buffer, not in the line:
  // (index in MatchResult::captures, text), copied at the end of collect().
  std::vector<std::pair<std::size_t, std::string_view>> owned;

  // Scratch reused across lines.
  std::vector<int> ids;
  std::vector<uint8_t> via;       // per pattern: kViaUtf8 | kViaLatin1 for this line
  std::vector<uint32_t> matched;  // patterns with via != 0
  std::vector<re2::StringPiece> submatch;
  std::vector<uint8_t> filled;  // per capture slot of the current hit

  bool force_fallback = false;  // tests: take the out-of-memory path on every line

  std::optional<Prefilter> prefilter;
  std::vector<int32_t> verdict;  // per line of the batch in match_batch()

  explicit Impl(std::shared_ptr<const Plan> p)
      : plan(std::move(p)),
        patterns(plan->patterns),
        rules(plan->rules),
        copies(plan->copies),
        has_copies(plan->has_copies),
        groups(plan->groups),
        event_pattern(plan->event_pattern),
        literal(plan->literal),
        fields_only(plan->fields_only),
        journal_rules(plan->journal_rules) {
    own_utf8.resize(patterns.size());
    own_latin1.resize(patterns.size());
    checks.reserve(plan->checks.size());
    for (const auto& cs : plan->checks) {
      std::vector<FieldCheck> copied;
      for (const FieldCheck& c : cs) copied.push_back(copy_check(c));
      checks.push_back(std::move(copied));
    }
    for (const FieldCheck& c : plan->ignore_checks) ignore_checks.push_back(copy_check(c));
    if (!plan->json_paths.empty()) json.emplace(plan->json_paths);
    ids.reserve(patterns.size());
    via.assign(patterns.size(), 0);
    matched.reserve(patterns.size());
    submatch.resize(static_cast<std::size_t>(plan->max_submatch));
    filled.resize(plan->max_captures);
    if (plan->prefilter) prefilter.emplace(plan->prefilter->another());
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // This thread's RE2 for pattern p, UTF-8 reading.
  const RE2& utf8_re(uint32_t p) {
    std::unique_ptr<RE2>& re = own_utf8[p];
    if (!re) re = std::make_unique<RE2>(plan->texts[p], plan->utf8_options);
    return *re;
  }

  // This thread's RE2 for pattern p, Latin-1 reading (plan->has_latin1[p]).
  const RE2& latin1_re(uint32_t p) {
    std::unique_ptr<RE2>& re = own_latin1[p];
    if (!re) re = std::make_unique<RE2>(plan->texts[p], plan->latin1_options);
    return *re;
  }

  // This thread's set for one reading (0: UTF-8, 1: Latin-1): the plan's
  // spare when no thread has taken it yet (the Latin-1 one is compiled by
  // the thread that takes it), else compiled now. Null when it cannot be
  // compiled (then run() matches pattern by pattern).
  RE2::Set* own(int which) {
    if (own_set[which] || own_set_failed[which]) return own_set[which].get();
    {
      std::lock_guard lock(plan->spare_mu);
      own_set[which] = std::move(which == 0 ? plan->spare_utf8 : plan->spare_latin1);
    }
    if (own_set[which] && which == 1 && !own_set[which]->Compile()) {
      own_set[which].reset();
      own_set_failed[which] = true;
    }
    if (own_set[which] || own_set_failed[which]) return own_set[which].get();
    const Encoding& enc = which == 0 ? plan->utf8 : plan->latin1;
    RE2::Options options = which == 0 ? plan->utf8_options : plan->latin1_options;
    options.set_max_mem(kSetMaxMem);
    auto set = std::make_unique<RE2::Set>(options, RE2::UNANCHORED);
    bool ok = true;
    for (uint32_t p : enc.set_to_pattern) ok = ok && set->Add(plan->texts[p], nullptr) >= 0;
    if (ok && set->Compile()) own_set[which] = std::move(set);
    else own_set_failed[which] = true;
    return own_set[which].get();
  }

  void mark(uint32_t pattern, uint8_t how) {
    if (via[pattern] == 0) matched.push_back(pattern);
    via[pattern] |= how;
  }

  void run(int which, std::string_view line, uint8_t how) {
    const re2::StringPiece text(line.data(), line.size());
    RE2::Set* set = force_fallback ? nullptr : own(which);
    bool fallback = set == nullptr;
    if (!fallback) {
      // First ask only whether anything matches: without an index vector RE2
      // stops at the earliest match and allocates nothing, while Match with
      // one allocates a SparseSet per call and scans the whole line. Lines
      // that match nothing (most lines, for alert rules) then cost no
      // allocation; matching lines pay a second, partial scan. Measured on
      // OpenSSH_2k.log (110 bytes/line), 3 patterns, shared 2-core VM, -O2:
      // no match 740 -> 645 ns/line; every line matching 800 -> 1070 ns/line.
      RE2::Set::ErrorInfo err{RE2::Set::kNoError};
      if (set->Match(text, nullptr, &err) && set->Match(text, &ids, &err)) {
        for (int id : ids)
          mark((which == 0 ? plan->utf8 : plan->latin1).set_to_pattern[static_cast<std::size_t>(id)], how);
      } else if (err.kind != RE2::Set::kNoError) {
        // The set's DFA gave up (out of memory). One RE2 at a time falls back to
        // the NFA when its own DFA gives up, so this line still misses nothing.
        fallback = true;
      }
    }
    if (fallback) {
      for (uint32_t p = 0; p < patterns.size(); ++p) {
        if (which == 1 && !plan->has_latin1[p]) continue;  // no Latin-1 reading
        if (RE2::PartialMatch(text, which == 0 ? utf8_re(p) : latin1_re(p))) mark(p, how);
      }
    }
  }

  // The prefilter's potential events of an ASCII line (so the UTF-8 reading
  // is the only one), each searched on its own, then the `ignore` of each
  // rule they belong to: what the set would have found, at the cost of the
  // few patterns that can match rather than all of them.
  void run_events(std::span<const uint32_t> events, std::string_view line) {
    const re2::StringPiece text(line.data(), line.size());
    for (uint32_t k : events) {
      const uint32_t p = event_pattern[k];
      // An event with only `fields` needs no search of its stand-in: the
      // stand-in holds on every line where the fields can (see
      // config::make_stand_in), and the fields are checked next.
      const bool found = fields_only[p] || (literal[p].empty() ? RE2::PartialMatch(text, utf8_re(p))
                                                               : line.find(literal[p]) != std::string_view::npos);
      if (found) mark(p, kViaUtf8);
    }
    const std::size_t found = matched.size();
    uint32_t last_rule = UINT32_MAX;
    for (std::size_t i = 0; i < found; ++i) {
      const uint32_t r = patterns[matched[i]].rule;
      if (r == last_rule) continue;  // events come in rule order
      last_rule = r;
      const int32_t ig = rules[r].ignore_pattern;
      if (ig >= 0 && RE2::PartialMatch(text, utf8_re(static_cast<uint32_t>(ig))))
        mark(static_cast<uint32_t>(ig), kViaUtf8);
    }
  }

  // Turns the matched patterns into the rules' hits (and their captures).
  void collect(std::string_view line, MatchResult& out) {
    json_done = false;
    if (matched.empty()) return;
    // Patterns are numbered in rule order, so sorting groups them by rule.
    std::sort(matched.begin(), matched.end());
    for (std::size_t i = 0; i < matched.size();) {
      const uint32_t r = patterns[matched[i]].rule;
      const RuleInfo& info = rules[r];
      uint64_t events = 0;
      bool ignored = false;
      for (; i < matched.size() && patterns[matched[i]].rule == r; ++i) {
        const int32_t e = patterns[matched[i]].event;
        if (e < 0) {
          ignored = true;
        } else {
          events |= uint64_t{1} << e;
        }
      }
      if (!ignored && info.has_fields) events = hold_fields(line, info.first_pattern, events);
      if (!ignored && events != 0 && info.ignore_check) ignored = holds(line, ignore_checks[*info.ignore_check]);
      if (ignored || events == 0) continue;

      RuleHit hit;
      hit.rule = r;
      hit.events = events;
      hit.first_capture = static_cast<uint32_t>(out.captures.size());
      if (info.needs_captures) {
        out.captures.resize(out.captures.size() + info.num_captures);
        fill_captures(line, info, events, hit.first_capture, out);
      }
      out.hits.push_back(hit);
    }
    // The copies' hits after every rule's (copies are numbered after the
    // rules they copy, in that order): the hits stay in rule order.
    if (has_copies) {
      const std::size_t n = out.hits.size();
      for (std::size_t h = 0; h < n; ++h) {
        const RuleHit source = out.hits[h];
        if (source.rule >= copies.size()) continue;
        for (uint32_t c : copies[source.rule]) out.hits.push_back(RuleHit{c, source.events, source.first_capture});
      }
    }
    for (uint32_t p : matched) via[p] = 0;
    keep_owned(out);
  }

  // Reads the line's JSON the first time a rule asks for it.
  bool json_line(std::string_view line) {
    if (!json_done) {
      json_done = true;
      json_read = format == config::InputFormat::Text ? JsonFields::Read::Text : json->read(line);
      // json: every line is meant to be JSON, so one that does not even
      // start with '{' is as invalid as a broken one.
      if (format == config::InputFormat::Json && json_read == JsonFields::Read::Text)
        json_read = JsonFields::Read::Invalid;
      if (json_read == JsonFields::Read::Invalid) ++invalid_json;
    }
    return json_read == JsonFields::Read::Json;
  }

  // Whether one field condition holds on the line (false when it is not JSON).
  bool holds(std::string_view line, const FieldCheck& c) {
    if (!json_line(line)) return false;
    const std::optional<std::string_view> text = json->text(c.slot);
    if (!text) return false;
    if (!c.re) return *text == c.equals;
    const re2::StringPiece sp(text->data(), text->size());
    return RE2::PartialMatch(sp, *c.re) || (c.latin1 && !is_valid_utf8(*text) && RE2::PartialMatch(sp, *c.latin1));
  }

  // `events` minus those whose `fields` do not all hold on the line.
  uint64_t hold_fields(std::string_view line, uint32_t pattern_base, uint64_t events) {
    for (uint32_t e = 0; e < 64; ++e) {
      if ((events >> e & 1) == 0) continue;
      const std::vector<FieldCheck>& cs = checks[pattern_base + e];
      bool all = true;
      for (std::size_t i = 0; all && i < cs.size(); ++i) all = holds(line, cs[i]);
      if (!all) events &= ~(uint64_t{1} << e);
    }
    return events;
  }

  // Copies the capture values that point into the parser's buffer into
  // out.owned_text and points the captures there.
  void keep_owned(MatchResult& out) {
    if (owned.empty()) return;
    std::size_t size = 0;
    for (const auto& [at, text] : owned) size += text.size();
    out.owned_text.resize(size);
    std::size_t pos = 0;
    for (const auto& [at, text] : owned) {
      if (!text.empty()) std::memcpy(out.owned_text.data() + pos, text.data(), text.size());
      out.captures[at] = std::string_view(out.owned_text.data() + pos, text.size());
      pos += text.size();
    }
    owned.clear();
  }

  void fill_captures(std::string_view line, const RuleInfo& info, uint64_t events, std::size_t first,
                     MatchResult& out) {
    const uint32_t pattern_base = info.first_pattern;
    const std::span<std::string_view> values = std::span<std::string_view>(out.captures).subspan(first);
    std::fill(filled.begin(), filled.begin() + static_cast<std::ptrdiff_t>(values.size()), 0);
    std::size_t left = values.size();
    const re2::StringPiece text(line.data(), line.size());
    for (uint32_t e = 0; e < 64 && left > 0; ++e) {
      if ((events >> e & 1) == 0) continue;
      const uint32_t p = pattern_base + e;
      // The groups of its fields' patterns (names differ from the line's,
      // so which comes first within one event does not matter).
      for (const FieldCheck& c : checks[p]) {
        if (c.nsubmatch == 0) continue;
        const std::optional<std::string_view> value = json->text(c.slot);  // the event held: the line is JSON
        if (!value) continue;
        const re2::StringPiece field(value->data(), value->size());
        if (!c.re->Match(field, 0, field.size(), RE2::UNANCHORED, submatch.data(), c.nsubmatch) &&
            !(c.latin1 && !is_valid_utf8(*value) &&
              c.latin1->Match(field, 0, field.size(), RE2::UNANCHORED, submatch.data(), c.nsubmatch)))
          continue;
        for (const auto& [slot, group] : c.slot_group) {
          const re2::StringPiece& sp = submatch[static_cast<std::size_t>(group)];
          if (filled[slot] || sp.data() == nullptr) continue;
          owned.emplace_back(first + slot, std::string_view(sp.data(), sp.size()));
          filled[slot] = 1;
          --left;
        }
      }
      const EventGroups& g = groups[p];
      if (g.nsubmatch == 0) continue;
      // Prefer the UTF-8 reading when both found the event: it is what the
      // pattern means; the Latin-1 one is there for lines RE2 cannot decode.
      const RE2& re = (via[p] & kViaUtf8) ? utf8_re(p) : latin1_re(p);
      if (!re.Match(text, 0, text.size(), RE2::UNANCHORED, submatch.data(), g.nsubmatch)) continue;
      for (const auto& [slot, group] : g.slot_group) {
        const re2::StringPiece& sp = submatch[static_cast<std::size_t>(group)];
        // A group that did not take part has a null data pointer; one that
        // matched the empty string does not, and wins as "" on purpose.
        if (filled[slot] || sp.data() == nullptr) continue;
        values[slot] = std::string_view(sp.data(), sp.size());
        filled[slot] = 1;
        --left;
      }
    }
    // "{.path}": the field's text, "" when the line lacks it or is not JSON.
    for (const auto& [slot, json_slot] : info.json_captures) {
      if (!json_line(line)) break;
      if (const std::optional<std::string_view> value = json->text(json_slot)) owned.emplace_back(first + slot, *value);
    }
  }
};

void MatchResult::clear() {
  hits.clear();
  captures.clear();
  owned_text.clear();
}

Matcher::Matcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Matcher::Matcher(Matcher&&) noexcept = default;
Matcher& Matcher::operator=(Matcher&&) noexcept = default;
Matcher::~Matcher() = default;

namespace {

Result<std::shared_ptr<Matcher::Plan>> build_plan(const config::RuleSet& rules, bool all_captures, bool prefilter) {
  auto impl = std::make_shared<Matcher::Plan>();
  using Plan = Matcher::Plan;

  RE2::Options utf8_options;
  utf8_options.set_log_errors(false);
  RE2::Options latin1_options = utf8_options;
  latin1_options.set_encoding(RE2::Options::EncodingLatin1);
  RE2::Options utf8_set_options = utf8_options;
  utf8_set_options.set_max_mem(kSetMaxMem);
  RE2::Options latin1_set_options = latin1_options;
  latin1_set_options.set_max_mem(kSetMaxMem);
  impl->utf8_options = utf8_options;
  impl->latin1_options = latin1_options;
  impl->utf8.set = std::make_unique<RE2::Set>(utf8_set_options, RE2::UNANCHORED);
  impl->latin1.set = std::make_unique<RE2::Set>(latin1_set_options, RE2::UNANCHORED);

  std::size_t& max_captures = impl->max_captures;
  int& max_submatch = impl->max_submatch;
  std::vector<std::string>& json_paths = impl->json_paths;
  auto json_slot = [&json_paths](std::string_view path) {
    const auto it = std::find(json_paths.begin(), json_paths.end(), path);
    if (it != json_paths.end()) return static_cast<std::size_t>(it - json_paths.begin());
    json_paths.emplace_back(path);
    return json_paths.size() - 1;
  };
  for (uint32_t r = 0; r < rules.rules.size(); ++r) {
    const config::Rule& rule = rules.rules[r];
    auto fail = [&rule](std::string what) {
      return Error{rule.file, rule.line, 0, fmt::format("rule \"{}\": {}", rule.name, what)};
    };
    if (rule.matched_as) {
      // A backtest's candidate copy: no patterns of its own; collect() gives
      // it the hits (and capture slots) of the rule it copies, which comes
      // before it, as every copy comes after every rule that is matched.
      const uint32_t source = *rule.matched_as;
      if (source >= r || rules.rules[source].matched_as || rules.rules[source].events.size() != rule.events.size())
        return fail("a candidate copy must follow the rule it copies, with the same events");
      Plan::RuleInfo info = impl->rules[source];
      info.num_events = 0;
      info.ignore_pattern = -1;
      info.ignore_check.reset();
      info.json_captures.clear();
      impl->rules.push_back(info);
      impl->copies.resize(rules.rules.size());
      impl->copies[source].push_back(r);
      impl->has_copies = true;
      continue;
    }
    if (rule.events.size() > 64) {
      return fail(fmt::format("{} events; at most 64 are supported", rule.events.size()));
    }

    Plan::RuleInfo info;
    info.first_pattern = static_cast<uint32_t>(impl->patterns.size());
    info.num_events = static_cast<uint32_t>(rule.events.size());
    info.num_captures = static_cast<uint32_t>(rule.capture_names.size());
    for (uint32_t c = 0; c < info.num_captures; ++c) {
      const int field = config::kFieldFirstCapture + static_cast<int>(c);
      if (all_captures || (rule.key && rule.key->uses(field)) || (rule.message && rule.message->uses(field))) {
        info.needs_captures = true;
      }
    }
    max_captures = std::max<std::size_t>(max_captures, info.num_captures);
    for (uint32_t c = 0; c < info.num_captures; ++c) {
      const std::string& name = rule.capture_names[c];
      if (name.size() > 1 && name.front() == '.') info.json_captures.emplace_back(c, json_slot(name.substr(1)));
    }

    auto add = [&](const std::string& pattern, int32_t event) -> std::optional<Error> {
      const auto index = static_cast<uint32_t>(impl->patterns.size());
      const std::string where = event >= 0
                                    ? fmt::format("event \"{}\"", rule.events[static_cast<std::size_t>(event)].name)
                                    : std::string("ignore");
      std::string error;
      if (impl->utf8.set->Add(pattern, &error) < 0) {
        return fail(fmt::format("{}: invalid pattern: {}", where, error));
      }
      impl->utf8.set_to_pattern.push_back(index);

      // The event's named groups, from an RE2 compiled for that alone: only
      // a pattern that has one is compiled (the loader compiled each pattern
      // already, config::compile_regex; the set has parsed it).
      Plan::EventGroups groups;
      if (event >= 0 && (pattern.find("(?P<") != std::string::npos || pattern.find("(?<") != std::string::npos)) {
        auto re = std::make_unique<RE2>(pattern, utf8_options);
        if (!re->ok()) return fail(fmt::format("{}: invalid pattern: {}", where, re->error()));
        for (const auto& [name, group] : re->NamedCapturingGroups()) {
          const auto it = std::find(rule.capture_names.begin(), rule.capture_names.end(), name);
          if (it == rule.capture_names.end()) continue;
          groups.slot_group.emplace_back(static_cast<uint32_t>(it - rule.capture_names.begin()), group);
          groups.nsubmatch = std::max(groups.nsubmatch, group + 1);
        }
        max_submatch = std::max(max_submatch, groups.nsubmatch);
      }
      // Not kept: each thread compiles its own from the text (Impl::utf8_re).
      impl->texts.push_back(pattern);

      // A pattern that only makes sense as UTF-8 (`\x{263a}`) has no Latin-1
      // reading; on a line that is not UTF-8 it gets the UTF-8 reading only.
      // (The set parses it as an RE2 of these options would; each thread
      // compiles that RE2 when a line first needs it, Impl::latin1_re.)
      if (impl->latin1.set->Add(pattern, nullptr) >= 0) {
        impl->latin1.set_to_pattern.push_back(index);
        impl->has_latin1.push_back(1);
      } else {
        impl->has_latin1.push_back(0);
      }
      std::vector<FieldCheck> checks;
      if (event >= 0) {
        for (const config::FieldCondition& fc : rule.events[static_cast<std::size_t>(event)].fields) {
          FieldCheck c;
          c.slot = json_slot(fc.path);
          if (fc.regex) {
            c.re = std::make_unique<RE2>(fc.value, utf8_options);
            if (!c.re->ok())
              return fail(fmt::format("{}: field {}: invalid pattern: {}", where, fc.path, c.re->error()));
            c.latin1 = std::make_unique<RE2>(fc.value, latin1_options);
            if (!c.latin1->ok()) c.latin1.reset();
            for (const auto& [name, group] : c.re->NamedCapturingGroups()) {
              const auto it = std::find(rule.capture_names.begin(), rule.capture_names.end(), name);
              if (it == rule.capture_names.end()) continue;
              c.slot_group.emplace_back(static_cast<uint32_t>(it - rule.capture_names.begin()), group);
              c.nsubmatch = std::max(c.nsubmatch, group + 1);
            }
            max_submatch = std::max(max_submatch, c.nsubmatch);
          } else {
            c.equals = fc.value;
          }
          checks.push_back(std::move(c));
        }
      }
      impl->checks.push_back(std::move(checks));
      impl->patterns.push_back(Pattern{r, event});
      impl->groups.push_back(std::move(groups));
      const bool plain = !pattern.empty() && std::all_of(pattern.begin(), pattern.end(), [](char ch) {
        const auto u = static_cast<unsigned char>(ch);
        return u >= 0x20 && u < 0x7F && std::strchr("\\.+*?()|[]{}^$", ch) == nullptr;
      });
      impl->literal.push_back(plain ? pattern : std::string());
      impl->fields_only.push_back(event >= 0 && rule.events[static_cast<std::size_t>(event)].match.empty() ? 1 : 0);
      return std::nullopt;
    };
    for (uint32_t e = 0; e < info.num_events; ++e) {
      impl->event_pattern.push_back(static_cast<uint32_t>(impl->patterns.size()));
      if (!rule.events[e].fields.empty()) info.has_fields = true;
      if (auto err = add(config::line_pattern(rule.events[e]), static_cast<int32_t>(e))) return *err;
    }
    if (!rule.ignore.empty() && !rule.ignore_field.empty()) {
      FieldCheck c;
      c.slot = json_slot(rule.ignore_field);
      c.re = std::make_unique<RE2>(rule.ignore, utf8_options);
      if (!c.re->ok()) return fail(fmt::format("ignore: invalid pattern: {}", c.re->error()));
      c.latin1 = std::make_unique<RE2>(rule.ignore, latin1_options);
      if (!c.latin1->ok()) c.latin1.reset();
      info.ignore_check = impl->ignore_checks.size();
      impl->ignore_checks.push_back(std::move(c));
    } else if (!rule.ignore.empty()) {
      info.ignore_pattern = static_cast<int32_t>(impl->patterns.size());
      if (auto err = add(rule.ignore, -1)) return *err;
    }
    impl->rules.push_back(info);
  }

  // The UTF-8 set is compiled now, so that one too large for RE2 is an error
  // at the start; the Latin-1 set (a program no larger) when a line first
  // needs it (Impl::own): most logs have no line that is not UTF-8.
  if (!impl->utf8.set->Compile()) {
    return Error{"", 0, 0,
                 fmt::format("the rules' patterns are too large for RE2 to compile into one set "
                             "(limit {} MiB); simplify them or split them over fewer rules",
                             kSetMaxMem >> 20)};
  }

  if (prefilter) impl->prefilter.emplace(Prefilter::make(rules));
  impl->journal_rules = rules.settings.journal;
  impl->spare_utf8 = std::move(impl->utf8.set);
  impl->spare_latin1 = std::move(impl->latin1.set);
  return impl;
}

// Everything of a rule set that build_plan reads, as bytes: two rule sets
// with the same key give the same Plan. (A key of the content, not of the
// RuleSet's address: a reload with the same rules shares too, and a rule set
// made at a freed one's address is never mistaken for it.)
std::string plan_key(const config::RuleSet& rules, bool all_captures, bool prefilter) {
  std::string k;
  auto put = [&k](std::string_view s) {
    const auto n = static_cast<uint64_t>(s.size());
    k.append(reinterpret_cast<const char*>(&n), sizeof n);
    k.append(s);
  };
  auto put_n = [&k](uint64_t n) { k.append(reinterpret_cast<const char*>(&n), sizeof n); };
  put_n((all_captures ? 1 : 0) | (prefilter ? 2 : 0) | (rules.settings.journal ? 4 : 0));
  put_n(rules.rules.size());
  for (const config::Rule& rule : rules.rules) {
    put(rule.name);
    put(rule.file);
    put_n(static_cast<uint64_t>(rule.line));
    put_n(rule.matched_as ? uint64_t{*rule.matched_as} + 1 : 0);
    put(rule.ignore);
    put(rule.ignore_field);
    put_n(rule.capture_names.size());
    for (std::size_t c = 0; c < rule.capture_names.size(); ++c) {
      put(rule.capture_names[c]);
      const int field = config::kFieldFirstCapture + static_cast<int>(c);
      put_n(((rule.key && rule.key->uses(field)) ? 1 : 0) | ((rule.message && rule.message->uses(field)) ? 2 : 0));
    }
    put_n(rule.events.size());
    for (const config::Event& e : rule.events) {
      put(e.name);
      put(e.match);
      put(config::line_pattern(e));
      put_n(e.fields.size());
      for (const config::FieldCondition& f : e.fields) {
        put(f.path);
        put(f.value);
        put_n(f.regex ? 1 : 0);
      }
    }
  }
  return k;
}

// The plans in use, by plan_key: the decider and every -j worker of a
// generation ask at about the same time; the first compiles, the others wait
// for it and share. A plan lives as long as a Matcher holds it.
struct PlanCache {
  struct Entry {
    std::mutex mu;  // held while compiling
    bool done = false;
    Result<std::shared_ptr<Matcher::Plan>> made = Error{"", 0, 0, "not compiled"};
  };
  std::mutex mu;
  std::unordered_map<std::string, std::weak_ptr<Entry>> entries;

  Result<std::shared_ptr<const Matcher::Plan>> get(const config::RuleSet& rules, bool all_captures, bool prefilter) {
    std::string key = plan_key(rules, all_captures, prefilter);
    std::shared_ptr<Entry> e;
    {
      std::lock_guard lock(mu);
      std::weak_ptr<Entry>& slot = entries[key];
      e = slot.lock();
      if (!e) {
        e = std::make_shared<Entry>();
        slot = e;
      }
      // Forget expired entries now and then, so the map stays small.
      if (entries.size() > 64) std::erase_if(entries, [](const auto& kv) { return kv.second.expired(); });
    }
    std::lock_guard lock(e->mu);
    if (!e->done) {
      e->made = build_plan(rules, all_captures, prefilter);
      e->done = true;
    }
    if (!e->made) return e->made.error();
    // A handle on the plan that owns its entry: the entry (and the plan in
    // it) lives as long as some Matcher holds the plan.
    return std::shared_ptr<const Matcher::Plan>(e, e->made->get());
  }
};

PlanCache& plan_cache() {
  static PlanCache* cache = new PlanCache;  // never destroyed: threads may still ask at exit
  return *cache;
}

}  // namespace

Result<Matcher> Matcher::make(const config::RuleSet& rules, bool all_captures, bool prefilter) {
  auto plan = plan_cache().get(rules, all_captures, prefilter);
  if (!plan) return plan.error();
  return Matcher(std::make_unique<Impl>(std::move(*plan)));
}

void Matcher::force_fallback_for_test(bool on) { impl_->force_fallback = on; }

void Matcher::match_batch(std::string_view text, std::span<const LineSpan> lines, std::span<MatchResult> out) {
  Impl& m = *impl_;
  if (!m.prefilter || !m.prefilter->active()) {
    for (std::size_t i = 0; i < lines.size(); ++i) match(text.substr(lines[i].first, lines[i].second), out[i]);
    return;
  }
  m.prefilter->scan(text, lines, m.verdict);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const int32_t v = m.verdict[i];
    const std::string_view line = text.substr(lines[i].first, lines[i].second);
    if (v == Prefilter::kAll) {
      match(line, out[i]);
      continue;
    }
    out[i].clear();
    if (v == Prefilter::kNone) continue;
    m.matched.clear();
    m.run_events(m.prefilter->potentials(v), line);
    m.collect(line, out[i]);
  }
}

void Matcher::set_format(config::InputFormat format) { impl_->format = format; }
void Matcher::set_byte_arrays(bool on) {
  if (impl_->json) impl_->json->set_byte_arrays(on);
  // A prefilter made for rules not marked journal does not know that a
  // field's text may be an array of bytes (no literal of it in the line).
  if (on && !impl_->journal_rules) impl_->prefilter.reset();
}

uint64_t Matcher::take_invalid_json() { return std::exchange(impl_->invalid_json, 0); }

bool Matcher::needs_captures(uint32_t r) const { return r < impl_->rules.size() && impl_->rules[r].needs_captures; }

void Matcher::match(std::string_view line, MatchResult& out) {
  out.clear();
  Impl& m = *impl_;
  if (m.patterns.empty()) return;

  m.matched.clear();
  m.run(0, line, kViaUtf8);
  // Anything RE2's UTF-8 mode might read differently from what the bytes
  // mean gets the extra Latin-1 reading, which can only add matches.
  if (!is_valid_utf8(line)) m.run(1, line, kViaLatin1);
  m.collect(line, out);
}

}  // namespace swthrottle::match
