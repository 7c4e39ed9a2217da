#include "state/state_validation.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "config/duration.h"
#include "config/watch_parser.h"
#include "util/json.h"
#include "window/bucket.h"
#include "window/distinct_count.h"

namespace swthrottle::state {
namespace {

using engine::EngineState;
using engine::RuleWindows;
using window::WindowState;

// Times a run writes: -1 ("none") or from the epoch (the engine clamps
// earlier times to 0) to the end of year 9999.
constexpr int64_t kNoneMs = -1;

std::string at(const std::string& path, std::string_view name) { return path + "." + std::string(name); }
std::string index(const std::string& path, std::size_t i) { return fmt::format("{}[{}]", path, i); }

// Walks a state; the first problem is kept with its member path.
class RangeCheck {
 public:
  std::optional<Error> error;

  bool fail(const std::string& path, const std::string& why) {
    if (!error) error = Error{"", 0, 0, path + ": " + why};
    return false;
  }

  bool time(int64_t ms, const std::string& path) {
    if (ms >= kNoneMs && ms <= kMaxTimeMs) return true;
    return fail(path, fmt::format("time {} is out of range (a run writes -1 or 1970-01-01 to 9999-12-31, up to {})", ms,
                                  kMaxTimeMs));
  }

  bool bucket(int64_t b, const std::string& path) {
    if (b >= 0 && b <= kMaxTimeMs) return true;
    return fail(path, fmt::format("bucket {} is out of range (0 to {})", b, kMaxTimeMs));
  }

  bool count(uint64_t n, uint64_t bound, const std::string& path) {
    if (n <= bound) return true;
    return fail(path, fmt::format("count {} is out of range (at most {})", n, bound));
  }

  bool events(std::size_t n, const std::string& path) {
    if (n <= 64) return true;
    return fail(path, fmt::format("{} counts: a rule has at most 64 events", n));
  }

  bool window(const WindowState& w, const std::string& path) {
    if (!time(w.now_ms, at(path, "now_ms"))) return false;
    const std::string bp = at(path, "buckets");
    for (std::size_t i = 0; i < w.buckets.size(); ++i) {
      const WindowState::Bucket& b = w.buckets[i];
      const std::string p = index(bp, i);
      if (!bucket(b.bucket, index(p, 0))) return false;
      // Oldest first, each once: a bucket twice would be counted twice.
      if (i > 0 && b.bucket <= w.buckets[i - 1].bucket)
        return fail(index(p, 0), fmt::format("bucket {} after bucket {}: buckets are saved oldest first, each once",
                                             b.bucket, w.buckets[i - 1].bucket));
      if (b.counts.empty()) return fail(index(p, 1), "no counts: a rule has at least one event");
      if (!events(b.counts.size(), index(p, 1))) return false;
      for (std::size_t e = 0; e < b.counts.size(); ++e)
        if (!count(b.counts[e], kMaxBucketCount, index(index(p, 1), e))) return false;
    }
    const std::string pp = at(path, "pending");
    if (!count(w.pending.suppressed, kMaxTally, at(pp, "suppressed")) ||
        !time(w.pending.first_ms, at(pp, "first_ms")) || !time(w.pending.last_ms, at(pp, "last_ms")) ||
        !events(w.pending_counts.size(), at(pp, "counts")))
      return false;
    if (!w.pending_counts.empty() && w.pending.suppressed == 0)
      return fail(at(pp, "counts"), "per-event counts without suppressed lines");
    // Suppressed lines were decided at times in order: the earliest, the
    // latest, and the window's now, which no decision passes.
    if (w.pending.suppressed != 0 && w.pending.first_ms > w.pending.last_ms)
      return fail(at(pp, "first_ms"), fmt::format("time {} after last_ms {}: the first suppressed line comes first",
                                                  w.pending.first_ms, w.pending.last_ms));
    if (w.pending.suppressed != 0 && w.pending.first_ms < 0)
      return fail(at(pp, "first_ms"), "no time for the suppressed lines");
    if (w.pending.suppressed != 0 && w.pending.last_ms > w.now_ms)
      return fail(at(pp, "last_ms"), fmt::format("time {} after the window's now_ms {}", w.pending.last_ms, w.now_ms));
    for (std::size_t e = 0; e < w.pending_counts.size(); ++e)
      if (!count(w.pending_counts[e], kMaxTally, index(at(pp, "counts"), e))) return false;
    // The alert state machine (window/alert_state.h) only reaches these:
    // an episode is announced only while firing, and fires only after an
    // alert was once written, whose time is then kept.
    if (w.announced && !w.firing) return fail(at(path, "announced"), "true while \"firing\" is false");
    if (w.firing && !w.alerted) return fail(at(path, "firing"), "true while \"alerted\" is false");
    if (w.last_alert_ms < 0 || w.last_alert_ms > kMaxTimeMs)
      return fail(at(path, "last_alert_ms"), fmt::format("time {} is out of range (1970-01-01 to 9999-12-31, up to {})",
                                                         w.last_alert_ms, kMaxTimeMs));
    if (!w.alerted && w.last_alert_ms != 0)
      return fail(at(path, "last_alert_ms"), "an alert time while \"alerted\" is false");
    // An alert is written at the window's now, which never goes back.
    if (w.alerted && w.last_alert_ms > w.now_ms)
      return fail(at(path, "last_alert_ms"),
                  fmt::format("alert time {} after the window's now_ms {}", w.last_alert_ms, w.now_ms));
    return count(w.alert_suppressed, kMaxTally, at(path, "alert_suppressed")) &&
           distinct(w.distinct, at(path, "distinct"));
  }

  // A window's distinct values: at most 256 exactly, sketches of 4096 registers of rank 53 at most.
  bool distinct(const window::DistinctState& d, const std::string& path) {
    if (d.exact.size() > window::DistinctCount::kExactValues)
      return fail(at(path, "exact"), fmt::format("{} values: a window keeps at most {} exactly", d.exact.size(),
                                                 window::DistinctCount::kExactValues));
    for (std::size_t i = 0; i < d.exact.size(); ++i)
      if (!bucket(d.exact[i].bucket, index(index(at(path, "exact"), i), 1))) return false;
    if (d.overflow_bucket != -1 && !bucket(d.overflow_bucket, at(path, "overflow_bucket"))) return false;
    for (std::size_t i = 0; i < d.sketches.size(); ++i) {
      const std::string p = index(at(path, "sketches"), i);
      if (!bucket(d.sketches[i].bucket, index(p, 0))) return false;
      const std::vector<uint8_t>& r = d.sketches[i].registers;
      if (r.size() != window::hll::kRegisters)
        return fail(index(p, 1), fmt::format("{} registers: a sketch has {}", r.size(), window::hll::kRegisters));
      if (std::any_of(r.begin(), r.end(), [](uint8_t v) { return v > window::hll::kMaxRank; }))
        return fail(index(p, 1), fmt::format("a register above {}, the highest rank", window::hll::kMaxRank));
    }
    return true;
  }

  // What a rule with `new` remembers: times a run writes.
  bool seen(const engine::SeenValues& v, const std::string& path) {
    if (!time(v.learn_until_ms, at(path, "learn_until_ms"))) return false;
    for (std::size_t i = 0; i < v.values.size(); ++i)
      if (!time(v.values[i].last_ms, index(index(at(path, "values"), i), 1))) return false;
    return true;
  }

  // A watched rule's or a sequence's state of a key (engine::WatchedKey),
  // with the invariants of the alert state machine, as for a window.
  bool watched(const engine::WatchedKey& w, const std::string& path) {
    for (const auto& [ms, name] :
         {std::pair{w.since_ms, "since_ms"}, std::pair{w.last_event_ms, "last_event_ms"},
          std::pair{w.pending_since_ms, "pending_since_ms"}, std::pair{w.armed_at_ms, "armed_at_ms"}})
      if (!time(ms, at(path, name))) return false;
    if (!events(w.then_counts.size(), at(path, "then_counts"))) return false;
    for (std::size_t e = 0; e < w.then_counts.size(); ++e)
      if (!count(w.then_counts[e], kMaxTally, index(at(path, "then_counts"), e))) return false;
    if (w.announced && !w.firing) return fail(at(path, "announced"), "true while \"firing\" is false");
    if (w.firing && !w.alerted) return fail(at(path, "firing"), "true while \"alerted\" is false");
    if (w.last_alert_ms < 0 || w.last_alert_ms > kMaxTimeMs || (!w.alerted && w.last_alert_ms != 0))
      return fail(at(path, "last_alert_ms"), fmt::format("time {} is not one of an alert written", w.last_alert_ms));
    return count(w.held_back, kMaxTally, at(path, "held_back"));
  }

  bool fleet(const engine::FleetUnsent& u, const std::string& path) {
    if (!time(u.newest_t_ms, at(path, "newest_t_ms")) || !bucket(u.now_bucket, at(path, "now_bucket"))) return false;
    for (std::size_t c = 0; c < u.counts.size(); ++c) {
      const std::string cp = index(at(path, "counts"), c);
      if (!bucket(u.counts[c].bucket, index(cp, 0)) || !count(u.counts[c].n, kMaxBucketCount, index(cp, 2)))
        return false;
    }
    return true;
  }
};

// ---------------------------------------------------------------- one rule

// What the window of `rule` could not have written into w, or "".
std::string window_problem(const config::Rule& rule, const window::WindowSpec& spec, const WindowState& w,
                           const std::string& path) {
  const bool throttle = rule.kind == config::RuleKind::Throttle;
  // The window's own position: its buckets lie in the B buckets up to it
  // (a window saves no other; the load would skip them without a word).
  const int64_t now_b = window::bucket_of(w.now_ms, spec);
  const int64_t oldest = std::max<int64_t>(0, window::oldest_kept(now_b, spec));  // with previous(): 2B buckets
  for (std::size_t i = 0; i < w.buckets.size(); ++i) {
    const WindowState::Bucket& b = w.buckets[i];
    const std::string bp = index(at(path, "buckets"), i);
    if (b.bucket > now_b || b.bucket < oldest)
      return fmt::format("{}: bucket {} is not in the window at its now_ms {} (buckets {} to {} of {})", index(bp, 0),
                         b.bucket, w.now_ms, oldest, now_b, config::format_duration(spec.width_ms));
    if (b.counts.size() != spec.events)
      return fmt::format("{}: {} counts for a window of {} event{}", index(bp, 1), b.counts.size(), spec.events,
                         spec.events == 1 ? "" : "s");
  }
  const std::string pp = at(path, "pending");
  if (throttle) {
    // Per-event counts of suppressed lines: only a throttle of several events.
    const std::size_t tallied = rule.events.size() > 1 ? rule.events.size() : 0;
    if (!w.pending_counts.empty() && w.pending_counts.size() != tallied)
      return fmt::format("{}: {} per-event counts for a throttle of {} event{}", at(pp, "counts"),
                         w.pending_counts.size(), rule.events.size(), rule.events.size() == 1 ? "" : "s");
    if (w.firing || w.alerted || w.alert_suppressed != 0)
      return fmt::format("{}: an alert's state in the window of a throttle", path);
  } else if (w.pending.suppressed != 0 || !w.pending_counts.empty()) {
    return fmt::format("{}: suppressed lines of a throttle in the window of an alert", at(pp, "suppressed"));
  }
  return {};
}

// What a watched rule or a sequence (config/watch_parser.h) could not have
// written beside a window, or "".
std::string watch_problem(const config::Rule& rule, const RuleWindows::Keyed& k, const std::string& path) {
  // A window without one is not damage: a rule of silence (`hb < 1`) was a
  // plain alert rule, of the same fingerprint, to a swthrottle before them.
  if (!k.watch) return {};
  if (!config::is_watched(rule) && !config::is_sequence(rule))
    return fmt::format("{}: a \"watch\" for a rule that keeps none", at(path, "watch"));
  const engine::WatchedKey& w = *k.watch;
  const std::string wp = at(path, "watch");
  if (config::is_sequence(rule)) {
    const std::size_t want = w.armed_at_ms >= 0 ? rule.events.size() : 0;
    if (w.then_counts.size() != want)
      return fmt::format("{}: {} counts for a sequence of {} events{}", at(wp, "then_counts"), w.then_counts.size(),
                         rule.events.size(), w.armed_at_ms >= 0 ? "" : ", not armed");
    if (w.firing || w.pending_since_ms >= 0) return fmt::format("{}: a watched rule's state in a sequence's", wp);
  } else if (w.armed_at_ms >= 0 || !w.then_counts.empty()) {
    return fmt::format("{}: a sequence's state in a watched rule's", wp);
  } else if (w.pending_since_ms >= 0 && rule.for_ms == 0) {
    return fmt::format("{}: pending without `for`", at(wp, "pending_since_ms"));
  }
  return {};
}

std::string rule_problem(const config::Rule& rule, const RuleWindows& rw, const std::string& path) {
  // As engine::Engine builds it: a throttle counts its passed lines as one
  // counter, an alert each event.
  const bool throttle = rule.kind == config::RuleKind::Throttle;
  window::WindowSpec spec{rule.window_ms / rule.buckets, rule.buckets,
                          throttle ? 1u : static_cast<uint32_t>(rule.events.size())};
  spec.previous = rule.keeps_previous;
  const std::string wp = at(path, "windows");
  if (!rule.key) {
    if (rw.windows.size() > 1)
      return fmt::format("{}: {} windows for a rule without `key`, which has one", wp, rw.windows.size());
    if (!rw.windows.empty() && !rw.windows[0].key.empty()) {
      std::string q;
      append_json_string(q, rw.windows[0].key);
      return fmt::format("{}: key {} for a rule without `key`", at(index(wp, 0), "key"), q);
    }
  }
  for (std::size_t i = 0; i < rw.windows.size(); ++i) {
    if (std::string p = window_problem(rule, spec, rw.windows[i].window, index(wp, i)); !p.empty()) return p;
    if (std::string p = watch_problem(rule, rw.windows[i], index(wp, i)); !p.empty()) return p;
  }
  return {};
}

}  // namespace

std::optional<Error> out_of_range(const EngineState& st) {
  RangeCheck c;
  if (!c.time(st.now_ms, "now_ms") || !c.time(st.last_log_ms, "last_log_ms")) return c.error;
  for (std::size_t r = 0; r < st.rules.size(); ++r) {
    const std::string wp = at(index("rules", r), "windows");
    for (std::size_t w = 0; w < st.rules[r].windows.size(); ++w) {
      const RuleWindows::Keyed& k = st.rules[r].windows[w];
      if (!c.window(k.window, index(wp, w))) return c.error;
      if (k.watch && !c.watched(*k.watch, at(index(wp, w), "watch"))) return c.error;
    }
    if (st.rules[r].seen && !c.seen(*st.rules[r].seen, at(index("rules", r), "seen"))) return c.error;
  }
  for (std::size_t i = 0; i < st.fleet_unsent.size(); ++i)
    if (!c.fleet(st.fleet_unsent[i], index("fleet_unsent", i))) return c.error;
  return std::nullopt;
}

std::vector<std::string> drop_inconsistent(EngineState& st, const config::RuleSet& rules) {
  std::vector<std::string> messages;
  std::vector<bool> drop(st.rules.size(), false);
  for (std::size_t r = 0; r < st.rules.size(); ++r) {
    const RuleWindows& rw = st.rules[r];
    const auto rule =
        std::find_if(rules.rules.begin(), rules.rules.end(), [&](const config::Rule& x) { return x.name == rw.rule; });
    if (rule == rules.rules.end() || rule->fingerprint != rw.fingerprint) continue;  // not loaded anyway
    if (std::string p = rule_problem(*rule, rw, index("rules", r)); !p.empty()) {
      std::string q;
      append_json_string(q, rule->name);
      messages.push_back(p + "; rule " + q + " starts fresh");
      drop[r] = true;
    }
  }
  if (messages.empty()) return messages;
  std::vector<RuleWindows> kept;
  for (std::size_t r = 0; r < st.rules.size(); ++r)
    if (!drop[r]) kept.push_back(std::move(st.rules[r]));
  st.rules = std::move(kept);
  return messages;
}

}  // namespace swthrottle::state
