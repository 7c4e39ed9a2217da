// Compiling a rule set into a Matcher::Plan (build_plan), and the cache that
// shares one plan per rule set's content between the decider and every -j
// worker (plan_key, PlanCache). Apart from matcher.cpp, which matches lines
// with a plan: this runs once per rule set, that on every line.
#include "match/matcher_plan.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

namespace swthrottle::match {

using detail::FieldCheck;
using detail::kSetMaxMem;
using detail::Pattern;

namespace {

// Compiles one rule set, rule by rule, into the plan it holds.
class PlanBuilder {
 public:
  using Plan = Matcher::Plan;

  PlanBuilder(bool all_captures) : impl_(std::make_shared<Plan>()), all_captures_(all_captures) {
    utf8_options_.set_log_errors(false);
    latin1_options_ = utf8_options_;
    latin1_options_.set_encoding(RE2::Options::EncodingLatin1);
    RE2::Options utf8_set_options = utf8_options_;
    utf8_set_options.set_max_mem(kSetMaxMem);
    RE2::Options latin1_set_options = latin1_options_;
    latin1_set_options.set_max_mem(kSetMaxMem);
    impl_->utf8_options = utf8_options_;
    impl_->latin1_options = latin1_options_;
    impl_->utf8.set = std::make_unique<RE2::Set>(utf8_set_options, RE2::UNANCHORED);
    impl_->latin1.set = std::make_unique<RE2::Set>(latin1_set_options, RE2::UNANCHORED);
  }

  std::optional<Error> add_rule(const config::RuleSet& rules, uint32_t r);
  Result<std::shared_ptr<Plan>> finish(const config::RuleSet& rules, bool prefilter);

 private:
  static Error fail(const config::Rule& rule, std::string what) {
    return Error{rule.file, rule.line, 0, fmt::format("rule \"{}\": {}", rule.name, what)};
  }
  std::size_t json_slot(std::string_view path);
  std::optional<Error> add_copy(const config::RuleSet& rules, uint32_t r);
  std::optional<Error> add_pattern(const config::Rule& rule, uint32_t r, const std::string& pattern, int32_t event);
  Plan::EventGroups event_groups(const config::Rule& rule, const std::string& pattern, int32_t event,
                                 const std::string& where, std::optional<Error>& error);
  std::optional<Error> field_checks(const config::Rule& rule, int32_t event, const std::string& where,
                                    std::vector<FieldCheck>& checks);
  std::optional<Error> add_ignore(const config::Rule& rule, Plan::RuleInfo& info, uint32_t r);
  void slot_groups(const config::Rule& rule, const RE2& re, std::vector<std::pair<uint32_t, int>>& slot_group,
                   int& nsubmatch);

  std::shared_ptr<Plan> impl_;
  bool all_captures_;
  RE2::Options utf8_options_;
  RE2::Options latin1_options_;
};

std::size_t PlanBuilder::json_slot(std::string_view path) {
  std::vector<std::string>& paths = impl_->json_paths;
  const auto it = std::find(paths.begin(), paths.end(), path);
  if (it != paths.end()) return static_cast<std::size_t>(it - paths.begin());
  paths.emplace_back(path);
  return paths.size() - 1;
}

// The named groups of `re` that are captures of `rule`: (capture slot, group).
void PlanBuilder::slot_groups(const config::Rule& rule, const RE2& re,
                              std::vector<std::pair<uint32_t, int>>& slot_group, int& nsubmatch) {
  for (const auto& [name, group] : re.NamedCapturingGroups()) {
    const auto it = std::find(rule.capture_names.begin(), rule.capture_names.end(), name);
    if (it == rule.capture_names.end()) continue;
    slot_group.emplace_back(static_cast<uint32_t>(it - rule.capture_names.begin()), group);
    nsubmatch = std::max(nsubmatch, group + 1);
  }
  impl_->max_submatch = std::max(impl_->max_submatch, nsubmatch);
}

// A backtest's candidate copy: no patterns of its own; collect() gives it the
// hits (and capture slots) of the rule it copies, which comes before it, as
// every copy comes after every rule that is matched.
std::optional<Error> PlanBuilder::add_copy(const config::RuleSet& rules, uint32_t r) {
  const config::Rule& rule = rules.rules[r];
  const uint32_t source = *rule.matched_as;
  if (source >= r || rules.rules[source].matched_as || rules.rules[source].events.size() != rule.events.size())
    return fail(rule, "a candidate copy must follow the rule it copies, with the same events");
  Plan::RuleInfo info = impl_->rules[source];
  info.num_events = 0;
  info.ignore_pattern = -1;
  info.ignore_check.reset();
  info.json_captures.clear();
  impl_->rules.push_back(info);
  impl_->copies.resize(rules.rules.size());
  impl_->copies[source].push_back(r);
  impl_->has_copies = true;
  return std::nullopt;
}

std::optional<Error> PlanBuilder::add_rule(const config::RuleSet& rules, uint32_t r) {
  const config::Rule& rule = rules.rules[r];
  if (rule.matched_as) return add_copy(rules, r);
  if (rule.events.size() > 64)
    return fail(rule, fmt::format("{} events; at most 64 are supported", rule.events.size()));

  Plan::RuleInfo info;
  info.first_pattern = static_cast<uint32_t>(impl_->patterns.size());
  info.num_events = static_cast<uint32_t>(rule.events.size());
  info.num_captures = static_cast<uint32_t>(rule.capture_names.size());
  for (uint32_t c = 0; c < info.num_captures; ++c) {
    const int field = config::kFieldFirstCapture + static_cast<int>(c);
    if (all_captures_ || (rule.key && rule.key->uses(field)) || (rule.message && rule.message->uses(field))) {
      info.needs_captures = true;
    }
    const std::string& name = rule.capture_names[c];
    if (name.size() > 1 && name.front() == '.') info.json_captures.emplace_back(c, json_slot(name.substr(1)));
  }
  impl_->max_captures = std::max<std::size_t>(impl_->max_captures, info.num_captures);
  for (uint32_t e = 0; e < info.num_events; ++e) {
    impl_->event_pattern.push_back(static_cast<uint32_t>(impl_->patterns.size()));
    if (!rule.events[e].fields.empty()) info.has_fields = true;
    if (auto err = add_pattern(rule, r, config::line_pattern(rule.events[e]), static_cast<int32_t>(e))) return err;
  }
  if (auto err = add_ignore(rule, info, r)) return err;
  impl_->rules.push_back(info);
  return std::nullopt;
}

// `ignore`: on a JSON field, a check of its own; on the line, one more pattern.
std::optional<Error> PlanBuilder::add_ignore(const config::Rule& rule, Plan::RuleInfo& info, uint32_t r) {
  if (rule.ignore.empty()) return std::nullopt;
  if (rule.ignore_field.empty()) {
    info.ignore_pattern = static_cast<int32_t>(impl_->patterns.size());
    return add_pattern(rule, r, rule.ignore, -1);
  }
  FieldCheck c;
  c.slot = json_slot(rule.ignore_field);
  c.re = std::make_unique<RE2>(rule.ignore, utf8_options_);
  if (!c.re->ok()) return fail(rule, fmt::format("ignore: invalid pattern: {}", c.re->error()));
  c.latin1 = std::make_unique<RE2>(rule.ignore, latin1_options_);
  if (!c.latin1->ok()) c.latin1.reset();
  info.ignore_check = impl_->ignore_checks.size();
  impl_->ignore_checks.push_back(std::move(c));
  return std::nullopt;
}

// The event's named groups, from an RE2 compiled for that alone: only a
// pattern that has one is compiled (the loader compiled each pattern already,
// config::compile_regex; the set has parsed it).
Matcher::Plan::EventGroups PlanBuilder::event_groups(const config::Rule& rule, const std::string& pattern,
                                                     int32_t event, const std::string& where,
                                                     std::optional<Error>& error) {
  Plan::EventGroups groups;
  if (event < 0 || (pattern.find("(?P<") == std::string::npos && pattern.find("(?<") == std::string::npos))
    return groups;
  RE2 re(pattern, utf8_options_);
  if (!re.ok()) {
    error = fail(rule, fmt::format("{}: invalid pattern: {}", where, re.error()));
    return groups;
  }
  slot_groups(rule, re, groups.slot_group, groups.nsubmatch);
  return groups;
}

// The conditions on JSON fields of an event, each on its slot of the line's fields.
std::optional<Error> PlanBuilder::field_checks(const config::Rule& rule, int32_t event, const std::string& where,
                                               std::vector<FieldCheck>& checks) {
  if (event < 0) return std::nullopt;
  for (const config::FieldCondition& fc : rule.events[static_cast<std::size_t>(event)].fields) {
    FieldCheck c;
    c.slot = json_slot(fc.path);
    if (fc.regex) {
      c.re = std::make_unique<RE2>(fc.value, utf8_options_);
      if (!c.re->ok())
        return fail(rule, fmt::format("{}: field {}: invalid pattern: {}", where, fc.path, c.re->error()));
      c.latin1 = std::make_unique<RE2>(fc.value, latin1_options_);
      if (!c.latin1->ok()) c.latin1.reset();
      slot_groups(rule, *c.re, c.slot_group, c.nsubmatch);
    } else {
      c.equals = fc.value;
    }
    checks.push_back(std::move(c));
  }
  return std::nullopt;
}

std::optional<Error> PlanBuilder::add_pattern(const config::Rule& rule, uint32_t r, const std::string& pattern,
                                              int32_t event) {
  const auto index = static_cast<uint32_t>(impl_->patterns.size());
  const std::string where = event >= 0 ? fmt::format("event \"{}\"", rule.events[static_cast<std::size_t>(event)].name)
                                       : std::string("ignore");
  std::string error;
  if (impl_->utf8.set->Add(pattern, &error) < 0)
    return fail(rule, fmt::format("{}: invalid pattern: {}", where, error));
  impl_->utf8.set_to_pattern.push_back(index);
  std::optional<Error> failed;
  Plan::EventGroups groups = event_groups(rule, pattern, event, where, failed);
  if (failed) return failed;
  // Not kept: each thread compiles its own from the text (Impl::utf8_re).
  impl_->texts.push_back(pattern);

  // A pattern that only makes sense as UTF-8 (`\x{263a}`) has no Latin-1
  // reading; on a line that is not UTF-8 it gets the UTF-8 reading only.
  // (The set parses it as an RE2 of these options would; each thread
  // compiles that RE2 when a line first needs it, Impl::latin1_re.)
  const bool latin1 = impl_->latin1.set->Add(pattern, nullptr) >= 0;
  if (latin1) impl_->latin1.set_to_pattern.push_back(index);
  impl_->has_latin1.push_back(latin1 ? 1 : 0);
  std::vector<FieldCheck> checks;
  if (auto err = field_checks(rule, event, where, checks)) return err;
  impl_->checks.push_back(std::move(checks));
  impl_->patterns.push_back(Pattern{r, event});
  impl_->groups.push_back(std::move(groups));
  const bool plain = !pattern.empty() && std::all_of(pattern.begin(), pattern.end(), [](char ch) {
    const auto u = static_cast<unsigned char>(ch);
    return u >= 0x20 && u < 0x7F && std::strchr("\\.+*?()|[]{}^$", ch) == nullptr;
  });
  impl_->literal.push_back(plain ? pattern : std::string());
  impl_->fields_only.push_back(event >= 0 && rule.events[static_cast<std::size_t>(event)].match.empty() ? 1 : 0);
  return std::nullopt;
}

Result<std::shared_ptr<Matcher::Plan>> PlanBuilder::finish(const config::RuleSet& rules, bool prefilter) {
  // The UTF-8 set is compiled now, so that one too large for RE2 is an error
  // at the start; the Latin-1 set (a program no larger) when a line first
  // needs it (Impl::own): most logs have no line that is not UTF-8.
  if (!impl_->utf8.set->Compile()) {
    return Error{"", 0, 0,
                 fmt::format("the rules' patterns are too large for RE2 to compile into one set "
                             "(limit {} MiB); simplify them or split them over fewer rules",
                             kSetMaxMem >> 20)};
  }
  if (prefilter) impl_->prefilter.emplace(Prefilter::make(rules));
  impl_->journal_rules = rules.settings.journal;
  impl_->spare_utf8 = std::move(impl_->utf8.set);
  impl_->spare_latin1 = std::move(impl_->latin1.set);
  return impl_;
}

Result<std::shared_ptr<Matcher::Plan>> build_plan(const config::RuleSet& rules, bool all_captures, bool prefilter) {
  PlanBuilder builder(all_captures);
  for (uint32_t r = 0; r < rules.rules.size(); ++r)
    if (auto err = builder.add_rule(rules, r)) return *err;
  return builder.finish(rules, prefilter);
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

namespace detail {

Result<std::shared_ptr<const Matcher::Plan>> cached_plan(const config::RuleSet& rules, bool all_captures,
                                                         bool prefilter) {
  return plan_cache().get(rules, all_captures, prefilter);
}

}  // namespace detail

}  // namespace swthrottle::match
