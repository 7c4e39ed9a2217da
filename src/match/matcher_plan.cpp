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
      if (all_captures || (rule.key && rule.key->uses(field)) || (rule.message && rule.message->uses(field)) ||
          (rule.distinct && rule.distinct->uses(field)) || (rule.new_value && rule.new_value->uses(field))) {
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
      put_n(
          ((rule.key && rule.key->uses(field)) ? 1 : 0) | ((rule.message && rule.message->uses(field)) ? 2 : 0) |
          (((rule.distinct && rule.distinct->uses(field)) || (rule.new_value && rule.new_value->uses(field))) ? 4 : 0));
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
