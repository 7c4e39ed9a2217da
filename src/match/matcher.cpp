#include "match/matcher.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <string>
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

// Everything compiled for one reading of a line (UTF-8 or Latin-1).
struct Encoding {
  std::unique_ptr<RE2::Set> set;
  std::vector<uint32_t> set_to_pattern;   // set index -> pattern index
  std::vector<std::unique_ptr<RE2>> res;  // per pattern; null when it cannot be read this way
};

}  // namespace

struct Matcher::Impl {
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
  std::vector<Pattern> patterns;  // in rule order, so sorting pattern ids sorts by rule
  std::vector<RuleInfo> rules;
  // Backtest: by rule, its candidate copies (config::Rule::matched_as), given its hits.
  std::vector<std::vector<uint32_t>> copies;
  bool has_copies = false;
  std::vector<EventGroups> groups;              // per pattern (empty for ignore patterns)
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
  bool journal_rules = false;           // the rules' settings.journal (config::use_journal)
  std::vector<int32_t> verdict;         // per line of the batch in match_batch()
  std::vector<uint32_t> event_pattern;  // event number over all rules -> pattern index
  // Per pattern: the pattern itself when it is plain ASCII text without a
  // metacharacter, so that on an ASCII line "matches" is "contains"; else "".
  std::vector<std::string> literal;
  std::vector<uint8_t> fields_only;  // per pattern: an event with `fields` and no `match`

  void mark(uint32_t pattern, uint8_t how) {
    if (via[pattern] == 0) matched.push_back(pattern);
    via[pattern] |= how;
  }

  void run(const Encoding& enc, std::string_view line, uint8_t how) {
    const re2::StringPiece text(line.data(), line.size());
    bool fallback = force_fallback;
    if (!fallback) {
      // First ask only whether anything matches: without an index vector RE2
      // stops at the earliest match and allocates nothing, while Match with
      // one allocates a SparseSet per call and scans the whole line. Lines
      // that match nothing (most lines, for alert rules) then cost no
      // allocation; matching lines pay a second, partial scan. Measured on
      // OpenSSH_2k.log (110 bytes/line), 3 patterns, shared 2-core VM, -O2:
      // no match 740 -> 645 ns/line; every line matching 800 -> 1070 ns/line.
      RE2::Set::ErrorInfo err{RE2::Set::kNoError};
      if (enc.set->Match(text, nullptr, &err) && enc.set->Match(text, &ids, &err)) {
        for (int id : ids) mark(enc.set_to_pattern[static_cast<std::size_t>(id)], how);
      } else if (err.kind != RE2::Set::kNoError) {
        // The set's DFA gave up (out of memory). One RE2 at a time falls back to
        // the NFA when its own DFA gives up, so this line still misses nothing.
        fallback = true;
      }
    }
    if (fallback) {
      for (uint32_t p = 0; p < enc.res.size(); ++p) {
        if (enc.res[p] && RE2::PartialMatch(text, *enc.res[p])) mark(p, how);
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
      const bool found = fields_only[p] || (literal[p].empty() ? RE2::PartialMatch(text, *utf8.res[p])
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
      if (ig >= 0 && RE2::PartialMatch(text, *utf8.res[static_cast<uint32_t>(ig)]))
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
      const RE2& re = (via[p] & kViaUtf8) ? *utf8.res[p] : *latin1.res[p];
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

Result<Matcher> Matcher::make(const config::RuleSet& rules, bool all_captures, bool prefilter) {
  auto impl = std::make_unique<Impl>();

  RE2::Options utf8_options;
  utf8_options.set_log_errors(false);
  RE2::Options latin1_options = utf8_options;
  latin1_options.set_encoding(RE2::Options::EncodingLatin1);
  RE2::Options utf8_set_options = utf8_options;
  utf8_set_options.set_max_mem(kSetMaxMem);
  RE2::Options latin1_set_options = latin1_options;
  latin1_set_options.set_max_mem(kSetMaxMem);
  impl->utf8.set = std::make_unique<RE2::Set>(utf8_set_options, RE2::UNANCHORED);
  impl->latin1.set = std::make_unique<RE2::Set>(latin1_set_options, RE2::UNANCHORED);

  std::size_t max_captures = 0;
  int max_submatch = 0;
  std::vector<std::string> json_paths;
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
      Impl::RuleInfo info = impl->rules[source];
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

    Impl::RuleInfo info;
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
      auto re = std::make_unique<RE2>(pattern, utf8_options);
      if (!re->ok()) return fail(fmt::format("{}: invalid pattern: {}", where, re->error()));

      Impl::EventGroups groups;
      if (event >= 0) {
        for (const auto& [name, group] : re->NamedCapturingGroups()) {
          const auto it = std::find(rule.capture_names.begin(), rule.capture_names.end(), name);
          if (it == rule.capture_names.end()) continue;
          groups.slot_group.emplace_back(static_cast<uint32_t>(it - rule.capture_names.begin()), group);
          groups.nsubmatch = std::max(groups.nsubmatch, group + 1);
        }
        max_submatch = std::max(max_submatch, groups.nsubmatch);
      }
      impl->utf8.res.push_back(std::move(re));

      // A pattern that only makes sense as UTF-8 (`\x{263a}`) has no Latin-1
      // reading; on a line that is not UTF-8 it gets the UTF-8 reading only.
      auto latin1 = std::make_unique<RE2>(pattern, latin1_options);
      if (latin1->ok() && impl->latin1.set->Add(pattern, nullptr) >= 0) {
        impl->latin1.set_to_pattern.push_back(index);
        impl->latin1.res.push_back(std::move(latin1));
      } else {
        impl->latin1.res.push_back(nullptr);
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

  if (!impl->utf8.set->Compile() || !impl->latin1.set->Compile()) {
    return Error{"", 0, 0,
                 fmt::format("the rules' patterns are too large for RE2 to compile into one set "
                             "(limit {} MiB); simplify them or split them over fewer rules",
                             kSetMaxMem >> 20)};
  }

  impl->ids.reserve(impl->patterns.size());
  impl->via.assign(impl->patterns.size(), 0);
  impl->matched.reserve(impl->patterns.size());
  impl->submatch.resize(static_cast<std::size_t>(max_submatch));
  impl->filled.resize(max_captures);
  if (!json_paths.empty()) impl->json.emplace(json_paths);
  if (prefilter) impl->prefilter.emplace(Prefilter::make(rules));
  impl->journal_rules = rules.settings.journal;
  return Matcher(std::move(impl));
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
  m.run(m.utf8, line, kViaUtf8);
  // Anything RE2's UTF-8 mode might read differently from what the bytes
  // mean gets the extra Latin-1 reading, which can only add matches.
  if (!is_valid_utf8(line)) m.run(m.latin1, line, kViaLatin1);
  m.collect(line, out);
}

}  // namespace swthrottle::match
