#include "match/matcher.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "match/envelope_fields.h"
#include "match/json_fields.h"
#include "match/matcher_plan.h"
#include "util/utf8.h"

namespace swthrottle::match {

using detail::Encoding;
using detail::FieldCheck;
using detail::kSetMaxMem;
using detail::Pattern;

namespace {

// How a pattern matched the current line (a bit set).
constexpr uint8_t kViaUtf8 = 1;
constexpr uint8_t kViaLatin1 = 2;

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
  // The fields a container runtime's envelope gives (stream, k8s.*), ahead
  // of the payload's; made with `json`.
  std::optional<EnvelopeFields> envelope;
  config::InputFormat format = config::InputFormat::Auto;
  uint64_t invalid_json = 0;
  uint64_t repaired_json = 0;  // read leniently (JsonFields::Read::Repaired)
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
    if (!plan->json_paths.empty()) {
      json.emplace(plan->json_paths);
      envelope.emplace(plan->json_paths);
    }
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
      if (json_read == JsonFields::Read::Repaired) ++repaired_json;
    }
    return json_read == JsonFields::Read::Json || json_read == JsonFields::Read::Repaired;
  }

  // The text of JSON slot `slot` on the line: the envelope's (stream,
  // k8s.*) on a line of a container runtime's log, else the payload's
  // (nullopt when it is not JSON or lacks the field).
  std::optional<std::string_view> field_text(std::string_view line, std::size_t slot) {
    std::string_view given;
    switch (envelope->text(slot, &given)) {
      case EnvelopeFields::Answer::Value: return given;
      case EnvelopeFields::Answer::Absent: return std::nullopt;
      case EnvelopeFields::Answer::Payload: break;
    }
    if (!json_line(line)) return std::nullopt;
    return json->text(slot);
  }

  // Whether one field condition holds on the line (false when it is not JSON).
  bool holds(std::string_view line, const FieldCheck& c) {
    const std::optional<std::string_view> text = field_text(line, c.slot);
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
        const std::optional<std::string_view> value = field_text(line, c.slot);  // the event held
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
      if (const std::optional<std::string_view> value = field_text(line, json_slot))
        owned.emplace_back(first + slot, *value);
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
  auto plan = detail::cached_plan(rules, all_captures, prefilter);
  if (!plan) return plan.error();
  return Matcher(std::make_unique<Impl>(std::move(*plan)));
}

void Matcher::force_fallback_for_test(bool on) { impl_->force_fallback = on; }

void Matcher::match_batch(std::string_view text, std::span<const LineSpan> lines, std::span<MatchResult> out,
                          std::span<const uint8_t> streams) {
  Impl& m = *impl_;
  auto stream_of = [&](std::size_t i) { return streams.empty() ? Stream::None : static_cast<Stream>(streams[i]); };
  if (!m.prefilter || !m.prefilter->active()) {
    for (std::size_t i = 0; i < lines.size(); ++i)
      match(text.substr(lines[i].first, lines[i].second), out[i], stream_of(i));
    return;
  }
  m.prefilter->scan(text, lines, m.verdict);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const int32_t v = m.verdict[i];
    const std::string_view line = text.substr(lines[i].first, lines[i].second);
    if (v == Prefilter::kAll) {
      match(line, out[i], stream_of(i));
      continue;
    }
    if (m.envelope) m.envelope->set_stream(stream_of(i));
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
uint64_t Matcher::take_repaired_json() { return std::exchange(impl_->repaired_json, 0); }

bool Matcher::needs_captures(uint32_t r) const { return r < impl_->rules.size() && impl_->rules[r].needs_captures; }

void Matcher::set_origin(PodOrigin origin) {
  if (impl_->envelope) impl_->envelope->set_origin(std::move(origin));
}

void Matcher::match(std::string_view line, MatchResult& out, Stream stream) {
  out.clear();
  Impl& m = *impl_;
  if (m.envelope) m.envelope->set_stream(stream);
  if (m.patterns.empty()) return;

  m.matched.clear();
  m.run(0, line, kViaUtf8);
  // Anything RE2's UTF-8 mode might read differently from what the bytes
  // mean gets the extra Latin-1 reading, which can only add matches.
  if (!is_valid_utf8(line)) m.run(1, line, kViaLatin1);
  m.collect(line, out);
}

}  // namespace swthrottle::match
