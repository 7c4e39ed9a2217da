// Engine with fleet rules (man page: FLEET): several engines, one per
// "host", decide through one FleetLink. The link here is an in-process model
// of the fleet's windows (the same contract as fleet/request.h, which the
// Redis scripts implement and tests/fleet checks against a real Redis), so
// these tests pin the engine's side: what it asks, and what it writes with
// each answer, and without one (on_unreachable).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "config/rules.h"
#include "engine/engine.h"
#include "engine/fleet_link.h"
#include "match/matcher.h"

namespace {

using swthrottle::config::RuleSet;
using swthrottle::config::Unreachable;
using swthrottle::engine::Engine;
using swthrottle::engine::FleetAnswer;
using swthrottle::engine::FleetLink;
using swthrottle::engine::LineEvent;
using swthrottle::engine::Record;
using swthrottle::engine::RecordType;
using swthrottle::match::Matcher;
using swthrottle::match::MatchResult;

// The fleet's windows, as the scripts keep them: absolute buckets, the
// fleet's newest bucket, and the alert claim.
class ModelFleet final : public FleetLink {
 public:
  explicit ModelFleet(const RuleSet& rules, Unreachable u = Unreachable::Local) : rules_(rules), unreachable_(u) {}

  bool reachable = true;
  int asked = 0;

  bool throttle(uint32_t rule, std::string_view key, int64_t t, int64_t now, FleetAnswer& out) override {
    std::lock_guard lock(mu_);
    if (!answer()) return false;
    Win& w = advance(rule, key, std::max(now, t));
    int64_t b = t / width(rule);
    out.late = b <= w.nb - buckets(rule);
    if (out.late) b = w.nb;
    out.passed = sum(w, 0) < *rules_.rules[rule].threshold;
    if (out.passed) w.counts[b].resize(1), ++w.counts[b][0];
    return true;
  }
  bool alert(uint32_t rule, std::string_view key, int64_t t, int64_t now, uint64_t events, bool claim_too,
             std::span<uint64_t> counts, FleetAnswer& out) override {
    std::lock_guard lock(mu_);
    if (!answer()) return false;
    Win& w = advance(rule, key, std::max(now, t));
    const int64_t b = t / width(rule);
    out.late = b <= w.nb - buckets(rule);
    const std::size_t n = rules_.rules[rule].events.size();
    if (!out.late) {
      w.counts[b].resize(n);
      for (std::size_t e = 0; e < n; ++e)
        if (events >> e & 1) ++w.counts[b][e];
    }
    uint64_t total = 0;
    for (std::size_t e = 0; e < n; ++e) total += counts[e] = sum(w, e);
    if (claim_too && !out.late && total >= *rules_.rules[rule].threshold) claim_locked(rule, w, t, out);
    return true;
  }
  bool claim(uint32_t rule, std::string_view key, int64_t t, FleetAnswer& out) override {
    std::lock_guard lock(mu_);
    if (!answer()) return false;
    claim_locked(rule, windows_[{rule, std::string(key)}], t, out);
    return true;
  }
  bool read(uint32_t rule, std::string_view key, int64_t now, std::span<uint64_t> counts) override {
    std::lock_guard lock(mu_);
    if (!answer()) return false;
    Win& w = advance(rule, key, now);
    for (std::size_t e = 0; e < counts.size(); ++e) counts[e] = sum(w, e);
    return true;
  }
  bool resolve(uint32_t rule, std::string_view key, std::string_view episode, FleetAnswer& out) override {
    std::lock_guard lock(mu_);
    if (!answer()) return false;
    Win& w = windows_[{rule, std::string(key)}];
    out.resolved = !w.episode.empty() && w.episode == episode;
    if (out.resolved) w.episode.clear(), out.suppressed = w.sup;
    return true;
  }
  // Batched, as if every add were flushed at once: the claims wait for
  // take_claims(), as they wait for the App's timer.
  bool add(uint32_t rule, std::string_view key, int64_t t, int64_t now, uint64_t events,
           std::string_view line) override {
    std::array<uint64_t, 64> counts{};
    FleetAnswer a;
    if (!alert(rule, key, t, now, events, true, std::span(counts.data(), rules_.rules[rule].events.size()), a))
      return false;
    if (a.claimed) {
      std::lock_guard lock(mu_);
      swthrottle::engine::FleetClaim c;
      c.rule = rule;
      c.key = std::string(key);
      c.counts = counts;
      c.suppressed = a.suppressed;
      c.episode = a.episode;
      c.line = std::string(line);
      claims_.push_back(std::move(c));
    }
    return true;
  }
  bool lease(uint32_t rule, std::string_view key, int64_t now, FleetAnswer& out) override {
    return throttle(rule, key, now, now, out);
  }
  void raised_locally(uint32_t, std::string_view, int64_t) override { ++raised; }
  int raised = 0;  // alerts raised without the fleet, to be claimed once it answers
  void take_claims(std::vector<swthrottle::engine::FleetClaim>& out) override {
    std::lock_guard lock(mu_);
    for (auto& c : claims_) out.push_back(std::move(c));
    claims_.clear();
  }
  Unreachable on_unreachable() const override { return unreachable_; }

 private:
  struct Win {
    int64_t nb = -1;
    std::map<int64_t, std::vector<uint64_t>> counts;
    bool alerted = false;
    int64_t last = 0;
    std::string episode;
    uint64_t sup = 0;
  };
  bool answer() {
    ++asked;
    return reachable;
  }
  int64_t width(uint32_t r) const { return rules_.rules[r].window_ms / rules_.rules[r].buckets; }
  int64_t buckets(uint32_t r) const { return rules_.rules[r].buckets; }
  Win& advance(uint32_t rule, std::string_view key, int64_t now) {
    Win& w = windows_[{rule, std::string(key)}];
    w.nb = std::max(w.nb, now / width(rule));
    std::erase_if(w.counts, [&](const auto& kv) { return kv.first <= w.nb - buckets(rule); });
    return w;
  }
  static uint64_t sum(const Win& w, std::size_t e) {
    uint64_t s = 0;
    for (const auto& [b, c] : w.counts) s += e < c.size() ? c[e] : 0;
    return s;
  }
  void claim_locked(uint32_t rule, Win& w, int64_t t, FleetAnswer& out) {
    if (!w.alerted || t - w.last >= rules_.rules[rule].cooldown_ms) {
      w.alerted = true;
      w.last = t;
      w.episode = "ep" + std::to_string(++episodes_);
      out.claimed = true;
      out.episode = w.episode;
      out.suppressed = w.sup;
      w.sup = 0;
    } else {
      ++w.sup;
    }
  }

  const RuleSet& rules_;
  Unreachable unreachable_;
  std::mutex mu_;
  std::map<std::pair<uint32_t, std::string>, Win> windows_;
  int episodes_ = 0;
  std::vector<swthrottle::engine::FleetClaim> claims_;
};

// One host's side of the shared model: its own claims, as each host's
// RuleFleet keeps its own.
class HostView final : public FleetLink {
 public:
  explicit HostView(ModelFleet& m) : m_(m) {}
  bool throttle(uint32_t r, std::string_view k, int64_t t, int64_t now, FleetAnswer& out) override {
    return m_.throttle(r, k, t, now, out);
  }
  bool alert(uint32_t r, std::string_view k, int64_t t, int64_t now, uint64_t e, bool c, std::span<uint64_t> counts,
             FleetAnswer& out) override {
    return m_.alert(r, k, t, now, e, c, counts, out);
  }
  bool claim(uint32_t r, std::string_view k, int64_t t, FleetAnswer& out) override { return m_.claim(r, k, t, out); }
  bool read(uint32_t r, std::string_view k, int64_t now, std::span<uint64_t> counts) override {
    return m_.read(r, k, now, counts);
  }
  bool resolve(uint32_t r, std::string_view k, std::string_view ep, FleetAnswer& out) override {
    return m_.resolve(r, k, ep, out);
  }
  bool add(uint32_t r, std::string_view k, int64_t t, int64_t now, uint64_t e, std::string_view line) override {
    if (!m_.add(r, k, t, now, e, line)) return false;
    m_.take_claims(claims_);  // this host's flush claimed them
    return true;
  }
  bool lease(uint32_t r, std::string_view k, int64_t now, FleetAnswer& out) override {
    return m_.lease(r, k, now, out);
  }
  void raised_locally(uint32_t r, std::string_view k, int64_t t) override { m_.raised_locally(r, k, t); }
  void take_claims(std::vector<swthrottle::engine::FleetClaim>& out) override {
    for (auto& c : claims_) out.push_back(std::move(c));
    claims_.clear();
  }
  Unreachable on_unreachable() const override { return m_.on_unreachable(); }

 private:
  ModelFleet& m_;
  std::vector<swthrottle::engine::FleetClaim> claims_;
};

std::unique_ptr<RuleSet> load(const std::string& toml) {
  auto r = swthrottle::config::parse_rules(toml, "rules.toml");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().str()));
  return std::make_unique<RuleSet>(std::move(*r));
}

std::string show(const std::vector<Record>& records) {
  std::string s;
  for (const Record& r : records) {
    switch (r.type) {
      case RecordType::Alert: s += "alert"; break;
      case RecordType::Resolved: s += "resolved"; break;
      case RecordType::Summary: s += "summary"; break;
      case RecordType::Line: s += "line"; break;
    }
    if (r.type != RecordType::Line) s += " key=" + r.key + " suppressed=" + std::to_string(r.suppressed);
    if (r.type == RecordType::Alert || r.type == RecordType::Resolved) s += " count=" + std::to_string(r.count);
    if (r.has_line) s += " |" + std::string(r.line) + "|";
    s += "\n";
  }
  return s;
}

// One host: its own engine and matcher, the shared fleet.
class Host {
 public:
  Host(const RuleSet& rules, ModelFleet& fleet)
      : matcher_(std::move(*Matcher::make(rules))), engine_(rules, {}), view_(fleet) {
    engine_.attach_fleet(&view_);
  }
  std::string offer(const std::string& line, int64_t t) {
    lines_.push_back(std::make_unique<std::string>(line));
    matcher_.match(*lines_.back(), m_);
    engine_.offer(LineEvent{*lines_.back(), true, t}, m_, out_);
    return show(out_);
  }
  std::string tick(int64_t t) {
    engine_.tick(t, out_);
    return show(out_);
  }
  std::string finish() {
    engine_.finish(out_);
    return show(out_);
  }
  // What the App's timer writes for batched rules.
  std::string claimed() {
    engine_.fleet_alerts(claims_, out_);
    return show(out_);
  }
  const Engine& engine() const { return engine_; }

 private:
  Matcher matcher_;
  Engine engine_;
  MatchResult m_;
  std::vector<Record> out_;
  std::vector<std::unique_ptr<std::string>> lines_;
  std::vector<swthrottle::engine::FleetClaim> claims_;
  HostView view_;
};

const std::string kFleet = "[fleet]\nredis = \"unix:/nonexistent\"\n\n";

const std::string kPage = kFleet + R"toml(
[[rule]]
name = "page"
kind = "throttle"
threshold = "3 per 10s"
fleet = "exact"
[[rule.event]]
name = "e"
match = 'ERROR'
)toml";

const std::string kOom = kFleet + R"toml(
[[rule]]
name = "oom"
kind = "alert"
threshold = "4 per 10s"
fleet = "exact"
resolve = true
key = "{svc}"
[[rule.event]]
name = "oom"
match = 'OOM svc=(?P<svc>\w+)'
)toml";

}  // namespace

TEST_CASE("fleet throttle: two hosts pass Y per window between them, not Y each") {
  auto rules = load(kPage);
  ModelFleet fleet(*rules);
  Host a(*rules, fleet), b(*rules, fleet);
  CHECK(a.offer("ERROR 1", 1000) == "line |ERROR 1|\n");
  CHECK(b.offer("ERROR 2", 1100) == "line |ERROR 2|\n");
  CHECK(a.offer("ERROR 3", 1200) == "line |ERROR 3|\n");
  CHECK(b.offer("ERROR 4", 1300).empty());  // the fleet's 4th: suppressed on b
  CHECK(a.offer("ERROR 5", 1400).empty());
  // The window moves past the passes (10 s later): room again, and each host
  // reports what it held back before its next passed line.
  CHECK(b.offer("ERROR 6", 11'500) == "summary key= suppressed=1\nline |ERROR 6|\n");
  CHECK(a.offer("ERROR 7", 11'600) == "summary key= suppressed=1\nline |ERROR 7|\n");
  CHECK(a.engine().rule_stats(0).passed.get() == 3);
  CHECK(b.engine().rule_stats(0).passed.get() == 2);
}

TEST_CASE("fleet alert: fires once across the fleet, on the host whose event reaches Y, and resolves once") {
  auto rules = load(kOom);
  ModelFleet fleet(*rules);
  Host a(*rules, fleet), b(*rules, fleet);
  CHECK(a.offer("OOM svc=api", 1000).empty());
  CHECK(b.offer("OOM svc=api", 1100).empty());
  CHECK(a.offer("OOM svc=db", 1150).empty());  // another key: its own window
  CHECK(b.offer("OOM svc=api", 1200).empty());
  CHECK(a.offer("OOM svc=api", 1300) == "alert key=api suppressed=0 count=4 |OOM svc=api|\n");
  CHECK(b.offer("OOM svc=api", 1400).empty());  // holds, inside the fleet's cooldown: held back
  CHECK(b.engine().rule_stats(0).suppressed.get() == 1);
  CHECK(b.engine().rule_stats(0).alerts.get() == 0);
  // 10 s on, the window is empty: only the host that raised it resolves it.
  CHECK(b.tick(12'000).empty());
  CHECK(a.tick(12'000) == "resolved key=api suppressed=1 count=0\n");
  CHECK(a.tick(13'000).empty());
}

TEST_CASE("fleet alert with `when`: the host that finds it true claims it") {
  auto rules = load(kFleet + R"toml(
[[rule]]
name = "ratio"
kind = "alert"
when = "err >= 2 and ok >= 1"
window = "10s"
fleet = "exact"
[[rule.event]]
name = "err"
match = 'ERR'
[[rule.event]]
name = "ok"
match = 'OK'
)toml");
  ModelFleet fleet(*rules);
  Host a(*rules, fleet), b(*rules, fleet);
  CHECK(a.offer("ERR", 1000).empty());
  CHECK(b.offer("OK", 1100).empty());
  CHECK(b.offer("ERR", 1200) == "alert key= suppressed=0 count=3 |ERR|\n");
  CHECK(a.offer("ERR", 1300).empty());
  CHECK(a.engine().rule_stats(0).suppressed.get() == 1);
}

TEST_CASE("fleet rules without an answer: on_unreachable decides") {
  SUBCASE("local: each host decides on its own window with the same Y") {
    auto rules = load(kPage);
    ModelFleet fleet(*rules, Unreachable::Local);
    Host a(*rules, fleet);
    fleet.reachable = false;
    for (int i = 0; i < 3; ++i) CHECK(a.offer("ERROR", 1000 + i) == "line |ERROR|\n");
    CHECK(a.offer("ERROR", 1010).empty());
    CHECK(a.engine().rule_stats(0).fleet_local.get() == 4);
  }
  SUBCASE("open: every throttled line passes") {
    auto rules = load(kPage);
    ModelFleet fleet(*rules, Unreachable::Open);
    Host a(*rules, fleet);
    fleet.reachable = false;
    for (int i = 0; i < 5; ++i) CHECK(a.offer("ERROR", 1000 + i) == "line |ERROR|\n");
  }
  SUBCASE("closed: every throttled line is suppressed, and reported at the end") {
    auto rules = load(kPage);
    ModelFleet fleet(*rules, Unreachable::Closed);
    Host a(*rules, fleet);
    fleet.reachable = false;
    for (int i = 0; i < 5; ++i) CHECK(a.offer("ERROR", 1000 + i).empty());
    CHECK(a.finish() == "summary key= suppressed=5\n");
  }
  SUBCASE("alerts: local fires on the host's own count; open and closed raise none") {
    for (Unreachable u : {Unreachable::Local, Unreachable::Open, Unreachable::Closed}) {
      auto rules = load(kOom);
      ModelFleet fleet(*rules, u);
      Host a(*rules, fleet);
      fleet.reachable = false;
      std::string out;
      for (int i = 0; i < 4; ++i) out += a.offer("OOM svc=api", 1000 + i);
      CHECK(out == (u == Unreachable::Local ? "alert key=api suppressed=0 count=4 |OOM svc=api|\n" : ""));
      CHECK(fleet.raised == (u == Unreachable::Local ? 1 : 0));
    }
  }
  SUBCASE("the host's own window kept counting while the fleet answered") {
    auto rules = load(kOom);
    ModelFleet fleet(*rules, Unreachable::Local);
    Host a(*rules, fleet);
    for (int i = 0; i < 3; ++i) CHECK(a.offer("OOM svc=api", 1000 + i).empty());
    fleet.reachable = false;  // the 4th decides alone: 4 counts here
    CHECK(a.offer("OOM svc=api", 1003) == "alert key=api suppressed=0 count=4 |OOM svc=api|\n");
  }
}

TEST_CASE("fleet late: an event older than the fleet window is late, even when this host's window is not") {
  auto rules = load(kOom);
  ModelFleet fleet(*rules);
  Host a(*rules, fleet), b(*rules, fleet);
  CHECK(a.offer("OOM svc=api", 30'000).empty());  // a is ahead: the fleet's now is bucket 30
  CHECK(b.offer("OOM svc=api", 5'000).empty());   // b's own window has it; the fleet's does not
  CHECK(b.engine().rule_stats(0).fleet_late.get() == 1);
  CHECK(b.engine().rule_stats(0).late.get() == 1);
  CHECK(b.engine().rule_stats(0).events.get() == 0);
}

TEST_CASE("rules without fleet never ask the fleet") {
  auto rules = load(kFleet + R"toml(
[[rule]]
name = "alone"
kind = "throttle"
threshold = "1 per 10s"
[[rule.event]]
name = "e"
match = 'ERROR'
)toml");
  ModelFleet fleet(*rules);
  Host a(*rules, fleet);
  CHECK(a.offer("ERROR", 1000) == "line |ERROR|\n");
  CHECK(a.offer("ERROR", 1001).empty());
  CHECK(fleet.asked == 0);
}

TEST_CASE("fleet batched alert: the line path only counts, the claimed alert comes through fleet_alerts()") {
  std::string toml = kOom;
  toml.replace(toml.find("fleet = \"exact\""), 15, "fleet = \"batched\"");
  auto rules = load(toml);
  ModelFleet fleet(*rules);
  Host a(*rules, fleet), b(*rules, fleet);
  for (int i = 0; i < 3; ++i) CHECK(a.offer("OOM svc=api", 1000 + i).empty());
  CHECK(b.offer("OOM svc=api", 1100).empty());  // the 4th: claimed by b's flush
  CHECK(a.claimed().empty());
  CHECK(b.claimed() == "alert key=api suppressed=0 count=4 |OOM svc=api|\n");
  CHECK(b.claimed().empty());
  CHECK(b.engine().rule_stats(0).alerts.get() == 1);
  // b owns the episode: it resolves it at a boundary once the window is empty.
  CHECK(a.tick(12'000).empty());
  CHECK(b.tick(12'000) == "resolved key=api suppressed=0 count=0\n");
}

TEST_CASE("fleet batched throttle: passes by lease, Y per window across hosts") {
  std::string toml = kPage;
  toml.replace(toml.find("fleet = \"exact\""), 15, "fleet = \"batched\"");
  auto rules = load(toml);
  ModelFleet fleet(*rules);
  Host a(*rules, fleet), b(*rules, fleet);
  std::string out;
  for (int i = 0; i < 4; ++i) out += a.offer("ERROR", 1000 + i) + b.offer("ERROR", 1000 + i);
  CHECK(out == "line |ERROR|\nline |ERROR|\nline |ERROR|\n");
}
