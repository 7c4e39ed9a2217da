#include "backtest/sweep_plan.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "config/duration.h"
#include "config/expr.h"
#include "config/rule_condition.h"
#include "config/rule_identity.h"

namespace swthrottle::backtest {

namespace {

// A threshold a counting copy of a throttle never reaches: it passes every
// line, so its window counts what the throttle was offered.
constexpr uint64_t kNeverFull = 1'000'000'000'000'000;

// "12", "0.05": a positive decimal number, as the `when` language reads it.
std::optional<double> positive_number(std::string_view s) {
  if (s.empty() || s.size() > 32) return std::nullopt;
  bool dot = false;
  for (char c : s) {
    if (c == '.') {
      if (dot) return std::nullopt;
      dot = true;
    } else if (c < '0' || c > '9') {
      return std::nullopt;
    }
  }
  if (s.front() == '.' || s.back() == '.') return std::nullopt;
  const double v = std::strtod(std::string(s).c_str(), nullptr);
  if (!(v > 0) || !std::isfinite(v)) return std::nullopt;
  return v;
}

bool is_whole(double v) { return v == std::floor(v) && v < 1e15; }

// The shortest text the `when` language reads back as v.
std::string number_text(double v) {
  if (is_whole(v)) return fmt::format("{}", static_cast<uint64_t>(v));
  return fmt::format("{:.6g}", v);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Names are made of letters, digits and '_' (config/expr.cpp); "-" is the
// operator, so "not-a" is `not` then `-a`.
bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Is `word` at `at` in `text` a word of its own (not inside a name)?
bool word_at(std::string_view text, std::size_t at, std::string_view word) {
  return text.compare(at, word.size(), word) == 0 && (at == 0 || !name_char(text[at - 1])) &&
         (at + word.size() == text.size() || !name_char(text[at + word.size()]));
}

// Does `word` occur in `text` as a word of its own?
bool has_word(std::string_view text, std::string_view word) {
  for (std::size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1))
    if (word_at(text, at, word)) return true;
  return false;
}

// The ladder of --sweep auto around a rule's own value: from a quarter to
// six times it, so that both a noisier and a quieter choice are on it.
std::vector<double> ladder(double own, bool whole) {
  static constexpr double kSteps[] = {0.25, 1.0 / 3, 0.5, 2.0 / 3, 1, 1.5, 2, 3, 4, 6};
  std::vector<double> out;
  for (double f : kSteps) {
    double v = own * f;
    if (whole) v = std::max(1.0, std::round(v));
    else v = std::stod(fmt::format("{:.3g}", v));
    if (v > 0 && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

}  // namespace

Result<SweepRequest> parse_sweep(std::string_view values, std::string_view windows) {
  SweepRequest req;
  auto fail = [](std::string_view option, std::size_t col, std::string what) {
    return Error{"", 0, 0, fmt::format("{}: column {}: {}", option, col, what)};
  };
  // The 1-based column of `item` (trimmed) of the list item at `at`: its
  // first character, past the spaces before it.
  auto column = [](std::string_view list, std::size_t at, std::string_view item) {
    return item.empty() ? at + 1 : static_cast<std::size_t>(item.data() - list.data()) + 1;
  };
  values = trim(values);
  if (values == "auto") {
    req.automatic = true;
  } else if (const auto dots = values.find(".."); dots != std::string_view::npos) {
    const std::string_view lo_text = trim(values.substr(0, dots)), hi_text = trim(values.substr(dots + 2));
    const auto lo = positive_number(lo_text), hi = positive_number(hi_text);
    if (!lo) return fail("--sweep", 1, fmt::format("\"{}\" is not a positive number", lo_text));
    if (!hi)
      return fail("--sweep", column(values, dots + 2, hi_text),
                  fmt::format("\"{}\" is not a positive number", hi_text));
    if (*hi <= *lo) return fail("--sweep", 1, fmt::format("the range {} must go up", values));
    const bool whole = is_whole(*lo) && is_whole(*hi);
    std::vector<double> got;
    for (int i = 0; i < 10; ++i) {
      double v = *lo + (*hi - *lo) * i / 9.0;
      v = whole ? std::round(v) : std::stod(fmt::format("{:.3g}", v));
      if (std::find(got.begin(), got.end(), v) == got.end()) got.push_back(v);
    }
    for (double v : got) req.values.push_back(number_text(v));
  } else if (!values.empty()) {
    std::size_t at = 0;
    while (at <= values.size()) {
      const std::size_t comma = std::min(values.find(',', at), values.size());
      const std::string_view item = trim(values.substr(at, comma - at));
      if (!positive_number(item))
        return fail("--sweep", column(values, at, item),
                    fmt::format("\"{}\" is not a positive number (a list is \"5,10,20\")", item));
      // The same number written twice ("5", "5.0", "05") is one candidate.
      const double v = *positive_number(item);
      if (std::none_of(req.values.begin(), req.values.end(),
                       [&](const std::string& x) { return *positive_number(x) == v; }))
        req.values.emplace_back(item);
      at = comma + 1;
    }
  }
  windows = trim(windows);
  if (!windows.empty()) {
    std::size_t at = 0;
    while (at <= windows.size()) {
      const std::size_t comma = std::min(windows.find(',', at), windows.size());
      const std::string_view item = trim(windows.substr(at, comma - at));
      auto ms = config::parse_duration(item);
      if (!ms)
        return fail("--sweep-window", column(windows, at, item), fmt::format("\"{}\": {}", item, ms.error().what));
      // "1m,60s": one window, one candidate (as first written).
      if (std::none_of(req.windows.begin(), req.windows.end(), [&](const auto& w) { return w.first == *ms; }))
        req.windows.emplace_back(*ms, std::string(item));
      at = comma + 1;
    }
  }
  return req;
}

namespace {

// Where `text` splits at its first `and` outside parentheses, or npos.
std::size_t first_top_level_and(std::string_view text) {
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    else if (text[i] == ')') --depth;
    else if (depth == 0 && word_at(text, i, "and")) return i;
  }
  return std::string_view::npos;
}

// The one comparison `EXPR >= N`, `EXPR > N`, or a condition of silence's
// `EXPR < N`, `EXPR <= N`, that `text` is.
std::optional<WhenThreshold> one_comparison(std::string_view text) {
  const std::size_t op = text.find_last_of("<>");
  if (op == std::string_view::npos) return std::nullopt;
  // One comparison only: no other operator before this one.
  const std::string_view left = text.substr(0, op);
  if (left.find_first_of("<>=!") != std::string_view::npos) return std::nullopt;
  std::size_t num = op + 1;
  if (num < text.size() && text[num] == '=') ++num;
  const std::string_view number = trim(text.substr(num));
  if (!positive_number(number)) return std::nullopt;
  return WhenThreshold{std::string(trim(text.substr(0, num))), std::string(number), {}};
}

}  // namespace

std::optional<WhenThreshold> when_threshold(std::string_view when) {
  const std::string_view text = trim(when);
  if (has_word(text, "or") || has_word(text, "not")) return std::nullopt;
  const std::size_t split = first_top_level_and(text);
  const std::string_view first = split == std::string_view::npos ? text : trim(text.substr(0, split));
  if (has_word(first, "and")) return std::nullopt;  // inside parentheses: part of the comparison
  auto wt = one_comparison(first);
  if (!wt || split == std::string_view::npos) return wt;
  // The guards: each one a comparison, kept as written.
  std::string_view rest = text.substr(split);
  while (!rest.empty()) {
    rest = trim(rest.substr(3));  // past "and"
    const std::size_t next = first_top_level_and(rest);
    const std::string_view guard = trim(rest.substr(0, next));
    if (guard.find_first_of("<>=!") == std::string_view::npos) return std::nullopt;
    rest = next == std::string_view::npos ? std::string_view() : rest.substr(next);
  }
  wt->guard = std::string(trim(text.substr(split)));
  return wt;
}

std::optional<SpikeFactor> spike_factor(std::string_view when) {
  auto number_char = [](char c) { return (c >= '0' && c <= '9') || c == '.'; };
  auto skip_blanks_back = [&](std::size_t i) {  // i: one past; returns one past the last non-blank
    while (i > 0 && (when[i - 1] == ' ' || when[i - 1] == '\t')) --i;
    return i;
  };
  auto skip_blanks = [&](std::size_t i) {
    while (i < when.size() && (when[i] == ' ' || when[i] == '\t')) ++i;
    return i;
  };
  std::optional<std::pair<std::size_t, std::size_t>> found;  // [begin, end) of the number
  int factors = 0;
  for (std::size_t at = when.find("previous"); at != std::string_view::npos; at = when.find("previous", at + 1)) {
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(when[at - 1])) || when[at - 1] == '_')) continue;
    // Before: "N *".
    std::size_t i = skip_blanks_back(at);
    if (i > 0 && when[i - 1] == '*') {
      const std::size_t end = skip_blanks_back(i - 1);
      std::size_t begin = end;
      while (begin > 0 && number_char(when[begin - 1])) --begin;
      if (begin < end && positive_number(when.substr(begin, end - begin))) {
        found = {begin, end};
        ++factors;
        continue;
      }
    }
    // After: "previous(e) * N" or "previous(e) / N".
    const std::size_t close = when.find(')', at);
    if (close == std::string_view::npos) continue;
    i = skip_blanks(close + 1);
    if (i < when.size() && (when[i] == '*' || when[i] == '/')) {
      const std::size_t begin = skip_blanks(i + 1);
      std::size_t end = begin;
      while (end < when.size() && number_char(when[end])) ++end;
      if (begin < end && positive_number(when.substr(begin, end - begin))) {
        found = {begin, end};
        ++factors;
      }
    }
  }
  if (factors != 1) return std::nullopt;
  const auto [begin, end] = *found;
  return SpikeFactor{std::string(when.substr(0, begin)), std::string(when.substr(begin, end - begin)),
                     std::string(when.substr(end))};
}

namespace {

// What a rule is swept by: its own value (a threshold's Y, a spike's factor,
// the number a `when` ends in) and how a candidate's replaces it; or, when
// values are asked for, why it is not swept.
struct SweptBy {
  std::string own;
  std::optional<WhenThreshold> wt;
  std::optional<SpikeFactor> sf;
  std::string not_swept;
};

SweptBy swept_by(const config::Rule& rule, bool values_asked) {
  SweptBy by;
  if (rule.new_value) {
    by.own = "1";
    if (values_asked)
      by.not_swept =
          "a new rule raises one alert per value not seen within remember; it has no threshold "
          "(--sweep-window varies remember)";
  } else if (rule.threshold) {
    by.own = std::to_string(*rule.threshold);
  } else if (rule.keeps_previous && (by.sf = spike_factor(rule.when_text))) {
    by.own = by.sf->number;
  } else if ((by.wt = when_threshold(rule.when_text))) {
    by.own = by.wt->number;
  } else if (values_asked) {
    by.not_swept =
        rule.keeps_previous
            ? "its when has no one factor N * previous(e) (or previous(e) * N, previous(e) / N)"
            : "its when is not a comparison EXPR >= N, EXPR > N, EXPR < N or EXPR <= N, alone or with `and` guards";
  }
  return by;
}

// A selected rule's result, before any figure: what it is.
RuleResult result_of(const config::Rule& rule) {
  RuleResult rr;
  rr.name = rule.name;
  rr.kind = rule.kind;
  rr.window = rule.window_text;
  rr.window_ms = rule.window_ms;
  rr.bucket_ms = rule.window_ms / rule.buckets;
  rr.cooldown_ms = rule.kind == config::RuleKind::Alert ? rule.cooldown_ms : 0;
  rr.threshold = rule.threshold;
  rr.keyed = rule.key.has_value();
  rr.condition = rule.threshold ? fmt::format("threshold = {} per {}", *rule.threshold, rule.window_text)
                                : fmt::format("when = {} (window {})", rule.when_text, rule.window_text);
  return rr;
}

// The values a rule's candidates take, the rule's own among them once.
std::vector<std::string> values_of(const config::Rule& rule, const SweepRequest& sweep, const SweptBy& by) {
  const std::string& own = by.own;
  std::vector<std::string> values;
  if (!by.not_swept.empty() || (sweep.values.empty() && !sweep.automatic)) {
    values.push_back(own);
  } else if (sweep.automatic) {
    for (double v : ladder(*positive_number(own), rule.threshold.has_value())) values.push_back(number_text(v));
  } else {
    values = sweep.values;
  }
  // Values are numbers: the rule's own, written another way, is the rule itself.
  auto same = [&](const std::string& a, const std::string& b) {
    return a == b || (!a.empty() && !b.empty() && *positive_number(a) == *positive_number(b));
  };
  for (std::string& v : values)
    if (same(v, own)) v = own;
  if (std::find(values.begin(), values.end(), own) == values.end()) values.push_back(own);
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

// The candidate's value into its copy `c` of `rule`: its threshold, or its
// `when` with the number replaced. A `new` rule's copies differ in their
// window (`remember`) only.
std::optional<Error> take_value(config::Rule& c, const config::Rule& rule, const Candidate& cand, const SweptBy& by) {
  if (rule.new_value) return std::nullopt;
  if (rule.threshold) {
    c.threshold = static_cast<uint64_t>(cand.number);
    c.when = config::threshold_condition(c, *c.threshold);
  } else if ((by.wt || by.sf) && cand.number > 0) {
    c.when_text = by.wt ? by.wt->with(cand.value) : by.sf->prefix + cand.value + by.sf->suffix;
    auto e = config::parse_rule_condition(c, c.when_text);
    if (!e)
      return Error{rule.file, rule.line, 0,
                   fmt::format("rule \"{}\": when = {}: {}", rule.name, c.when_text, e.error().what)};
    c.when = std::move(*e);
  }
  return std::nullopt;
}

}  // namespace

Result<SweepPlan> plan_sweep(config::RuleSet rules, const std::vector<std::string>& only, const SweepRequest& sweep,
                             bool lenient) {
  SweepPlan plan;
  for (const std::string& name : lenient ? std::vector<std::string>{} : only) {
    if (std::none_of(rules.rules.begin(), rules.rules.end(), [&](const config::Rule& r) { return r.name == name; }))
      return Error{"", 0, 0, fmt::format("--only {}: no rule of that name", name)};
  }
  // No actions, no fleet: a backtest only decides.
  for (config::Rule& r : rules.rules) {
    r.exec.clear();
    r.fleet = config::FleetMode::Off;
  }
  const auto loaded = static_cast<uint32_t>(rules.rules.size());
  plan.slots.resize(loaded);
  std::vector<config::Rule> copies;
  for (uint32_t i = 0; i < loaded; ++i) {
    const config::Rule& rule = rules.rules[i];
    if (!only.empty() && std::find(only.begin(), only.end(), rule.name) == only.end()) continue;
    const auto result_index = static_cast<uint32_t>(plan.results.size());
    plan.slots[i] = PlanSlot{result_index, PlanSlot::Role::Rule, 0};
    plan.result_rule.push_back(i);
    RuleResult& rr = plan.results.emplace_back(result_of(rule));

    auto copy_of = [&](std::string suffix) {
      config::Rule c = rule;
      c.name = rule.name + suffix;
      c.matched_as = i;
      return c;
    };
    if (rule.kind == config::RuleKind::Throttle) {
      // Counts every line the throttle is offered: its distribution.
      config::Rule c = copy_of("@offered");
      c.threshold = kNeverFull;
      c.when = config::Expr::threshold(kNeverFull, c.events.size());
      c.fingerprint = config::fingerprint(c);
      plan.slots.push_back(PlanSlot{result_index, PlanSlot::Role::Counter, 0});
      copies.push_back(std::move(c));
    }
    if (!sweep.any()) continue;

    // The values: a threshold's Y, the factor of a spike, or the number a `when` ends in.
    const SweptBy by = swept_by(rule, !sweep.values.empty() || sweep.automatic);
    rr.not_swept = by.not_swept;
    if (!by.not_swept.empty() && sweep.windows.empty()) continue;
    const std::string& own = by.own;
    const std::vector<std::string> values = values_of(rule, sweep, by);
    std::vector<std::pair<int64_t, std::string>> windows = sweep.windows;
    if (std::none_of(windows.begin(), windows.end(), [&](const auto& w) { return w.first == rule.window_ms; }))
      windows.emplace_back(rule.window_ms, rule.window_text);

    std::vector<Candidate> cands;
    for (const std::string& v : values) {
      // "": a `when` swept by its window only keeps its condition as written.
      const double number = v.empty() ? 0 : *positive_number(v);
      if (rule.threshold && !is_whole(number))
        return Error{rule.file, rule.line, 0,
                     fmt::format("--sweep {}: rule \"{}\" has threshold = \"Y per X\", whose Y is a whole number", v,
                                 rule.name)};
      for (const auto& [wms, wtext] : windows) {
        Candidate c;
        c.value = v.empty() ? "as written" : v;
        c.number = number;
        c.window = wtext;
        c.window_ms = wms;
        c.current = v == own && wms == rule.window_ms;
        if (c.current) c.outcome = {};  // filled from the rule itself
        cands.push_back(std::move(c));
      }
    }
    std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
      return a.number != b.number ? a.number < b.number : a.window_ms < b.window_ms;
    });
    for (std::size_t k = 0; k < cands.size(); ++k) {
      const Candidate& cand = cands[k];
      if (cand.current) continue;  // the rule itself
      config::Rule c = copy_of(fmt::format("@{}/{}", cand.value, cand.window));
      if (cand.window_ms != rule.window_ms) {
        if (cand.window_ms % rule.buckets != 0 || cand.window_ms / rule.buckets < 1)
          return Error{rule.file, rule.line, 0,
                       fmt::format("--sweep-window {}: rule \"{}\" has {} buckets, which {} does not divide into",
                                   cand.window, rule.name, rule.buckets, cand.window)};
        c.window_ms = cand.window_ms;
        c.window_text = cand.window;
        if (!rule.cooldown_set && rule.kind == config::RuleKind::Alert) c.cooldown_ms = cand.window_ms;
      }
      if (std::optional<Error> e = take_value(c, rule, cand, by)) return std::move(*e);
      c.fingerprint = config::fingerprint(c);
      plan.slots.push_back(PlanSlot{result_index, PlanSlot::Role::Candidate, static_cast<uint32_t>(k)});
      copies.push_back(std::move(c));
    }
    rr.sweep = std::move(cands);
  }
  for (config::Rule& c : copies) rules.rules.push_back(std::move(c));
  plan.rules = std::move(rules);
  return plan;
}

}  // namespace swthrottle::backtest
